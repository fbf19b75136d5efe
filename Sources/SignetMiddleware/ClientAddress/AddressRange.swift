// SPDX-License-Identifier: Apache-2.0
import SignetCore

/// An address block in CIDR notation (`10.0.0.0/8`, `2001:db8::/32`), or one address.
public struct AddressRange: Sendable, Hashable, CustomStringConvertible {
    public let network: IPAddress
    public let prefixLength: Int

    /// - Throws: `malformed_message` for text that is not an address or `address/length`, or host
    ///   bits set past the prefix (`10.0.0.1/8` is refused: it is usually a typo for something else).
    public init(parsing text: String) throws {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard (1...2).contains(parts.count), let address = IPAddress(parts[0]) else {
            throw SignetError(.malformedMessage, "\(text.debugDescription) is not an address or an address/prefix-length")
        }
        let bits = address.bytes.count * 8
        let length: Int
        if parts.count == 2 {
            guard let given = Int(parts[1]), (0...bits).contains(given), parts[1].allSatisfy(\.isNumber) else {
                throw SignetError(.malformedMessage, "\(text.debugDescription) has a prefix length outside 0...\(bits)")
            }
            length = given
        } else {
            length = bits
        }
        guard Self.masked(address.bytes, to: length) == address.bytes else {
            throw SignetError(.malformedMessage, "\(text.debugDescription) has bits set past its /\(length)")
        }
        network = address
        prefixLength = length
    }

    /// Whether `address` lies in the block (an IPv4-mapped IPv6 address is read as its IPv4 one).
    public func contains(_ address: IPAddress) -> Bool {
        let address = network.isIPv4 ? (address.ipv4Mapped ?? address) : address
        guard address.bytes.count == network.bytes.count else { return false }
        return Self.masked(address.bytes, to: prefixLength) == network.bytes
    }

    public var description: String { "\(network)/\(prefixLength)" }

    private static func masked(_ bytes: [UInt8], to length: Int) -> [UInt8] {
        bytes.enumerated().map { index, byte in
            let kept = max(0, min(8, length - index * 8))
            return kept == 8 ? byte : byte & ~(UInt8(0xFF) >> kept)
        }
    }
}
