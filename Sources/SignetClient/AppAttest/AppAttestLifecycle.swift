// SPDX-License-Identifier: Apache-2.0
import Crypto
import Foundation
import SignetCore

/// App Attest's key lifecycle as Apple describes it ("Establishing your app's integrity"): one key
/// per install, generated and attested once, kept (its id and the registered device) in a
/// ``SecureValueStore`` — the Keychain, this device only — and restored at every launch, so the
/// app never attests again (each attestation of a new key raises the device's risk metric).
///
/// - A new install generates a key and stores its id before attesting it: a crash in between
///   reuses the key, never leaves one behind.
/// - `serverUnavailable` is retried with the same key and the same client data hash, with backoff.
/// - `invalidKey` (a reinstall restored the Keychain, a key attested already) discards the key and
///   starts over, once.
/// - Where App Attest is not supported, ``Fallback`` decides: refuse, or register another provider
///   (a ``DeviceKeyProvider`` over a Secure Enclave key).
/// - Assertions are made one at a time, so their counters are generated in order. They can still
///   arrive out of order when the app sends several requests at once over several connections
///   (`URLSession`), so such an app's gateway needs `appAttest.counterWindow` (16 is plenty).
///
/// ```swift
/// let attest = AppAttestLifecycle(service: DeviceCheckAppAttestService(),
///                                 store: KeychainValueStore(service: "com.example.app.signet"),
///                                 fallback: .provider(try DeviceKeyProvider.preferringSecureEnclave(store: …, allowSoftwareKey: false)))
/// if let signer = try await attest.restoredSigner() {
///     await client.useSigner(signer)            // every launch after the first
/// } else {
///     try await client.register(using: attest)  // the first: attest once, register, keep
/// }
/// ```
public actor AppAttestLifecycle: AttestationProvider {
    /// What to do where App Attest is not supported.
    public enum Fallback: Sendable {
        /// Refuse (`alg_unsupported`): the app requires attested devices.
        case refuse
        /// Register with this provider instead; it must keep its key across launches.
        case provider(any AttestationProvider)
    }

    /// How `serverUnavailable` is retried: up to `attempts` tries, `initialDelay` doubling between them.
    public struct Retry: Sendable {
        public var attempts: Int
        public var initialDelay: Duration

        public init(attempts: Int = 4, initialDelay: Duration = .milliseconds(500)) {
            self.attempts = attempts
            self.initialDelay = initialDelay
        }
    }

    /// What is kept across launches (JSON in the store).
    struct Saved: Codable, Equatable {
        /// The App Attest key; `nil` once discarded, or under the fallback.
        var keyID: String?
        /// Whether Apple attested that key already (a key is attested once).
        var attested = false
        /// `true` once registered through the fallback provider.
        var fallback = false
        var deviceID: String?
        var deviceKeyID: String?
    }

    static let storeName = "signet.app-attest.state"

    private let service: any AppAttestService
    private let store: any SecureValueStore
    private let fallback: Fallback
    private let retry: Retry
    private let sleep: @Sendable (Duration) async throws -> Void

    public init(
        service: any AppAttestService,
        store: any SecureValueStore,
        fallback: Fallback = .refuse,
        retry: Retry = Retry(),
        sleep: @escaping @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) }
    ) {
        self.service = service
        self.store = store
        self.fallback = fallback
        self.retry = retry
        self.sleep = sleep
    }

    // MARK: Launch

    /// The device this install registered, if it did (and its key was not discarded since).
    public func registeredDevice() async throws -> RegisteredDevice? {
        let saved = try await load()
        guard let deviceID = saved.deviceID, let keyID = saved.deviceKeyID else { return nil }
        return RegisteredDevice(deviceID: deviceID, keyID: keyID)
    }

    /// The signer of the device this install registered, without attesting again; `nil` on the
    /// first launch (register then).
    public func restoredSigner() async throws -> (any RequestSigning)? {
        guard let device = try await registeredDevice() else { return nil }
        return try await signer(for: device)
    }

    // MARK: AttestationProvider

    /// The registration answering `challenge`: an attestation of this install's key (generated
    /// now if there is none yet), or the fallback's registration where App Attest is unsupported.
    public func registration(challenge: String) async throws -> RegistrationRequest {
        guard service.isSupported else {
            guard case .provider(let provider) = fallback else {
                throw SignetError(.algUnsupported, "App Attest is not supported on this device, and there is no fallback")
            }
            var saved = try await load()
            saved.fallback = true
            try await save(saved)
            return try await provider.registration(challenge: challenge)
        }
        let clientDataHash = Data(SHA256.hash(data: Array(challenge.utf8)))
        var startedOver = false
        while true {
            var saved = try await load()
            saved.fallback = false
            // A key attested already (for a registration that did not go through) cannot be
            // attested again: a new one, as Apple's guide has it.
            if saved.keyID == nil || saved.attested {
                saved = Saved(keyID: try await service.generateKey())
                try await save(saved)
            }
            let keyID = saved.keyID!
            do {
                let attestation = try await retrying { try await self.service.attestKey(keyID, clientDataHash: clientDataHash) }
                saved.attested = true
                try await save(saved)
                return try RegistrationRequest(
                    path: "/signet/v1/devices/attest",
                    json: ["keyId": keyID, "attestation": attestation.base64EncodedString(), "challenge": challenge]
                )
            } catch let error as AppAttestServiceError where error.kind == .invalidKey && !startedOver {
                try await save(Saved())
                startedOver = true
            }
        }
    }

    /// Keeps `device` and returns its signer: App Attest assertions, or the fallback's signer.
    public func signer(for device: RegisteredDevice) async throws -> any RequestSigning {
        var saved = try await load()
        saved.deviceID = device.deviceID
        saved.deviceKeyID = device.keyID
        try await save(saved)
        if saved.fallback {
            guard case .provider(let provider) = fallback else {
                throw SignetError(.algUnsupported, "this install registered through a fallback that is no longer configured")
            }
            return try await provider.signer(for: device)
        }
        return AppAttestAssertionSigner(keyID: device.keyID, lifecycle: self)
    }

    /// Forgets the key and the device (the server revoked it, the user signed out): the next
    /// registration attests a new key.
    public func reset() async throws {
        try await save(Saved())
    }

    // MARK: Assertions

    /// One assertion at a time (the actor), so counters are generated in order. An `invalidKey`
    /// forgets the key and the device: the app registers again.
    func assertion(keyID: String, clientDataHash: Data) async throws -> Data {
        do {
            return try await retrying { try await self.service.generateAssertion(keyID, clientDataHash: clientDataHash) }
        } catch let error as AppAttestServiceError where error.kind == .invalidKey {
            try await save(Saved())
            throw SignetError(.invalidKey, "the App Attest key is no longer valid: register again")
        }
    }

    // MARK: Helpers

    private func retrying<T: Sendable>(_ body: () async throws -> T) async throws -> T {
        var delay = retry.initialDelay
        for attempt in 1... {
            do {
                return try await body()
            } catch let error as AppAttestServiceError where error.kind == .serverUnavailable && attempt < retry.attempts {
                try await sleep(delay)
                delay *= 2
            }
        }
        fatalError("unreachable: the loop returns or throws")
    }

    private func load() async throws -> Saved {
        guard let data = try await store.value(for: Self.storeName) else { return Saved() }
        return (try? JSONDecoder().decode(Saved.self, from: data)) ?? Saved()
    }

    private func save(_ saved: Saved) async throws {
        try await store.set(saved == Saved() ? nil : try JSONEncoder().encode(saved), for: Self.storeName)
    }
}

/// RFC 9421 with an App Attest assertion over the signature base (the gateway's `apple-app-attest`):
/// `clientDataHash = SHA256(signature base)`, the assertion as the `Signature` value.
struct AppAttestAssertionSigner: RequestSigning {
    let keyID: String
    let lifecycle: AppAttestLifecycle

    func sign(_ request: HTTPMessage, now: Date) async throws -> HTTPMessage {
        var message = request
        let components = MessageSigner.defaultComponents(for: message)
        if components.contains(.contentDigest), !message.fields.contains("content-digest") {
            message.fields.append(name: "Content-Digest", value: ContentDigest.fieldValue(for: message.body, algorithm: .sha256))
        }
        let parameters = SignatureParameters(
            components: components,
            created: Int64(now.timeIntervalSince1970),
            nonce: Nonce.random(),
            algorithm: "apple-app-attest",
            keyID: keyID
        )
        let base = try SignatureBase(message: message, parameters: parameters)
        let assertion = try await lifecycle.assertion(keyID: keyID, clientDataHash: Data(SHA256.hash(data: base.bytes)))
        message.fields.append(name: "Signature-Input", value: "sig1=\(try parameters.serialized)")
        message.fields.append(name: "Signature", value: "sig1=:\(assertion.base64EncodedString()):")
        return message
    }
}
