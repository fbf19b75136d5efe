// SPDX-License-Identifier: Apache-2.0
import Crypto
import Foundation
import SignetAndroid
import SignetCore

extension FuzzTarget {
    /// A Play Integrity verdict (the input: the JSON Google Play signs), sealed as Google does —
    /// signed (JWS ES256) and encrypted (JWE A256KW, A256GCM) with this target's keys — then read
    /// by the verifier: the fuzzer reaches the verdict parser and the policy, past the cryptography.
    static let playIntegrity = FuzzTarget(
        "play-integrity",
        property: "a verdict is accepted only with the challenge, the package, the certificate, the age and the integrity the policy asks",
        seeds: { _ in
            let verdict: [String: Any] = [
                "requestDetails": ["requestPackageName": package, "nonce": challenge, "timestampMillis": String(Int64(made.timeIntervalSince1970 * 1000))],
                "appIntegrity": [
                    "appRecognitionVerdict": "PLAY_RECOGNIZED", "packageName": package,
                    "certificateSha256Digest": [Base64.urlEncode(certificate)], "versionCode": "42",
                ],
                "deviceIntegrity": ["deviceRecognitionVerdict": ["MEETS_BASIC_INTEGRITY", "MEETS_DEVICE_INTEGRITY"]],
                "accountDetails": ["appLicensingVerdict": "LICENSED"],
            ]
            return [Array(try JSONSerialization.data(withJSONObject: verdict, options: .sortedKeys))]
        },
        check: { bytes in
            let token = try sealed(bytes)
            guard let verdict = try? playIntegrityVerifier.verify(token, nonce: challenge, now: made.addingTimeInterval(10)) else { return }
            // Classic tokens carry the challenge as `nonce`, standard ones as `requestHash`.
            let details = verdict.requestDetails
            try expect(details?.nonce == challenge || details?.requestHash == challenge, "a verdict without the challenge was accepted: \(verdict)")
            try expect(verdict.appIntegrity?.packageName == package, "a verdict for another package was accepted: \(verdict)")
            // Google writes the digest base64url; padded and standard base64 name the same bytes.
            let digests = (verdict.appIntegrity?.certificateSha256Digest ?? []).compactMap { Base64.urlDecode($0) ?? Base64.decode($0) }
            try expect(digests.contains(certificate), "a verdict without the app's certificate was accepted: \(verdict)")
            try expect(
                verdict.timestamp.map { abs($0.timeIntervalSince(made)) <= 300 + 10 } == true,
                "a verdict made at \(String(describing: verdict.timestamp)) was accepted at \(made)")
            try expect(verdict.deviceIntegrityLevel.map { $0 >= .device } == true, "a verdict below device integrity was accepted: \(verdict)")
        }
    )
}

private let package = "com.example.scores"
private let challenge = "challenge-1"
private let made = Date(timeIntervalSince1970: 1_790_000_000)
private let certificate = Array(SHA256.hash(data: Array("the app's signing certificate".utf8)))
private let decryptionKey = SymmetricKey(data: [UInt8](repeating: 0x5A, count: 32))
private let signingKey = try! P256.Signing.PrivateKey(rawRepresentation: [UInt8](repeating: 0x11, count: 32))
private let playIntegrityVerifier = PlayIntegrityVerifier(
    decryptionKey: decryptionKey,
    verificationKey: signingKey.publicKey,
    policy: PlayIntegrityPolicy(packageNames: [package], certificateDigests: [certificate], maximumAge: 300)
)

/// `payload` signed and encrypted as Google Play seals a verdict (a fixed content key and nonce;
/// the ECDSA signature is randomised, outside the instrumented code).
private func sealed(_ payload: [UInt8]) throws -> String {
    let signingInput = Base64.urlEncode(Array(#"{"alg":"ES256"}"#.utf8)) + "." + Base64.urlEncode(payload)
    let signature = try signingKey.signature(for: Array(signingInput.utf8)).rawRepresentation
    let jws = signingInput + "." + Base64.urlEncode(Array(signature))
    let protected = Base64.urlEncode(Array(#"{"alg":"A256KW","enc":"A256GCM"}"#.utf8))
    let contentKey = SymmetricKey(data: [UInt8](repeating: 0xC3, count: 32))
    let wrapped = try AES.KeyWrap.wrap(contentKey, using: decryptionKey)
    let box = try AES.GCM.seal(
        Array(jws.utf8), using: contentKey, nonce: AES.GCM.Nonce(data: [UInt8](repeating: 7, count: 12)),
        authenticating: Array(protected.utf8))
    return [protected, Base64.urlEncode(Array(wrapped)), Base64.urlEncode(Array(box.nonce)), Base64.urlEncode(Array(box.ciphertext)), Base64.urlEncode(Array(box.tag))]
        .joined(separator: ".")
}
