// SPDX-License-Identifier: Apache-2.0
import Foundation

/// What a successful verification established.
public struct VerifiedSignature: Sendable {
    /// The `Signature-Input` label of the verified signature.
    public var label: String
    public var keyID: String
    /// The algorithm, as the key record names it.
    public var algorithm: String
    public var components: [ComponentIdentifier]
    public var created: Date?
    public var expires: Date?
    public var nonce: String?
    public var tag: String?
    /// The ``KeyRecord/owner`` of the record that verified.
    public var owner: KeyOwner?
    /// Facts the algorithm established (an App Attest counter, for example).
    public var evidence: AlgorithmEvidence
    /// The signature base that verified.
    public var signatureBase: String { String(decoding: signatureBaseBytes, as: UTF8.self) }
    /// The same, as the bytes the algorithm checked (kept as bytes: most callers never look).
    public var signatureBaseBytes: [UInt8]

    /// Whether the signature covers `component`.
    public func covers(_ component: ComponentIdentifier) -> Bool { components.contains(component) }
}
