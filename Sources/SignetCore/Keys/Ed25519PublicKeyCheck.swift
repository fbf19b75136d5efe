// SPDX-License-Identifier: Apache-2.0

/// Refuses Ed25519 public keys that need no private key: points of small order and non-canonical
/// encodings (RFC 8032 §5.1.3 decoding, as strict verifiers apply it).
///
/// A small-order point `A` (the identity among them) makes `[8][S]B = [8]R + [8][k]A` hold for a
/// constant `(R, S)` whatever the message, so a "device key" registered as such a point verifies
/// one forged signature for every request. BoringSSL's `ED25519_verify` does not refuse them.
enum Ed25519PublicKeyCheck {
    /// The `y` coordinates (little-endian, sign bit clear) of the eight small-order points: 0 (order
    /// 4), 1 (the identity), the two of order 8, and p − 1 (order 2). The sign bit selects ±x, which
    /// for these points is again of small order, so it is masked before comparing. Computed from the
    /// curve equation; the same list as libsodium's `ge25519_has_small_order`.
    private static let smallOrderY: [[UInt8]] = [
        [UInt8](repeating: 0, count: 32),
        [0x01] + [UInt8](repeating: 0, count: 31),
        [
            0x26, 0xe8, 0x95, 0x8f, 0xc2, 0xb2, 0x27, 0xb0, 0x45, 0xc3, 0xf4, 0x89, 0xf2, 0xef, 0x98, 0xf0,
            0xd5, 0xdf, 0xac, 0x05, 0xd3, 0xc6, 0x33, 0x39, 0xb1, 0x38, 0x02, 0x88, 0x6d, 0x53, 0xfc, 0x05,
        ],
        [
            0xc7, 0x17, 0x6a, 0x70, 0x3d, 0x4d, 0xd8, 0x4f, 0xba, 0x3c, 0x0b, 0x76, 0x0d, 0x10, 0x67, 0x0f,
            0x2a, 0x20, 0x53, 0xfa, 0x2c, 0x39, 0xcc, 0xc6, 0x4e, 0xc7, 0xfd, 0x77, 0x92, 0xac, 0x03, 0x7a,
        ],
        [0xec] + [UInt8](repeating: 0xff, count: 30) + [0x7f],
    ]

    /// Throws `invalid_key` unless `raw` is a canonical 32-byte encoding of a point of large order.
    static func check(_ raw: [UInt8]) throws {
        guard raw.count == 32 else {
            throw SignetError(.invalidKey, "an Ed25519 public key is 32 bytes, not \(raw.count)")
        }
        var y = raw
        y[31] &= 0x7f
        // y ≥ p = 2^255 − 19: bytes 1…30 are 0xff, the top byte 0x7f and the lowest ≥ 0xed.
        if y[0] >= 0xed, y[31] == 0x7f, y[1...30].allSatisfy({ $0 == 0xff }) {
            throw SignetError(.invalidKey, "the Ed25519 public key is not canonically encoded")
        }
        if smallOrderY.contains(y) {
            throw SignetError(.invalidKey, "the Ed25519 public key is a point of small order")
        }
    }
}
