// SPDX-License-Identifier: Apache-2.0
// Debug builds only: a release build of the app has no debug device to ship by accident.
#if DEBUG
import Crypto
import Foundation
import SignetClient
import SignetCore

/// The simulator's and CI's device, what Firebase App Check's debug provider is to App Check: a
/// P-256 key made once and kept (a `SecureValueStore` — the Keychain, which the simulator keeps
/// across relaunches), registered at the gateway by an operator rather than by the app, at trust
/// level `debug` (`allowDebugDevices` on the gateway; `app-attest` and `android-key-attestation`
/// routes refuse it).
///
/// ```swift
/// #if targetEnvironment(simulator)
/// let provider = DebugDeviceProvider(store: KeychainValueStore(service: "com.example.app.signet-debug"))
/// print(try await provider.registrationCommand(gateway: "https://staging.example.com"))  // once, for the operator
/// try await client.start(with: provider)
/// #endif
/// ```
///
/// Every launch signs with the same key and key id (the key's RFC 7638 thumbprint, which the
/// gateway uses too), so nothing is registered again: until the operator has registered it, the
/// gateway answers `unknown_key`, and the client's attempt to register again fails with the
/// command to give the operator.
public struct DebugDeviceProvider: PersistentAttestationProvider {
    public let store: any SecureValueStore
    public let name: String

    public init(store: any SecureValueStore, name: String = "signet.debug-device") {
        self.store = store
        self.name = name
    }

    /// The kept key, or a new one (kept before it is used).
    func key() async throws -> P256.Signing.PrivateKey {
        if let kept = try await store.value(for: name) {
            return try P256.Signing.PrivateKey(rawRepresentation: kept)
        }
        let key = P256.Signing.PrivateKey()
        try await store.set(key.rawRepresentation, for: name)
        return key
    }

    /// The public key as the gateway's `POST /signet/v1/devices/debug` takes it.
    public func publicKeyJWK() async throws -> JWK {
        try VerificationKey(p256X963: Array(try await key().publicKey.x963Representation)).jwk
    }

    /// The key id the gateway gives the device: the JWK's thumbprint.
    public func keyID() async throws -> String {
        try await publicKeyJWK().thumbprint
    }

    /// What the operator runs to register this device at `gateway` (the console's "Debug devices"
    /// form takes the same JWK).
    public func registrationCommand(gateway: String, deviceName: String = "debug device") async throws -> String {
        let body = try JSONSerialization.data(
            withJSONObject: ["name": deviceName, "publicKey": try JSONSerialization.jsonObject(with: Data(try await publicKeyJWK().jsonString.utf8))],
            options: [.sortedKeys]
        )
        return "curl -sS -X POST \(gateway)/signet/v1/devices/debug -H \"Authorization: Bearer $SIGNET_ADMIN_TOKEN\" "
            + "-H 'Content-Type: application/json' --data '\(String(decoding: body, as: UTF8.self))'"
    }

    // MARK: PersistentAttestationProvider

    /// Always a signer: the key is made at the first call and kept.
    public func restoredSigner() async throws -> (any RequestSigning)? {
        let key = try await key()
        return MessageSigner(key: SigningKey(p256: key), keyID: try await keyID(), algorithm: ECDSAP256SHA256())
    }

    /// A debug device is registered by an operator, never by the app.
    public func registration(challenge: String) async throws -> RegistrationRequest {
        throw SignetError(
            .unknownKey,
            "this debug device (keyid \(try await keyID())) is not registered at the gateway: an operator registers it with "
                + "POST /signet/v1/devices/debug and the JWK \(try await publicKeyJWK().jsonString)"
        )
    }

    public func signer(for device: RegisteredDevice) async throws -> any RequestSigning {
        try await restoredSigner()!
    }

    /// Keeps the key: the operator registered this one, and a new key would need them again.
    public func reset() async throws {}
}
#endif
