// SPDX-License-Identifier: Apache-2.0
import Foundation
import SignetServer

extension FuzzTarget {
    /// The gateway's configuration file, as its scanner reads it for positions and syntax errors.
    static let configuration = FuzzTarget(
        "configuration",
        property: "the scanner accepts only JSON that Foundation reads too, reads the same document, and places every key Foundation reads",
        // The docs' sample configuration is in the corpus too, committed once (not a seed: it changes).
        seeds: { _ in
            [
                Array(#"{"routes":[{"path":"/api","access":"signature"}],"store":{"sqlite":"signet.db"},"x":[1.5e3,-0,true,null,"\u00e9"]}"#.utf8)
            ]
        },
        check: { bytes in
            guard let map = try? JSONSourceMap(bytes) else { return }
            let object: Any
            do {
                object = try JSONSerialization.jsonObject(with: Data(bytes), options: .fragmentsAllowed)
            } catch {
                throw PropertyViolation(description: "the scanner accepts \(String(decoding: bytes, as: UTF8.self).debugDescription), Foundation refuses it: \(error)")
            }
            for path in keyPaths(object, at: "") {
                try expect(map.positions[path] != nil, "the key \(path.debugDescription) has no position")
            }
            // The scanner's document is the configuration's only parse: it must be Foundation's.
            if let difference = difference(map.value, object, at: "") {
                throw PropertyViolation(description: "the scanner reads \(difference) otherwise than Foundation")
            }
        }
    )
}

/// The key paths of a JSON value as the configuration's errors name them (`routes[2].access`).
private func keyPaths(_ value: Any, at path: String) -> [String] {
    if let object = value as? [String: Any] {
        return object.flatMap { key, member in
            let keyPath = path.isEmpty ? key : path + "." + key
            return [keyPath] + keyPaths(member, at: keyPath)
        }
    }
    if let array = value as? [Any] {
        return array.enumerated().flatMap { index, member in keyPaths(member, at: "\(path)[\(index)]") }
    }
    return []
}

/// Where the scanner's document and Foundation's differ, if anywhere.
private func difference(_ scanned: JSONValue, _ parsed: Any, at path: String) -> String? {
    switch scanned {
    case .object(let members):
        guard let object = parsed as? [String: Any], object.count == members.count else { return "the object at \(path.debugDescription)" }
        for (key, value) in members {
            guard let other = object[key] else { return "the key \(key.debugDescription) at \(path.debugDescription)" }
            if let found = difference(value, other, at: path.isEmpty ? key : path + "." + key) { return found }
        }
    case .array(let elements):
        guard let array = parsed as? [Any], array.count == elements.count else { return "the list at \(path.debugDescription)" }
        for (index, element) in elements.enumerated() {
            if let found = difference(element, array[index], at: "\(path)[\(index)]") { return found }
        }
    case .string(let text):
        guard parsed as? String == text else { return "the string at \(path.debugDescription)" }
    case .number(let text):
        // Foundation's numbers are NSNumbers, which on Linux also cast to Bool: compare the values.
        // Beyond 2^53 Foundation reads integers through Decimal, a last digit away from the
        // correctly rounded Double that the scanner's text gives.
        guard let number = parsed as? NSNumber, let value = Double(text),
            value == number.doubleValue || abs(value - number.doubleValue) <= 1e-12 * max(abs(value), abs(number.doubleValue))
        else {
            return "the number \(text) at \(path.debugDescription)"
        }
    case .bool(let flag):
        guard parsed as? Bool == flag, !(parsed is String) else { return "the switch at \(path.debugDescription)" }
    case .null:
        guard parsed is NSNull else { return "the null at \(path.debugDescription)" }
    }
    return nil
}
