// SPDX-License-Identifier: Apache-2.0
import Crypto
import Foundation
import SignetClient
import SignetCore
import SignetMiddleware
import SignetServer
import SwiftASN1
import X509

/// What `SignetClient` adds to each new TLS connection: parse the served chain, validate it to the
/// root (one ECDSA P-256 verification of the leaf by the CA), check the hostname, then the pin set.
enum PinningBench {
    static func measure(seconds: Double) async throws -> Double {
        let ca = try CertificateIssuer.selfSignedCA(commonName: "Bench CA")
        let key = P256.Signing.PrivateKey()
        let leaf = try ca.issue(
            commonName: "api.example.com",
            publicKey: .init(key.publicKey),
            usage: .server,
            hosts: ["api.example.com"],
            notAfter: Date().addingTimeInterval(86_400)
        )
        let chain = try [leaf, ca.certificate].map { certificate -> [UInt8] in
            var serializer = DER.Serializer()
            try serializer.serialize(certificate)
            return serializer.serializedBytes
        }
        let pins: Set<SPKIPin> = [
            try SPKIPin(certificateDER: chain[0]), SPKIPin(spkiDER: P256.Signing.PrivateKey().publicKey.derRepresentation),
        ]
        let evaluator = ServerTrustEvaluator(
            roots: .only([ca.certificate]),
            pinSets: [try PinSet(pattern: try HostPattern("api.example.com"), pins: pins)]
        )
        let now = Date()
        let clock = ContinuousClock()
        let start = clock.now
        var done = 0
        while clock.now - start < .milliseconds(Int(seconds * 1000)) {
            for _ in 0..<64 {
                let result = await evaluator.evaluate(servedChain: chain, host: "api.example.com", port: 443, now: now)
                guard result.error == nil else { throw result.error! }
            }
            done += 64
        }
        let elapsed = clock.now - start
        return Double(done) / (Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
    }
}
