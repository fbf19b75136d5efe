// SPDX-License-Identifier: Apache-2.0
import Crypto
import Foundation
import SignetCore
import SignetMiddleware

extension GatewayConfiguration.Tokens {
    /// The key ring from the key files: the signing and next keys created when absent and
    /// `mayCreate` allows it, retired ones read (a missing retired key is an error: tokens it signed
    /// could not be checked).
    func keyRing(mayCreate: (String) -> Bool = { _ in true }) throws -> AppTokenKeyRing {
        let signing = try Self.privateKey(keyFile, create: mayCreate(keyFile), at: "tokens.keyFile")
        let next = try nextKeyFile.map { try Self.privateKey($0, create: mayCreate($0), at: "tokens.nextKeyFile").publicKey }
        let retired = try (retiredKeys ?? []).enumerated().map { index, retired in
            (
                try Self.privateKey(retired.keyFile, create: false, at: "tokens.retiredKeys[\(index)].keyFile").publicKey,
                // A minute for clocks: the verifier allows that much past `exp`.
                until: retired.retiredAt.addingTimeInterval(TimeInterval(lifetime) + 60)
            )
        }
        return AppTokenKeyRing(signingKey: signing, next: next, retired: retired)
    }

    /// The P-256 key in `path`, which the configuration names at `key`.
    private static func privateKey(_ path: String, create: Bool, at key: String) throws -> P256.Signing.PrivateKey {
        let text = try PrivateKeyFile.loadOrCreate(path, what: "the token key", at: key, create: create) {
            P256.Signing.PrivateKey().pemRepresentation
        }
        let parsed: SigningKey
        do {
            parsed = try SigningKey(text: text)
        } catch let error as SignetError {
            throw ConfigurationError(.file, at: key, "\(key): \(path): \(error.reason)")
        }
        guard let privateKey = parsed.p256PrivateKey else {
            throw ConfigurationError.invalid(key, "\(key): the token key \(path) is not P-256")
        }
        return privateKey
    }
}
