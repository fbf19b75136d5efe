// SPDX-License-Identifier: Apache-2.0
import Foundation
import SignetCore
import SignetMiddleware

extension GatewayConfiguration {
    /// Encrypted bodies of apps already shipped, read on `legacy-envelope` routes.
    public struct LegacyEnvelope: Codable, Sendable, Equatable {
        public enum Format: String, ConfigurationChoice, Sendable {
            /// `{"mac", "iv", "payload", "version"}`, base64 members (names in `fields`).
            case json
            /// The RNCryptor v3 binary format.
            case rncryptor
        }

        public enum Hash: String, ConfigurationChoice, Sendable {
            case sha1, sha256, sha512
        }

        /// The JSON members' names; `version: ""` for envelopes that name no version.
        public struct Fields: Codable, Sendable, Equatable {
            public var mac: String?
            public var iv: String?
            public var payload: String?
            public var version: String?
        }

        /// One key version: 64 bytes of secret (encryption key, then MAC key), or a password with
        /// its two salts, derived once at start.
        public struct Key: Codable, Sendable, Equatable {
            public var version: String
            public var secretBase64: String?
            public var password: String?
            public var encryptionSaltBase64: String?
            public var macSaltBase64: String?
            /// PBKDF2 rounds (RNCryptor's 10,000 when not given).
            public var iterations: Int?
            /// PBKDF2's hash (RNCryptor's SHA-1 when not given).
            public var hash: Hash?

            public init(version: String, secretBase64: String) {
                self.version = version
                self.secretBase64 = secretBase64
            }

            public init(version: String, password: String, encryptionSaltBase64: String, macSaltBase64: String, iterations: Int? = nil, hash: Hash? = nil) {
                self.version = version
                self.password = password
                self.encryptionSaltBase64 = encryptionSaltBase64
                self.macSaltBase64 = macSaltBase64
                self.iterations = iterations
                self.hash = hash
            }
        }

        public var format: Format
        public var fields: Fields?
        public var keys: [Key]
        /// The `Content-Type` the upstream receives the plaintext with (`application/json` when not given).
        public var plaintextContentType: String?
        var plaintextType: String { plaintextContentType ?? "application/json" }

        public init(format: Format, keys: [Key]) {
            self.format = format
            self.keys = keys
        }
    }
}

extension GatewayConfiguration.LegacyEnvelope {
    /// The configured keys, passwords derived now (PBKDF2 is slow on purpose: once, never per request).
    public func envelopeKeys() throws -> [EnvelopeKey] {
        guard !keys.isEmpty else { throw ConfigurationError.invalid("legacyEnvelope.keys", "legacyEnvelope.keys: give at least one key") }
        return try keys.enumerated().map { index, key in
            let at = "legacyEnvelope.keys[\(index)]"
            if let secret = key.secretBase64 {
                guard key.password == nil, let bytes = Base64.decode(secret), bytes.count == 64 else {
                    throw ConfigurationError.invalid("\(at).secretBase64", "\(at).secretBase64: 64 bytes (encryption key, then MAC key), and no password beside it")
                }
                return try EnvelopeKey(version: key.version, encryptionKey: Array(bytes[..<32]), macKey: Array(bytes[32...]))
            }
            guard let password = key.password, let encryptionSalt = key.encryptionSaltBase64.flatMap(Base64.decode),
                let macSalt = key.macSaltBase64.flatMap(Base64.decode), !encryptionSalt.isEmpty, !macSalt.isEmpty
            else {
                throw ConfigurationError.invalid("\(at)", "\(at): secretBase64, or password with encryptionSaltBase64 and macSaltBase64")
            }
            let hash: EnvelopeKey.PBKDF2Hash =
                switch key.hash ?? .sha1 {
                case .sha1: .sha1
                case .sha256: .sha256
                case .sha512: .sha512
                }
            guard (1...10_000_000).contains(key.iterations ?? RNCryptorV3.rounds) else {
                throw ConfigurationError.invalid("\(at).iterations", "\(at).iterations: 1 to 10,000,000")
            }
            return try EnvelopeKey.derive(
                version: key.version,
                password: Array(password.utf8),
                encryptionSalt: encryptionSalt,
                macSalt: macSalt,
                rounds: key.iterations ?? RNCryptorV3.rounds,
                hash: hash
            )
        }
    }

    /// The JSON member names, defaults for those not given.
    public var fieldNames: JSONEnvelope.FieldNames {
        let version = fields?.version ?? "version"
        return JSONEnvelope.FieldNames(
            mac: fields?.mac ?? "mac",
            iv: fields?.iv ?? "iv",
            payload: fields?.payload ?? "payload",
            version: version.isEmpty ? nil : version
        )
    }
}
