// SPDX-License-Identifier: Apache-2.0
import Foundation
import SignetCore
import X509

/// Google's attestation revocation list: the `entries` JSON served at
/// `https://android.googleapis.com/attestation/status`, keyed by certificate serial number (hex,
/// as Google lists most, or decimal), each `REVOKED` or `SUSPENDED` with a reason. A certificate
/// listed in either state anywhere in a chain refuses it.
public struct AttestationStatusList: Sendable, Equatable {
    public struct Entry: Sendable, Equatable {
        public var status: String
        public var reason: String?

        public init(status: String, reason: String? = nil) {
            self.status = status
            self.reason = reason
        }
    }

    /// By serial, lowercase hex without leading zeros, or decimal as given.
    public var entries: [String: Entry]

    /// The largest list read.
    public static let maximumBytes = 8 << 20

    public init(entries: [String: Entry] = [:]) {
        self.entries = entries
    }

    /// Reads the JSON document; its size is bounded (Google's list is some tens of kilobytes).
    public init(json bytes: [UInt8]) throws {
        guard bytes.count <= Self.maximumBytes else { throw SignetError(.attestationChainInvalid, "the status list is over 8 MiB") }
        guard let object = try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any],
            let entries = object["entries"] as? [String: Any]
        else { throw SignetError(.attestationChainInvalid, "the status list is not {\"entries\": {…}}") }
        var read: [String: Entry] = [:]
        for (serial, value) in entries {
            guard let fields = value as? [String: Any], let status = fields["status"] as? String else { continue }
            read[Self.normalised(serial)] = Entry(status: status.uppercased(), reason: fields["reason"] as? String)
        }
        self.entries = read
    }

    /// The entry for `certificate`, looked up by its serial in hex and in decimal.
    public func entry(for certificate: Certificate) -> Entry? {
        let bytes = Array(certificate.serialNumber.bytes)
        return entries[Self.hex(bytes)] ?? entries[Self.decimal(bytes)]
    }

    package static func normalised(_ serial: String) -> String {
        let lower = serial.lowercased()
        // Decimal keys stay as they are; hex loses its leading zeros.
        guard lower.contains(where: { !$0.isNumber }) || lower.hasPrefix("0") else { return lower }
        let trimmed = lower.drop { $0 == "0" }
        return trimmed.isEmpty ? "0" : String(trimmed)
    }

    package static func hex(_ bytes: [UInt8]) -> String {
        let text = bytes.map { String(format: "%02x", $0) }.joined().drop { $0 == "0" }
        return text.isEmpty ? "0" : String(text)
    }

    /// The unsigned big-endian integer in decimal (serials run to 20 bytes).
    package static func decimal(_ bytes: [UInt8]) -> String {
        var number = bytes.drop { $0 == 0 }.map { Int($0) }
        var digits: [Character] = []
        while !number.isEmpty {
            var remainder = 0
            var quotient: [Int] = []
            for byte in number {
                let value = remainder * 256 + byte
                let digit = value / 10
                remainder = value % 10
                if !quotient.isEmpty || digit != 0 { quotient.append(digit) }
            }
            digits.append(Character(String(remainder)))
            number = quotient
        }
        return digits.isEmpty ? "0" : String(digits.reversed())
    }
}
