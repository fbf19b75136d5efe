// SPDX-License-Identifier: Apache-2.0
import Foundation
import SignetServer

extension FuzzTarget {
    /// The gateway's configuration file, as its scanner reads it for positions and syntax errors.
    static let configuration = FuzzTarget(
        "configuration",
        property: "the scanner accepts only JSON that Foundation reads too, and places every key Foundation reads",
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
