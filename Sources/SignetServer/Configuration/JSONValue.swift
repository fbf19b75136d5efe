// SPDX-License-Identifier: Apache-2.0

/// A JSON document as ``JSONSourceMap`` scanned it: the one parse of a configuration file, which
/// ``ConfigurationDecoder`` then decodes. Objects keep their members in the order written (a key
/// appears once: the scan refuses duplicates); numbers keep their text, read as the type a
/// setting asks for.
package enum JSONValue: Sendable, Equatable {
    case object([(key: String, value: JSONValue)])
    case array([JSONValue])
    case string(String)
    case number(String)
    case bool(Bool)
    case null

    package static func == (a: JSONValue, b: JSONValue) -> Bool {
        switch (a, b) {
        case (.object(let a), .object(let b)): a.count == b.count && zip(a, b).allSatisfy { $0.key == $1.key && $0.value == $1.value }
        case (.array(let a), .array(let b)): a == b
        case (.string(let a), .string(let b)): a == b
        case (.number(let a), .number(let b)): a == b
        case (.bool(let a), .bool(let b)): a == b
        case (.null, .null): true
        default: false
        }
    }

    /// The member `key` of an object.
    package subscript(key: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        return members.first { $0.key == key }?.value
    }

    /// `given` over `self` (the defaults): objects merge member by member, except the keys in
    /// `replacing` (whose value is one of several shapes); anything else replaces.
    func merging(_ given: JSONValue, replacing: Set<String> = []) -> JSONValue {
        guard case .object(var members) = self, case .object(let overrides) = given else { return given }
        for (key, value) in overrides {
            if let index = members.firstIndex(where: { $0.key == key }) {
                members[index].value = replacing.contains(key) ? value : members[index].value.merging(value)
            } else {
                members.append((key, value))
            }
        }
        return .object(members)
    }
}
