// SPDX-License-Identifier: Apache-2.0
import Crypto
import Foundation
import SignetCore
import SwiftASN1
@_spi(FixedExpiryValidationTime) import X509

/// Every step of an attestation check, passed or not, and what was decoded on the way.
public struct AttestationInspection: Sendable {
    public typealias Step = InspectionStep

    public var steps: [Step] = []
    public var certificates: [Certificate] = []
    public var authenticatorData: AuthenticatorData?
    public var receipt: [UInt8] = []
    /// The receipt's fields, once its signature, chain and binding verified.
    public var verifiedReceipt: AppAttestReceipt?
    public var environment: AppAttestPolicy.Environment?
    /// Set only when every step passed.
    public var verified: VerifiedAttestation?

    /// Whether every step so far passed.
    public var passed: Bool { steps.allSatisfy { $0.error == nil } }
}
