// SPDX-License-Identifier: Apache-2.0
import Crypto
import Foundation
import SignetCore

/// One parser of untrusted bytes, fuzzed: the property its every input must hold, and the seeds
/// (from the repository's test vectors) its corpus starts from.
///
/// An input the parser refuses is fine; an input it accepts must hold the target's property — a
/// value that re-serialises to something the parser reads the same, or two paths that agree. A
/// broken property throws ``PropertyViolation``: under libFuzzer that is a crash with the input
/// saved, under `signet-fuzz replay` and the tests a failure naming the input.
public struct FuzzTarget: Sendable {
    /// The name `scripts/fuzz.sh` and the corpus folder (`Fuzz/corpus/<name>`) use.
    public let name: String
    /// What is parsed and what must hold, in a line.
    public let property: String
    let makeSeeds: @Sendable (TestVectors) throws -> [[UInt8]]
    let check: @Sendable ([UInt8]) throws -> Void

    init(
        _ name: String,
        property: String,
        seeds: @escaping @Sendable (TestVectors) throws -> [[UInt8]],
        check: @escaping @Sendable ([UInt8]) throws -> Void
    ) {
        self.name = name
        self.property = property
        self.makeSeeds = seeds
        self.check = check
    }

    /// Runs one input; throws ``PropertyViolation`` when the property does not hold.
    public func run(_ input: [UInt8]) throws {
        try check(input)
    }

    /// The seed inputs, read from the test vectors at `vectors` (`Tests/Vectors`).
    public func seeds(vectors: URL) throws -> [[UInt8]] {
        try makeSeeds(TestVectors(folder: vectors))
    }

    /// Every target, in the order `scripts/fuzz.sh` runs them.
    public static let all: [FuzzTarget] = [
        structuredFields, signatureFields, contentDigest, http1Message, routingPath, cbor, authenticatorData,
        appAttestReceipt, keyDescription, keyText, binaryHTTP, obliviousHTTP, httpAuthentication,
        proxyProtocol, forwarded, trustDocument, playIntegrity, configuration, authorizationQuestion, dpopProof, clientAttestationPoP,
        signatureKey,
    ]

    public static func named(_ name: String) -> FuzzTarget? {
        all.first { $0.name == name }
    }
}

/// An accepted input that broke its target's property.
public struct PropertyViolation: Error, CustomStringConvertible {
    public let description: String
}

/// Throws ``PropertyViolation`` with `message` unless `condition` holds.
func expect(_ condition: Bool, _ message: @autoclosure () -> String) throws {
    guard condition else { throw PropertyViolation(description: message()) }
}

/// `bytes` as text, or nil when they are not UTF-8: text parsers take Swift strings, which cannot
/// hold what is not.
func text(_ bytes: [UInt8]) -> String? {
    String(validating: bytes, as: UTF8.self)
}

/// An input split in two at its first newline: two fields, or a field and a body.
func halves(_ bytes: [UInt8]) -> ([UInt8], [UInt8]) {
    guard let newline = bytes.firstIndex(of: UInt8(ascii: "\n")) else { return (bytes, []) }
    return (Array(bytes[..<newline]), Array(bytes[(newline + 1)...]))
}

extension FuzzTarget {
    /// A seed's file name: its SHA-1, as libFuzzer names the inputs it keeps.
    public static func seedName(_ seed: [UInt8]) -> String {
        Hex.encode(Insecure.SHA1.hash(data: seed))
    }
}
