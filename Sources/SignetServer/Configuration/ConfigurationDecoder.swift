// SPDX-License-Identifier: Apache-2.0
import Foundation

/// Decodes settings from the scanned document (``JSONValue``) with their own `Decodable`
/// conformances, and remembers which keys each object was asked for: a key of the document that
/// no decoder asked for is a key nothing reads — a misspelling, refused rather than ignored
/// (``firstKeyNotAsked(in:)``). The keys asked at an object are the keys valid there.
///
/// Written here rather than `JSONDecoder`: Foundation's decoder neither says which keys were read
/// nor decodes a tree already parsed, and the configuration is read once, by our scanner, which
/// places every key at its line and column.
final class ConfigurationDecoder {
    /// The keys decoders asked for, by the path of their object (`routes[0]`, `policy`).
    private var asked: [String: Set<String>] = [:]

    func decode<Value: Decodable>(_ type: Value.Type, from value: JSONValue) throws -> Value {
        try TreeDecoder(value: value, codingPath: [], owner: self).decode(type)
    }

    fileprivate func ask(_ key: String, at path: [any CodingKey]) {
        asked[GatewayConfiguration.path(path), default: []].insert(key)
    }

    /// The first key of `document` (depth first, in sorted order) that no decoder asked for, with
    /// the keys valid where it is. A key given `null` counts as absent.
    func firstKeyNotAsked(in document: JSONValue, at path: String = "") -> (key: String, valid: [String])? {
        switch document {
        case .object(let members):
            let valid = asked[path] ?? []
            for (key, value) in members.sorted(by: { $0.key < $1.key }) {
                let at = path.isEmpty ? key : path + "." + key
                guard valid.contains(key) else {
                    // An optional set to null is absent either way; a top-level key is refused
                    // even so (it names no setting at all).
                    if value == .null, !path.isEmpty { continue }
                    return (at, valid.sorted())
                }
                if let found = firstKeyNotAsked(in: value, at: at) { return found }
            }
        case .array(let elements):
            for (index, element) in elements.enumerated() {
                if let found = firstKeyNotAsked(in: element, at: "\(path)[\(index)]") { return found }
            }
        default:
            break
        }
        return nil
    }
}

/// An array index as a coding key.
private struct IndexKey: CodingKey {
    let intValue: Int?
    var stringValue: String { "\(intValue ?? 0)" }
    init(_ index: Int) { intValue = index }
    init?(intValue: Int) { self.intValue = intValue }
    init?(stringValue: String) { nil }
}

private struct TreeDecoder: Decoder {
    let value: JSONValue
    let codingPath: [any CodingKey]
    let owner: ConfigurationDecoder
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard case .object(let members) = value else {
            throw DecodingError.typeMismatch([String: Any].self, .init(codingPath: codingPath, debugDescription: "expected an object"))
        }
        return KeyedDecodingContainer(KeyedContainer<Key>(members: members, codingPath: codingPath, owner: owner))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard case .array(let elements) = value else {
            throw DecodingError.typeMismatch([Any].self, .init(codingPath: codingPath, debugDescription: "expected a list"))
        }
        return UnkeyedContainer(elements: elements, codingPath: codingPath, owner: owner)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer { SingleValue(decoder: self) }

    /// The value as `type`: a string, a switch, a number, a date (RFC 3339), or what the type
    /// decodes itself from.
    func decode<Value: Decodable>(_ type: Value.Type) throws -> Value {
        func mismatch() -> DecodingError {
            .typeMismatch(type, .init(codingPath: codingPath, debugDescription: "expected \(GatewayConfiguration.jsonName(of: type))"))
        }
        if value == .null, !(type is any ExpressibleByNilLiteral.Type) {
            throw DecodingError.valueNotFound(type, .init(codingPath: codingPath, debugDescription: "found null"))
        }
        switch type {
        case is String.Type:
            guard case .string(let text) = value else { throw mismatch() }
            return text as! Value
        case is Bool.Type:
            guard case .bool(let flag) = value else { throw mismatch() }
            return flag as! Value
        case is Date.Type:
            guard case .string(let text) = value, let date = try? Date(text, strategy: .iso8601) else {
                throw DecodingError.dataCorrupted(.init(codingPath: codingPath, debugDescription: "expected a date (RFC 3339)"))
            }
            return date as! Value
        case let number as any ConfigurationNumber.Type:
            guard case .number(let text) = value, let parsed = number.init(configurationText: text) else { throw mismatch() }
            return parsed as! Value
        default:
            return try Value(from: self)
        }
    }
}

/// The numbers settings are: parsed from the document's text, refused when they do not fit.
private protocol ConfigurationNumber {
    init?(configurationText: String)
}

extension ConfigurationNumber where Self: FixedWidthInteger {
    init?(configurationText text: String) {
        if let exact = Self(text) {
            self = exact
        } else if let double = Double(text), let exact = Self(exactly: double) {
            self = exact  // `30.0`, `3e1`: whole numbers written otherwise
        } else {
            return nil
        }
    }
}

// Every number type a setting may have: one missing here would decode itself from this decoder
// again, without end.
extension Int: ConfigurationNumber {}
extension Int8: ConfigurationNumber {}
extension Int16: ConfigurationNumber {}
extension Int32: ConfigurationNumber {}
extension Int64: ConfigurationNumber {}
extension UInt: ConfigurationNumber {}
extension UInt8: ConfigurationNumber {}
extension UInt16: ConfigurationNumber {}
extension UInt32: ConfigurationNumber {}
extension UInt64: ConfigurationNumber {}
extension Float: ConfigurationNumber {
    init?(configurationText text: String) {
        guard let value = Float(text), value.isFinite else { return nil }
        self = value
    }
}
extension Double: ConfigurationNumber {
    init?(configurationText text: String) {
        guard let value = Double(text) else { return nil }
        self = value
    }
}

private struct KeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let members: [(key: String, value: JSONValue)]
    let codingPath: [any CodingKey]
    let owner: ConfigurationDecoder

    var allKeys: [Key] { members.compactMap { Key(stringValue: $0.key) } }

    private func member(_ key: Key) -> JSONValue? {
        owner.ask(key.stringValue, at: codingPath)
        return members.first { $0.key == key.stringValue }?.value
    }

    private func decoder(_ key: Key) throws -> TreeDecoder {
        guard let value = member(key) else {
            throw DecodingError.keyNotFound(key, .init(codingPath: codingPath, debugDescription: "missing"))
        }
        return TreeDecoder(value: value, codingPath: codingPath + [key], owner: owner)
    }

    func contains(_ key: Key) -> Bool { member(key) != nil }

    func decodeNil(forKey key: Key) throws -> Bool { member(key).map { $0 == .null } ?? true }

    func decode<Value: Decodable>(_ type: Value.Type, forKey key: Key) throws -> Value {
        try decoder(key).decode(type)
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
        try decoder(key).container(keyedBy: type)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try decoder(key).unkeyedContainer()
    }

    func superDecoder() throws -> any Decoder { TreeDecoder(value: .object(members), codingPath: codingPath, owner: owner) }

    func superDecoder(forKey key: Key) throws -> any Decoder { try decoder(key) }
}

private struct UnkeyedContainer: UnkeyedDecodingContainer {
    let elements: [JSONValue]
    let codingPath: [any CodingKey]
    let owner: ConfigurationDecoder
    var currentIndex = 0

    init(elements: [JSONValue], codingPath: [any CodingKey], owner: ConfigurationDecoder) {
        self.elements = elements
        self.codingPath = codingPath
        self.owner = owner
    }

    var count: Int? { elements.count }
    var isAtEnd: Bool { currentIndex >= elements.count }

    private mutating func next() throws -> TreeDecoder {
        guard !isAtEnd else {
            throw DecodingError.valueNotFound(Any.self, .init(codingPath: codingPath + [IndexKey(currentIndex)], debugDescription: "the list ends"))
        }
        defer { currentIndex += 1 }
        return TreeDecoder(value: elements[currentIndex], codingPath: codingPath + [IndexKey(currentIndex)], owner: owner)
    }

    mutating func decodeNil() throws -> Bool {
        guard !isAtEnd, elements[currentIndex] == .null else { return false }
        currentIndex += 1
        return true
    }

    mutating func decode<Value: Decodable>(_ type: Value.Type) throws -> Value { try next().decode(type) }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        try next().container(keyedBy: type)
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer { try next().unkeyedContainer() }

    mutating func superDecoder() throws -> any Decoder { try next() }
}

private struct SingleValue: SingleValueDecodingContainer {
    let decoder: TreeDecoder
    var codingPath: [any CodingKey] { decoder.codingPath }

    func decodeNil() -> Bool { decoder.value == .null }

    func decode<Value: Decodable>(_ type: Value.Type) throws -> Value { try decoder.decode(type) }
}
