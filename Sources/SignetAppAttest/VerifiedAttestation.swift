// SPDX-License-Identifier: Apache-2.0
import Crypto
import Foundation
import SignetCore
import SwiftASN1
@_spi(FixedExpiryValidationTime) import X509

/// A verified App Attest attestation: the key the server may trust from now on.
public struct VerifiedAttestation: Sendable {
    /// SHA256 of the 65-byte public point, standard base64 with padding (what the device calls keyId).
    public var keyID: String
    public var publicKey: VerificationKey
    public var environment: AppAttestPolicy.Environment
    public var appID: String
    /// The receipt, verified (signed by Apple for this app, key and attestation), kept for the
    /// exchange that yields the risk metric.
    public var receipt: AppAttestReceipt
    /// The leaf certificate's notAfter: App Attest leaves can live only a few days, hence the check
    /// at receipt time and the stored result.
    public var leafNotAfter: Date
    /// The OS version the leaf certificate states (extension 1.2.840.113635.100.8.7), where present.
    public var osVersion: String?
    /// The app build the device signed into the attestation (iOS 27); undeclared before.
    public var appBuild: AppBuild = AppBuild()
}
