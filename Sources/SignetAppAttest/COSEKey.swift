// SPDX-License-Identifier: Apache-2.0
import SignetCore

/// COSE keys (RFC 9053): App Attest sends EC2 P-256 keys.
enum COSEKey {
    /// The 65-byte uncompressed point of an EC2 P-256 COSE key.
    static func p256Point(_ key: CBORValue) throws -> [UInt8] {
        guard key[int: 1] == .unsigned(2), key[int: -1] == .unsigned(1),
            let x = key[int: -2]?.bytes, let y = key[int: -3]?.bytes, x.count == 32, y.count == 32
        else { throw SignetError(.malformedCBOR, "the COSE key is not an EC2 P-256 key") }
        if let algorithm = key[int: 3], algorithm != .negative(6) {
            throw SignetError(.malformedCBOR, "the COSE key is not for ES256")
        }
        return [0x04] + x + y
    }
}
