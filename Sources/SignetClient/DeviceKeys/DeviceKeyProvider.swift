// SPDX-License-Identifier: Apache-2.0
import Crypto
import Foundation
import SignetCore

/// A device key that never leaves the device (seed 003's point), registered with proof of
/// possession and kept across launches: in the Secure Enclave on Apple devices, as a software key
/// only where the app allows it.
///
/// The key is made on the first registration and kept in a ``SecureValueStore``; every later
/// launch finds it there (``signer(for:)`` uses the same key), so the
/// server's device record stays valid.
///
/// ```swift
/// let keys = DeviceKeyProvider.preferringSecureEnclave(
///     store: KeychainValueStore(service: "com.example.app.signet"), allowSoftwareKey: false)
/// try await client.register(using: keys)
/// ```
public struct DeviceKeyProvider: AttestationProvider {
    public let factory: any DeviceKeyFactory
    public let store: any SecureValueStore
    /// The name the key is kept under.
    public let name: String
    /// Never write or delete what is kept (an app extension sharing the app's Keychain group):
    /// sign with the app's key, or fail; registering and resetting are refused.
    public let readOnly: Bool

    public init(
        factory: any DeviceKeyFactory,
        store: any SecureValueStore,
        name: String = "signet.device-key",
        readOnly: Bool = AppAttestLifecycle.isRunningInAppExtension
    ) {
        self.factory = factory
        self.store = store
        self.name = name
        self.readOnly = readOnly
    }

    #if canImport(CryptoKit) && canImport(Darwin)
    /// A Secure Enclave key; where there is no enclave (the simulator, some Macs), a software key if
    /// `allowSoftwareKey`, else a provider that refuses to register (`alg_unsupported`) — at
    /// registration, where the app handles errors, not while it builds its providers, so the same
    /// code runs in the simulator with the debug provider beside it.
    @available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, *)
    public static func preferringSecureEnclave(
        store: any SecureValueStore,
        allowSoftwareKey: Bool,
        name: String = "signet.device-key"
    ) -> DeviceKeyProvider {
        if SecureEnclaveKeyFactory.isAvailable {
            return DeviceKeyProvider(factory: SecureEnclaveKeyFactory(), store: store, name: name)
        }
        guard allowSoftwareKey else {
            return DeviceKeyProvider(factory: UnavailableKeyFactory(), store: store, name: name)
        }
        return DeviceKeyProvider(factory: SoftwareKeyFactory(), store: store, name: name)
    }
    #endif

    /// The kept key, or a new one (kept before it is used). A kept key that no longer opens (the
    /// device was erased and restored: the Keychain came back, the enclave's key did not) is
    /// discarded: registration makes a new one, a signer throws `invalid_key` so the client
    /// registers again — never the same error at every launch.
    func key(forSigning: Bool) async throws -> any DeviceSigningKey {
        if let kept = try await store.value(for: name) {
            do {
                return try factory.restore(kept)
            } catch {
                if readOnly { throw SignetError(.invalidKey, "the device key kept for the app does not open here: \(error)") }
                try await store.set(nil, for: name)
                try await store.set(nil, for: registrationName)
                if forSigning {
                    throw SignetError(.invalidKey, "the device key kept for this install no longer opens: register again")
                }
            }
        }
        guard !readOnly else { throw SignetError(.algUnsupported, "an app extension does not make the app's device key: register in the app") }
        let (key, kept) = try factory.make()
        try await store.set(kept, for: name)
        return key
    }

    /// Where the registered device is kept (beside the key).
    var registrationName: String { name + ".registration" }

    public func registration(challenge: String) async throws -> RegistrationRequest {
        let key = try await key(forSigning: false)
        let jwk = try VerificationKey(p256X963: key.publicKey.x963Representation).jwk
        return try RegistrationRequest(
            path: "/signet/v1/devices",
            json: [
                "challenge": challenge,
                "alg": "ecdsa-p256-sha256",
                "publicKey": (try JSONSerialization.jsonObject(with: Data(jwk.jsonString.utf8)) as? [String: any Sendable]) ?? [:],
                "signature": Base64.urlEncode(try key.signature(for: Array(challenge.utf8))),
            ]
        )
    }

    /// Keeps `device` and signs with the kept key.
    public func signer(for device: RegisteredDevice) async throws -> any RequestSigning {
        let signer = DeviceKeySigner(key: try await key(forSigning: true), keyID: device.keyID)
        if !readOnly { try await store.set(Data("\(device.deviceID)\n\(device.keyID)".utf8), for: registrationName) }
        return signer
    }
}

extension DeviceKeyProvider: PersistentAttestationProvider {
    /// The signer of the device registered with the kept key, if there is one.
    public func restoredSigner() async throws -> (any RequestSigning)? {
        guard let kept = try await store.value(for: registrationName) else { return nil }
        let parts = String(decoding: kept, as: UTF8.self).split(separator: "\n").map(String.init)
        guard parts.count == 2 else { return nil }
        return DeviceKeySigner(key: try await key(forSigning: true), keyID: parts[1])
    }

    /// Forgets the key and the device (the server revoked the device; the user signed out).
    public func reset() async throws {
        guard !readOnly else { throw SignetError(.algUnsupported, "an app extension does not reset the app's device key") }
        try await store.set(nil, for: name)
        try await store.set(nil, for: registrationName)
    }
}

/// `ecdsa-p256-sha256` with a key held elsewhere: ``MessageSigner`` builds the base, the device key
/// signs it.
struct DeviceKeySigner: RequestSigning {
    let key: any DeviceSigningKey
    let keyID: String

    /// `MessageSigner` wants a `SigningKey`; the key lives in the device (never used: the
    /// algorithm below signs with the device key).
    private static let placeholder = try! SigningKey(secret: [0])

    func sign(_ request: HTTPMessage, now: Date) async throws -> HTTPMessage {
        try await sign(request, now: now, asked: nil)
    }

    func sign(_ request: HTTPMessage, now: Date, asked: SignatureRequest?) async throws -> HTTPMessage {
        try await MessageSigner(key: Self.placeholder, keyID: keyID, algorithm: Algorithm(key: key)).sign(request, now: now, asked: asked)
    }

    private struct Algorithm: SignatureAlgorithm {
        let key: any DeviceSigningKey
        var name: String { "ecdsa-p256-sha256" }
        var keyType: KeyType { .p256 }
        func sign(_ base: [UInt8], with _: SigningKey) throws -> [UInt8] { try key.signature(for: base) }
        func verify(_ signature: [UInt8], over base: [UInt8], with key: VerificationKey) throws -> AlgorithmEvidence {
            try ECDSAP256SHA256().verify(signature, over: base, with: key)
        }
    }
}
