// SPDX-License-Identifier: Apache-2.0
import Crypto
import Foundation
import SignetCore
import SignetMiddleware

extension GatewayConfiguration.Tokens {
    /// The key ring from the key files: the signing and next keys created when absent, retired
    /// ones read (a missing retired key is an error: tokens it signed could not be checked).
    func keyRing() throws -> AppTokenKeyRing {
        let signing = try Self.privateKey(keyFile, create: true)
        let next = try nextKeyFile.map { try Self.privateKey($0, create: true).publicKey }
        let retired = try (retiredKeys ?? []).map { retired in
            (
                try Self.privateKey(retired.keyFile, create: false).publicKey,
                // A minute for clocks: the verifier allows that much past `exp`.
                until: retired.retiredAt.addingTimeInterval(TimeInterval(lifetime) + 60)
            )
        }
        return AppTokenKeyRing(signingKey: signing, next: next, retired: retired)
    }

    private static func privateKey(_ path: String, create: Bool) throws -> P256.Signing.PrivateKey {
        let text: String
        if create {
            text = try PrivateKeyFile.loadOrCreate(path, what: "the token signing key") {
                P256.Signing.PrivateKey().pemRepresentation
            }
        } else {
            guard let data = FileManager.default.contents(atPath: path) else {
                throw SignetError(.invalidKey, "cannot read the retired token key \(path)")
            }
            text = String(decoding: data, as: UTF8.self)
        }
        guard let key = try SigningKey(text: text).p256PrivateKey else {
            throw SignetError(.invalidKey, "the token key \(path) is not P-256")
        }
        return key
    }
}
