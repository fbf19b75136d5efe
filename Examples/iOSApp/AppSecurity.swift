// SPDX-License-Identifier: Apache-2.0
import Foundation
import SignetClient
import SignetCore

/// Everything the app trusts, in one place: the API's origin and pins, the signed trust document
/// shipped with this release (newer ones replace it without a release), and the key the gateway
/// signs its answers with.
enum AppSecurity {
    static let apiOrigin = "https://api.example.com"

    /// The live key's pin and a backup key's, never both lost at once.
    static let pins = [
        "sha256/7HIpactkIAq2Y49orFOOQKurWxmmSFZhBCoQYcRhJ3Y=",
        "sha256/YLh1dUR9y6Kja30RrAn7JKnbQG/uEtLMkBgFF2Fuihg=",
    ]

    /// The trust document compiled into this release (`signet trust sign`), and the offline key that signs them.
    static let shippedTrustDocument = ""
    static let trustKeys = ["trust-1": "-----BEGIN PUBLIC KEY-----\n…\n-----END PUBLIC KEY-----"]

    /// The gateway's response-signing key (`responseSigning` on the gateway).
    static let gatewayResponseKeyPEM = "-----BEGIN PUBLIC KEY-----\n…\n-----END PUBLIC KEY-----"

    static func configuration() throws -> SignetClientConfiguration {
        let pinSet = try PinSet(pattern: try HostPattern("api.example.com"), pins: Set(try pins.map { try SPKIPin(parsing: $0) }))
        let responseKey = try VerificationKey(pem: gatewayResponseKeyPEM)
        var configuration = SignetClientConfiguration(
            origins: [try Origin(apiOrigin)],
            trust: ServerTrustEvaluator(pinSets: [pinSet]),
            responseKeys: KeyRing([KeyRecord(keyID: "gateway", algorithm: "ed25519", key: responseKey)]),
            requireSignedResponses: true
        )
        configuration.trustUpdates = TrustUpdates(
            trustKeys: trustKeys,
            compiledDocument: shippedTrustDocument.isEmpty ? nil : shippedTrustDocument,
            store: KeychainTrustDocumentStore(service: "com.example.scores.signet-trust")
        )
        return configuration
    }
}
