// SPDX-License-Identifier: Apache-2.0
import Foundation
import SignetCore

/// Proves to the server who holds a device key, once, at registration: App Attest on iOS, a
/// software key elsewhere, the simulator in tests. The key itself never leaves the provider.
public protocol AttestationProvider: Sendable {
    /// The registration route and JSON body answering a one-time server challenge.
    func registration(challenge: String) async throws -> RegistrationRequest
    /// The same, with what the client knows of the challenge (its expiry): a provider that keeps
    /// a proof across a failed delivery (``AppAttestLifecycle``) needs it. By default
    /// ``registration(challenge:)``.
    func registration(for challenge: IssuedChallenge) async throws -> RegistrationRequest
    /// The signer for later requests, once the server registered the key under `device`.
    func signer(for device: RegisteredDevice) async throws -> any RequestSigning
    /// The server refused the last registration (`error` carries its reason code): a proof kept
    /// for it is spent. By default nothing.
    func registrationRefused(_ error: SignetError) async
}

extension AttestationProvider {
    public func registration(for challenge: IssuedChallenge) async throws -> RegistrationRequest {
        try await registration(challenge: challenge.value)
    }

    public func registrationRefused(_ error: SignetError) async {}
}

/// A provider that keeps its registration across launches, so a client restores it at launch
/// (``SignetClient/start(with:origin:)``) and registers again, inside the client, when the key is gone
/// (a reinstall, a restore onto another phone, an erased Secure Enclave).
public protocol PersistentAttestationProvider: AttestationProvider {
    /// The signer of the device this install registered, if it did; `nil` before the first
    /// registration and after ``reset()``.
    func restoredSigner() async throws -> (any RequestSigning)?
    /// Forgets the key and the device: the next registration makes a new key.
    func reset() async throws
}

/// A registration challenge as the client received it.
public struct IssuedChallenge: Sendable, Hashable {
    /// The challenge, as the gateway wrote it.
    public var value: String
    /// When the gateway stops taking it, on this device's clock (corrected by the offset the
    /// client learned from the gateway's `Date`); `nil` when the gateway did not say.
    public var expiresAt: Date?

    public init(value: String, expiresAt: Date? = nil) {
        self.value = value
        self.expiresAt = expiresAt
    }
}

/// A registration to post: `/signet/v1/devices` or `/signet/v1/devices/attest` and its body.
public struct RegistrationRequest: Sendable {
    public var path: String
    public var body: [UInt8]

    public init(path: String, body: [UInt8]) {
        self.path = path
        self.body = body
    }

    /// A JSON body from string and nested JSON values.
    public init(path: String, json: [String: any Sendable]) throws {
        self.path = path
        self.body = Array(try JSONSerialization.data(withJSONObject: json, options: [.sortedKeys]))
    }
}

/// What the server answered to a registration.
public struct RegisteredDevice: Sendable, Hashable {
    public var deviceID: String
    /// The `keyid` to sign with.
    public var keyID: String
    /// The client certificate the device CA issued from the registration's CSR (PEM, leaf first).
    public var certificateChainPEM: String?
    /// The user the device was bound to: the registration carried a password login (the client
    /// held a Digest nonce for the origin, or the server asked for one).
    public var user: String?

    public init(deviceID: String, keyID: String, certificateChainPEM: String? = nil) {
        self.deviceID = deviceID
        self.keyID = keyID
        self.certificateChainPEM = certificateChainPEM
    }
}
