// SPDX-License-Identifier: Apache-2.0
import Crypto

/// An HMAC secret with its keyed hash states computed once.
///
/// HMAC hashes the padded key into an inner and an outer state for every message; keeping those
/// states lets each verification start from them (RFC 2104 §4 suggests exactly this).
struct SharedSecret: Sendable {
    let key: SymmetricKey
    let hmacSHA256: HMAC<SHA256>

    init(_ key: SymmetricKey) {
        self.key = key
        self.hmacSHA256 = HMAC<SHA256>(key: key)
    }

    func authenticationCode(for message: [UInt8]) -> [UInt8] {
        var mac = hmacSHA256
        mac.update(data: message)
        return Array(mac.finalize())
    }
}
