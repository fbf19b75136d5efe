// SPDX-License-Identifier: Apache-2.0
import Foundation

/// What App Attest offers an app, as `DCAppAttestService` has it: the lifecycle
/// (``AppAttestLifecycle``) is written against this, so it builds and is tested anywhere; on iOS
/// `DeviceCheckAppAttestService` is the thin shim over Apple's service, and `SignetSimulator`'s
/// `SimulatedAppAttestService` reproduces it (and its errors) in tests.
public protocol AppAttestService: Sendable {
    /// `DCAppAttestService.isSupported`: false on the simulator, Macs without it, old devices.
    var isSupported: Bool { get }
    /// A new key in the Secure Enclave; returns its key id (base64 of the SHA-256 of the public key).
    func generateKey() async throws -> String
    /// Apple's attestation of `keyID` over `clientDataHash` (a CBOR attestation object).
    func attestKey(_ keyID: String, clientDataHash: Data) async throws -> Data
    /// An assertion by `keyID` over `clientDataHash`, its counter one above the last.
    func generateAssertion(_ keyID: String, clientDataHash: Data) async throws -> Data
}

/// The `DCError` cases the lifecycle acts on (the shim maps Apple's codes to these).
public struct AppAttestServiceError: Error, Sendable, Hashable {
    public enum Kind: Sendable, Hashable {
        /// `featureUnsupported`: App Attest is not available here.
        case unsupported
        /// `invalidKey`: the key is unknown or unusable (a reinstall, a restored backup, a key attested already).
        case invalidKey
        /// `invalidInput`: a malformed argument.
        case invalidInput
        /// `serverUnavailable`: Apple's servers could not be reached; retry with the same key and data.
        case serverUnavailable
        /// `unknownSystemFailure`, and anything the shim does not recognise.
        case systemFailure
    }

    public var kind: Kind
    public var detail: String

    public init(_ kind: Kind, _ detail: String = "") {
        self.kind = kind
        self.detail = detail
    }

    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.kind == rhs.kind }
    public func hash(into hasher: inout Hasher) { hasher.combine(kind) }
}
