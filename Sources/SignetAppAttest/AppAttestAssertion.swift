// SPDX-License-Identifier: Apache-2.0
import Crypto
import Foundation
import SignetCore

/// Verifies App Attest assertions: a DER ECDSA P-256 signature over
/// `nonce = SHA256(authenticatorData ‖ SHA256(clientData))` (the curve signs SHA256 of that nonce).
public struct AppAttestAssertionVerifier: Sendable {
    /// Accepted App IDs (their SHA256 is the rpIdHash).
    public var appIDs: Set<String>

    public init(appIDs: Set<String>) {
        self.appIDs = appIDs
    }

    /// Verifies and returns the assertion's counter. Whether it is greater than the stored one is the
    /// caller's compare-and-set (in the store, atomically); `previousCounter` checks it here too.
    public func verify(
        assertion: [UInt8],
        clientData: [UInt8],
        publicKey: VerificationKey,
        previousCounter: UInt32? = nil
    ) throws -> UInt32 {
        try verifyAssertion(assertion, clientData: clientData, publicKey: publicKey, previousCounter: previousCounter)
            .signCount
    }

    /// Verifies and returns the assertion's authenticator data: its counter and the app build the
    /// device signed into it (iOS 27).
    public func verifyAssertion(
        _ assertion: [UInt8],
        clientData: [UInt8],
        publicKey: VerificationKey,
        previousCounter: UInt32? = nil
    ) throws -> AuthenticatorData {
        let object = try CBORDecoder().decode(assertion)
        guard let signature = object[text: "signature"]?.bytes,
            let authDataBytes = object[text: "authenticatorData"]?.bytes
        else { throw SignetError(.malformedCBOR, "an assertion needs signature and authenticatorData") }
        let authData = try AuthenticatorData(authDataBytes, assertion: true)
        guard let key = publicKey.p256PublicKey else { throw SignetError(.algMismatch, "App Attest keys are P-256") }
        let nonce = SHA256.hash(data: authDataBytes + Array(SHA256.hash(data: clientData)))
        guard let parsed = try? P256.Signing.ECDSASignature(derRepresentation: signature),
            key.isValidSignature(parsed, for: Data(nonce))
        else { throw SignetError(.signatureInvalid, "the assertion signature does not verify") }
        guard
            appIDs.contains(where: { ConstantTime.equals(Array(SHA256.hash(data: Array($0.utf8))), authData.rpIDHash) })
        else {
            throw SignetError(.appIDMismatch, "the assertion is for another App ID")
        }
        if let previousCounter, authData.signCount <= previousCounter {
            throw SignetError(.counterNotIncreasing, "counter \(authData.signCount) is not above \(previousCounter)")
        }
        return authData
    }
}

/// `apple-app-attest` as an RFC 9421 algorithm: the client asks App Attest for an assertion with
/// `clientData` = the signature base; the `Signature` value is the CBOR assertion. The counter it
/// carries comes back as `AlgorithmEvidence/counter` for the store's atomic advance, and the app
/// build it declares as `AlgorithmEvidence/appBuild` for the route's policy.
public struct AppAttestAlgorithm: SignatureAlgorithm {
    public let verifier: AppAttestAssertionVerifier

    public init(appIDs: Set<String>) {
        verifier = AppAttestAssertionVerifier(appIDs: appIDs)
    }

    public var name: String { "apple-app-attest" }
    public var keyType: KeyType { .p256 }

    public func sign(_ base: [UInt8], with key: SigningKey) throws -> [UInt8] {
        throw SignetError(
            .algUnsupported,
            "only a device's Secure Enclave (or the simulator) makes App Attest assertions"
        )
    }

    public func verify(_ signature: [UInt8], over base: [UInt8], with key: VerificationKey) throws -> AlgorithmEvidence
    {
        let authData = try verifier.verifyAssertion(signature, clientData: base, publicKey: key)
        return AlgorithmEvidence(counter: UInt64(authData.signCount), appBuild: authData.appBuild)
    }
}
