// SPDX-License-Identifier: Apache-2.0

/// An RFC 9421 signature algorithm (§3.3): signs and verifies a signature base with a key.
///
/// Conform to add an algorithm (``SignatureAlgorithms/registering(_:)``); SignetAppAttest adds
/// `apple-app-attest` this way. The algorithm is always chosen by the key record, never by the message.
public protocol SignatureAlgorithm: Sendable {
    /// The registered name, such as `ecdsa-p256-sha256`.
    var name: String { get }
    /// The key type this algorithm accepts.
    var keyType: KeyType { get }
    /// Signs `base` (the UTF-8 signature base).
    func sign(_ base: [UInt8], with key: SigningKey) throws -> [UInt8]
    /// Verifies `signature` over `base`. Throws `signature_invalid` when it does not verify.
    ///
    /// - Returns: What the check established beyond validity (for App Attest, the signed counter).
    func verify(_ signature: [UInt8], over base: [UInt8], with key: VerificationKey) throws -> AlgorithmEvidence
}

/// Facts an algorithm establishes while verifying, for the caller to act on atomically (for example
/// an App Attest counter that the store must advance).
public struct AlgorithmEvidence: Sendable, Hashable {
    /// A monotonic counter carried inside the signature, when the algorithm has one.
    public var counter: UInt64?
    /// The app build the signature declares, when the algorithm carries one (an App Attest
    /// assertion always does, possibly undeclared; other algorithms never do).
    public var appBuild: AppBuild?

    public init(counter: UInt64? = nil, appBuild: AppBuild? = nil) {
        self.counter = counter
        self.appBuild = appBuild
    }

    public static let none = AlgorithmEvidence()
}

extension SignatureAlgorithm {
    func mismatch(_ type: KeyType) -> SignetError {
        SignetError(.algMismatch, "\(name) needs a \(keyType.rawValue) key, the key is \(type.rawValue)")
    }

    static func invalid(_ name: String) -> SignetError {
        SignetError(.signatureInvalid, "the \(name) signature does not verify")
    }
}

/// The algorithms a verifier or signer knows, by name.
public struct SignatureAlgorithms: Sendable {
    private var byName: [String: any SignatureAlgorithm]

    public init(_ algorithms: [any SignatureAlgorithm]) {
        byName = Dictionary(algorithms.map { ($0.name, $0) }, uniquingKeysWith: { _, last in last })
    }

    /// The six algorithms of the RFC 9421 registry.
    public static let standard = SignatureAlgorithms([
        HMACSHA256(), ECDSAP256SHA256(), ECDSAP384SHA384(), Ed25519Algorithm(), RSAPSSSHA512(), RSAPKCS1v15SHA256(),
    ])

    /// A copy that also knows `algorithm` (replacing one of the same name).
    public func registering(_ algorithm: any SignatureAlgorithm) -> SignatureAlgorithms {
        var copy = self
        copy.byName[algorithm.name] = algorithm
        return copy
    }

    public subscript(name: String) -> (any SignatureAlgorithm)? { byName[name] }

    public var names: [String] { byName.keys.sorted() }

    /// The algorithm named `name`, or `alg_unsupported`.
    public func require(_ name: String) throws -> any SignatureAlgorithm {
        guard let algorithm = byName[name] else {
            throw SignetError(.algUnsupported, "unknown algorithm \(name.debugDescription)")
        }
        return algorithm
    }
}
