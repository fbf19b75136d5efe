// SPDX-License-Identifier: Apache-2.0
import Foundation
import SignetCore

/// A user who logs in with a password: never the password itself, only what checks it.
public struct AccountRecord: Sendable, Hashable {
    /// What RFC 7616 keeps per Digest algorithm: `HA1 = H(user:realm:password)` and the
    /// `userhash = H(user:realm)` a client may send instead of the name.
    public struct DigestSecret: Sendable, Hashable {
        public var ha1: String
        public var userhash: String

        public init(ha1: String, userhash: String) {
            self.ha1 = ha1
            self.userhash = userhash
        }
    }

    public var name: String
    /// The realm the Digest values were computed in; they stop matching if the realm changes.
    public var realm: String
    /// The PBKDF2 PHC string (`PasswordHash`) for Basic; `nil` when Basic was off.
    public var basicHash: String?
    /// One entry per Digest algorithm enabled when the password was set.
    public var digests: [DigestAlgorithm: DigestSecret]
    public var createdAt: Date
    public var updatedAt: Date

    public init(
        name: String,
        realm: String,
        basicHash: String?,
        digests: [DigestAlgorithm: DigestSecret],
        createdAt: Date,
        updatedAt: Date
    ) {
        self.name = name
        self.realm = realm
        self.basicHash = basicHash
        self.digests = digests
        self.createdAt = createdAt
        self.updatedAt = updatedAt
    }

    /// The record for `password`: a PBKDF2 hash for Basic when `basicIterations` is given, and the
    /// Digest values for each of `algorithms`. Slow when Basic is on (PBKDF2): not on an event loop.
    public static func make(
        name: String,
        password: String,
        realm: String,
        algorithms: [DigestAlgorithm],
        basicIterations: Int?,
        now: Date
    ) throws -> AccountRecord {
        try AccountName.validate(name)
        try AccountName.validatePassword(password)
        var digests: [DigestAlgorithm: DigestSecret] = [:]
        for algorithm in algorithms {
            digests[algorithm] = DigestSecret(
                ha1: DigestResponse.ha1(username: name, realm: realm, password: password, algorithm: algorithm),
                userhash: DigestResponse.userhash(username: name, realm: realm, algorithm: algorithm)
            )
        }
        return AccountRecord(
            name: name,
            realm: realm,
            basicHash: try basicIterations.map { try PasswordHash(password: password, iterations: $0).description },
            digests: digests,
            createdAt: now,
            updatedAt: now
        )
    }
}

extension DigestAlgorithm {
    /// The suffix of an algorithm's columns in the SQL stores (`ha1_sha256`, `userhash_sha256`).
    package var columnSuffix: String {
        switch self {
        case .sha256: "sha256"
        case .sha512_256: "sha512_256"
        case .md5: "md5"
        }
    }
}
