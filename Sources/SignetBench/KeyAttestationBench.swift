// SPDX-License-Identifier: Apache-2.0
import Foundation
import SignetAndroid
import SwiftASN1
import _CryptoExtras
import X509

/// Android key attestation checks per second (chain signatures, validity, root, record, policy)
/// on a real chain, and what openssl takes to verify the same signatures.
enum KeyAttestationBench {
    /// 2024-01-01: inside every certificate of the TEE chain in the vectors.
    static let time = Date(timeIntervalSince1970: 1_704_067_200)

    static func measure(chainFile: String, seconds: Double) throws -> (rate: Double, signatures: [String]) {
        let text = try String(contentsOfFile: chainFile, encoding: .utf8)
        let chain = try AndroidAttestationChain.derCertificates(pem: text)
        let verifier = AndroidKeyAttestationVerifier(policy: AndroidAttestationPolicy(requireLockedBootloader: false, requireVerifiedBoot: false))
        _ = try verifier.verify(chain: chain, challenge: Array("abc".utf8), now: time, status: nil)
        let deadline = Date().addingTimeInterval(seconds)
        var count = 0
        while Date() < deadline {
            for _ in 0..<20 { _ = try verifier.verify(chain: chain, challenge: Array("abc".utf8), now: time, status: nil) }
            count += 20
        }
        // What openssl must verify for the same chain: each certificate's signature by its issuer's
        // key (the root's by its own).
        let certificates = try chain.map { try Certificate(derEncoded: $0) }
        let signatures = certificates.indices.map { index -> String in
            let issuer = certificates[min(index + 1, certificates.count - 1)]
            if let rsa = _RSA.Signing.PublicKey(issuer.publicKey) { return "rsa\(rsa.keySizeInBits)" }
            return "ecdsap256"
        }
        return (Double(count) / seconds, signatures)
    }
}
