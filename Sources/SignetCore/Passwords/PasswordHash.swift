// SPDX-License-Identifier: Apache-2.0
import Crypto
import _CryptoExtras

/// A stored password for Basic login: PBKDF2-HMAC-SHA256 (swift-crypto's, BoringSSL underneath)
/// written as a PHC string, `$pbkdf2-sha256$i=600000$<salt>$<hash>` (unpadded base64), so the
/// cost can rise later without invalidating what is stored.
///
/// - Important: Deriving is slow on purpose (about 0.1–0.3 s at the default cost): never on an
///   event loop, and never more often than the caller's limits allow.
public struct PasswordHash: Sendable, Hashable, CustomStringConvertible {
    /// OWASP's 2023 figure for PBKDF2-HMAC-SHA256.
    public static let defaultIterations = 600_000
    /// swift-crypto refuses fewer rounds than this.
    public static let minimumIterations = 210_000
    public static let maximumIterations = 10_000_000

    public let iterations: Int
    public let salt: [UInt8]
    public let hash: [UInt8]

    /// Derives the hash of `password` with a new random salt (16 bytes).
    public init(password: String, iterations: Int = defaultIterations) throws {
        var generator = SystemRandomNumberGenerator()
        let salt = (0..<16).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        try self.init(password: password, salt: salt, iterations: iterations)
    }

    public init(password: String, salt: [UInt8], iterations: Int) throws {
        guard (Self.minimumIterations...Self.maximumIterations).contains(iterations) else {
            throw SignetError(.invalidKey, "PBKDF2 iterations are \(Self.minimumIterations) to \(Self.maximumIterations)")
        }
        self.iterations = iterations
        self.salt = salt
        self.hash = try Self.derive(password, salt: salt, iterations: iterations)
    }

    /// Reads a stored PHC string.
    ///
    /// - Throws: `invalid_key` for anything but `$pbkdf2-sha256$i=N$salt$hash` within the limits.
    public init(phc: String) throws {
        let parts = phc.split(separator: "$", omittingEmptySubsequences: false)
        guard parts.count == 5, parts[0].isEmpty, parts[1] == "pbkdf2-sha256", parts[2].hasPrefix("i="),
            let iterations = Int(parts[2].dropFirst(2)),
            (Self.minimumIterations...Self.maximumIterations).contains(iterations),
            let salt = Base64.decode(Self.padded(parts[3])), !salt.isEmpty,
            let hash = Base64.decode(Self.padded(parts[4])), hash.count == 32
        else { throw SignetError(.invalidKey, "not a $pbkdf2-sha256$i=N$salt$hash password hash") }
        self.iterations = iterations
        self.salt = salt
        self.hash = hash
    }

    /// The PHC string to store.
    public var description: String {
        "$pbkdf2-sha256$i=\(iterations)$\(Self.unpadded(salt))$\(Self.unpadded(hash))"
    }

    /// Whether `password` is the one hashed, compared in constant time.
    public func verify(_ password: String) -> Bool {
        guard let candidate = try? Self.derive(password, salt: salt, iterations: iterations) else { return false }
        return ConstantTime.equals(candidate, hash)
    }

    private static func derive(_ password: String, salt: [UInt8], iterations: Int) throws -> [UInt8] {
        let key = try KDF.Insecure.PBKDF2.deriveKey(
            from: Array(password.utf8),
            salt: salt,
            using: .sha256,
            outputByteCount: 32,
            rounds: iterations
        )
        return key.withUnsafeBytes { Array($0) }
    }

    private static func unpadded(_ bytes: [UInt8]) -> String {
        String(Base64.encode(bytes).prefix { $0 != "=" })
    }

    private static func padded(_ text: Substring) -> String {
        String(text) + String(repeating: "=", count: (4 - text.utf8.count % 4) % 4)
    }
}
