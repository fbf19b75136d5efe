// SPDX-License-Identifier: Apache-2.0
import SignetCore

/// A CBOR data item (RFC 8949), the subset App Attest uses: integers, byte and text strings,
/// arrays, maps, tags, booleans and null. Definite lengths only.
public indirect enum CBORValue: Sendable, Hashable {
    case unsigned(UInt64)
    /// The value is `-1 - n`.
    case negative(UInt64)
    case bytes([UInt8])
    case text(String)
    case array([CBORValue])
    case map([(key: CBORValue, value: CBORValue)])
    case tagged(UInt64, CBORValue)
    case bool(Bool)
    case null

    public static func == (lhs: CBORValue, rhs: CBORValue) -> Bool {
        switch (lhs, rhs) {
        case (.unsigned(let a), .unsigned(let b)), (.negative(let a), .negative(let b)): a == b
        case (.bytes(let a), .bytes(let b)): a == b
        case (.text(let a), .text(let b)): a == b
        case (.array(let a), .array(let b)): a == b
        case (.map(let a), .map(let b)): a.elementsEqual(b) { $0.key == $1.key && $0.value == $1.value }
        case (.tagged(let t, let a), .tagged(let u, let b)): t == u && a == b
        case (.bool(let a), .bool(let b)): a == b
        case (.null, .null): true
        default: false
        }
    }

    public func hash(into hasher: inout Hasher) {
        switch self {
        case .unsigned(let v): hasher.combine(0); hasher.combine(v)
        case .negative(let v): hasher.combine(1); hasher.combine(v)
        case .bytes(let v): hasher.combine(v)
        case .text(let v): hasher.combine(v)
        case .array(let v): hasher.combine(v)
        case .map(let v): for (k, x) in v { hasher.combine(k); hasher.combine(x) }
        case .tagged(let t, let v): hasher.combine(t); hasher.combine(v)
        case .bool(let v): hasher.combine(v)
        case .null: hasher.combine(9)
        }
    }

    /// The value for a text key in a map.
    public subscript(text key: String) -> CBORValue? {
        guard case .map(let entries) = self else { return nil }
        return entries.first { $0.key == .text(key) }?.value
    }

    /// The value for an integer key in a map (COSE keys use them).
    public subscript(int key: Int) -> CBORValue? {
        guard case .map(let entries) = self else { return nil }
        let wanted: CBORValue = key >= 0 ? .unsigned(UInt64(key)) : .negative(UInt64(-1 - key))
        return entries.first { $0.key == wanted }?.value
    }

    public var bytes: [UInt8]? {
        if case .bytes(let value) = self { return value }
        return nil
    }
}

/// A strict, bounded CBOR decoder: definite lengths only, lengths checked against the bytes left
/// before anything is allocated, nesting and item counts capped. It never traps on any input.
public struct CBORDecoder {
    public var maximumDepth = 8
    public var maximumItems = 4096

    public init() {}

    /// Decodes exactly one item; trailing bytes are an error.
    public func decode(_ bytes: [UInt8]) throws -> CBORValue {
        var reader = Reader(bytes: bytes, limits: self)
        let value = try reader.item(depth: 0)
        guard reader.position == bytes.count else { throw Self.fail("\(bytes.count - reader.position) trailing bytes") }
        return value
    }

    /// Decodes one item from the front of `bytes` and says how many bytes it took.
    public func decodePrefix(_ bytes: ArraySlice<UInt8>) throws -> (value: CBORValue, length: Int) {
        var reader = Reader(bytes: Array(bytes), limits: self)
        let value = try reader.item(depth: 0)
        return (value, reader.position)
    }

    static func fail(_ reason: String) -> SignetError {
        SignetError(.malformedCBOR, "CBOR: \(reason)")
    }

    private struct Reader {
        let bytes: [UInt8]
        let limits: CBORDecoder
        var position = 0
        var items = 0

        mutating func byte() throws -> UInt8 {
            guard position < bytes.count else { throw CBORDecoder.fail("unexpected end") }
            defer { position += 1 }
            return bytes[position]
        }

        mutating func take(_ count: UInt64) throws -> ArraySlice<UInt8> {
            guard count <= UInt64(bytes.count - position) else {
                throw CBORDecoder.fail("length \(count) exceeds the input")
            }
            defer { position += Int(count) }
            return bytes[position..<(position + Int(count))]
        }

        mutating func argument(_ info: UInt8) throws -> UInt64 {
            switch info {
            case 0..<24: return UInt64(info)
            case 24: return UInt64(try byte())
            case 25, 26, 27:
                let size = 1 << (info - 24)
                var value: UInt64 = 0
                for byte in try take(UInt64(size)) { value = value << 8 | UInt64(byte) }
                return value
            default: throw CBORDecoder.fail("indefinite or reserved length")
            }
        }

        mutating func item(depth: Int) throws -> CBORValue {
            guard depth <= limits.maximumDepth else {
                throw CBORDecoder.fail("nested deeper than \(limits.maximumDepth)")
            }
            items += 1
            guard items <= limits.maximumItems else { throw CBORDecoder.fail("more than \(limits.maximumItems) items") }
            let initial = try byte()
            let major = initial >> 5
            let info = initial & 0x1F
            switch major {
            case 0: return .unsigned(try argument(info))
            case 1: return .negative(try argument(info))
            case 2: return .bytes(Array(try take(try argument(info))))
            case 3:
                guard let text = String(strictUTF8: try take(try argument(info))) else {
                    throw CBORDecoder.fail("text is not UTF-8")
                }
                return .text(text)
            case 4:
                let count = try argument(info)
                // Each element takes at least one byte: a count beyond the input is a lie.
                guard count <= UInt64(bytes.count - position) else {
                    throw CBORDecoder.fail("array longer than the input")
                }
                var elements: [CBORValue] = []
                for _ in 0..<count { elements.append(try item(depth: depth + 1)) }
                return .array(elements)
            case 5:
                let count = try argument(info)
                guard count <= UInt64(bytes.count - position) / 2 else {
                    throw CBORDecoder.fail("map longer than the input")
                }
                var entries: [(key: CBORValue, value: CBORValue)] = []
                // A set: a search of the entries for each key was quadratic in a map of 2,048 keys.
                var keys = Set<CBORValue>()
                for _ in 0..<count {
                    let key = try item(depth: depth + 1)
                    guard keys.insert(key).inserted else {
                        throw CBORDecoder.fail("duplicate map key")
                    }
                    entries.append((key, try item(depth: depth + 1)))
                }
                return .map(entries)
            case 6: return .tagged(try argument(info), try item(depth: depth + 1))
            default:
                switch info {
                case 20: return .bool(false)
                case 21: return .bool(true)
                case 22: return .null
                default: throw CBORDecoder.fail("unsupported simple value or float \(info)")
                }
            }
        }
    }
}
