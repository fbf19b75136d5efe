// SPDX-License-Identifier: Apache-2.0
import Foundation
import SignetCore
import SignetMiddleware

extension GatewayConfiguration {
    /// Oblivious HTTP (RFC 9458): requests encrypted to the gateway's HPKE keys, sent straight to it.
    public struct OHTTP: Codable, Sendable, Equatable {
        public enum KEM: String, ConfigurationChoice, Sendable {
            case x25519, p256
        }

        /// One HPKE key: current, next or retiring, by its window.
        public struct Key: Codable, Sendable, Equatable {
            /// 0 to 255; never reused within the replay window of an earlier key with the same id.
            public var keyId: Int
            /// PEM (PKCS #8) of an X25519 or P-256 private key; created when absent, with `kem`.
            public var keyFile: String
            /// The KEM of a key created on first start; a key read from a file has its own.
            public var kem: KEM?
            /// Not served nor accepted before this time.
            public var notBefore: Date?
            /// Not served nor accepted after this time.
            public var notAfter: Date?

            public init(keyId: Int, keyFile: String, kem: KEM? = nil, notBefore: Date? = nil, notAfter: Date? = nil) {
                self.keyId = keyId
                self.keyFile = keyFile
                self.kem = kem
                self.notBefore = notBefore
                self.notAfter = notAfter
            }
        }

        public var keys: [Key]
        /// How long an encapsulated key is remembered, so the same encapsulation is refused again
        /// (300 s when not given).
        public var replayWindowSeconds: Int?
        /// Requests per client address per minute that fail to decapsulate before `rate_limited`
        /// (30 when not given).
        public var decapsulationFailuresPerSourcePerMinute: Int?

        /// Encapsulated requests per client address per minute (600 when not given): anyone with the
        /// public key can make ones that open, and each is remembered for the replay window.
        public var requestsPerSourcePerMinute: Int?

        var replayWindow: Int { replayWindowSeconds ?? 300 }
        var failuresPerMinute: Int { decapsulationFailuresPerSourcePerMinute ?? 30 }
        var requestsPerMinute: Int { requestsPerSourcePerMinute ?? 600 }

        public init(keys: [Key]) {
            self.keys = keys
        }
    }
}

extension GatewayConfiguration.OHTTP {
    /// Key ids in range, windows in order, and no id reused while a client may still hold the
    /// earlier key's configuration or its encapsulations may still be replayed.
    func validate() throws {
        guard !keys.isEmpty else { throw ConfigurationError.invalid("ohttp.keys", "ohttp.keys: give at least one key") }
        guard replayWindow > 0, failuresPerMinute > 0, requestsPerMinute > 0 else {
            throw ConfigurationError.invalid("ohttp", "ohttp: replayWindowSeconds, decapsulationFailuresPerSourcePerMinute and requestsPerSourcePerMinute are positive")
        }
        for (index, key) in keys.enumerated() {
            guard (0...255).contains(key.keyId) else {
                throw ConfigurationError.invalid("ohttp.keys[\(index)].keyId", "ohttp.keys[\(index)].keyId: \(key.keyId) is not 0 to 255")
            }
            if let notBefore = key.notBefore, let notAfter = key.notAfter, notAfter <= notBefore {
                throw ConfigurationError.invalid("ohttp.keys[\(index)]", "ohttp.keys[\(index)]: notAfter is not after notBefore")
            }
            for (otherIndex, other) in keys.enumerated() where otherIndex < index && other.keyId == key.keyId {
                let window = TimeInterval(replayWindow)
                let apart =
                    other.notAfter.map { end in key.notBefore.map { end.addingTimeInterval(window) <= $0 } ?? false } ?? false
                    || key.notAfter.map { end in other.notBefore.map { end.addingTimeInterval(window) <= $0 } ?? false } ?? false
                guard apart else {
                    throw ConfigurationError.invalid("ohttp.keys[\(index)].keyId", "ohttp.keys[\(index)].keyId: \(key.keyId) is also ohttp.keys[\(otherIndex)]'s, and their windows are not \(replayWindow) s apart")
                }
            }
        }
    }
}
