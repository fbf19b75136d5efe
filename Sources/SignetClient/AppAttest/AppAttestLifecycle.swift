// SPDX-License-Identifier: Apache-2.0
import Crypto
import Foundation
import SignetCore

/// App Attest's key lifecycle as Apple describes it ("Establishing your app's integrity"): one key
/// per install, generated and attested once, kept (its id and the registered device) in a
/// ``SecureValueStore`` — the Keychain, this device only — and restored at every launch, so the
/// app never attests again (each attestation of a new key raises the device's risk metric).
///
/// - **One operation at a time**, for real: registrations, assertions and resets pass an
///   `AsyncSerialGate` (an actor alone is reentrant at every `await`), so two registrations at
///   launch attest once and assertions are generated in counter order.
/// - A new install generates a key and stores its id before attesting it: a crash in between
///   reuses the key, never leaves one behind.
/// - `serverUnavailable` is retried with the same key and the same client data hash, with backoff.
/// - `invalidKey` while attesting (a reinstall restored the Keychain, a key attested already)
///   discards the key and starts over, once. **Every other error but `serverUnavailable`
///   discards the key** too, so the next try starts clean rather than failing the same way at
///   every launch (firebase-ios-sdk#12468).
/// - An attestation whose delivery failed (no network) is kept with its challenge while the
///   challenge is valid, and sent again: a key is attested once.
/// - An assertion the key cannot make any more (a reinstall or a restore: the Keychain came
///   along, the key did not) forgets the key and the device and throws `invalid_key`; a client
///   started with ``SignetClient/start(with:origin:)`` then registers again and resends, once.
/// - In an app extension `generateKey` fails whatever `isSupported` says: registration is
///   refused there, and nothing an extension does writes the state it may share with the app
///   through a Keychain group.
/// - Where App Attest is not supported, ``Fallback`` decides: refuse, or register another provider
///   (a ``DeviceKeyProvider`` over a Secure Enclave key).
/// - **A proof key beside the App Attest key.** An App Attest key signs only assertions, so DPoP
///   proofs and client attestation PoPs are made by a second key, a Secure Enclave one by default
///   (`proofKeys`), made with the registration's signer and kept with the App Attest key (its
///   enclave reference), forgotten with it. The gateway learns it from the install's assertions:
///   the token request's assertion covers the `DPoP` proof whose key the token is bound to, and
///   the client attestation request's names the key to attest.
///
/// Assertions are generated in order but can still arrive out of order when the app sends several
/// requests at once (`URLSession` opens several connections, HTTP/2 multiplexes): the gateway's
/// `appAttest.counterWindow` (16 by default) takes that.
///
/// ```swift
/// let attest = AppAttestLifecycle(service: DeviceCheckAppAttestService(),
///                                 store: KeychainValueStore(service: "com.example.app.signet"))
/// try await client.start(with: attest)  // restores the kept registration, or attests once and registers
/// ```
public actor AppAttestLifecycle: PersistentAttestationProvider {
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
        /// The attestation of `keyID` made for a registration that has not been answered yet.
        var pending: PendingAttestation?
        /// What ``proofKeys`` kept of the proof key (a Secure Enclave key's reference).
        var proofKey: Data?
    }

    /// An attestation and the challenge it answers, until the gateway answers its registration.
    struct PendingAttestation: Codable, Equatable {
        var challenge: String
        var attestation: String
        var expiresAt: Date
    }

    static let storeName = "signet.app-attest.state"
    /// A kept attestation is sent again only while its challenge has this long left to travel.
    static let deliveryMargin: TimeInterval = 10

    /// The Secure Enclave where this device has one; elsewhere no proof key is made.
    public static var defaultProofKeys: any DeviceKeyFactory {
        #if canImport(CryptoKit) && canImport(Darwin)
        if SecureEnclaveKeyFactory.isAvailable { return SecureEnclaveKeyFactory() }
        #endif
        return UnavailableKeyFactory()
    }

    /// Whether this process is an app extension (its bundle is an `.appex`).
    public static var isRunningInAppExtension: Bool {
        Bundle.main.bundleURL.pathExtension == "appex"
    }

    private let service: any AppAttestService
    private let store: any SecureValueStore
    private let proofKeys: any DeviceKeyFactory
    private let fallback: Fallback
    private let retry: Retry
    private let inAppExtension: Bool
    private let sleep: @Sendable (Duration) async throws -> Void
    private let now: @Sendable () -> Date
    private let gate = AsyncSerialGate()

    /// - Parameters:
    ///   - service: `DCAppAttestService`'s shim (`DeviceCheckAppAttestService`), or the simulated one.
    ///   - store: Where the key id and the registered device are kept (the Keychain).
    ///   - proofKeys: Makes the key that signs DPoP proofs and client attestation PoPs: the Secure
    ///     Enclave where there is one (``defaultProofKeys``). Where it cannot make one, the install
    ///     still signs requests with assertions, and proofs are refused `alg_unsupported`.
    ///   - fallback: What to do where App Attest is not supported.
    ///   - retry: How `serverUnavailable` is retried.
    ///   - inAppExtension: Refuse registration and never write the kept state (an extension may
    ///     share the app's Keychain group). Found from the bundle by default.
    ///   - sleep: The backoff's wait (tests replace it).
    ///   - now: The clock a kept attestation's challenge is judged by (tests replace it).
    public init(
        service: any AppAttestService,
        store: any SecureValueStore,
        proofKeys: any DeviceKeyFactory = AppAttestLifecycle.defaultProofKeys,
        fallback: Fallback = .refuse,
        retry: Retry = Retry(),
        inAppExtension: Bool = AppAttestLifecycle.isRunningInAppExtension,
        sleep: @escaping @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) },
        now: @escaping @Sendable () -> Date = Date.init
    ) {
        self.service = service
        self.store = store
        self.proofKeys = proofKeys
        self.fallback = fallback
        self.retry = retry
        self.inAppExtension = inAppExtension
        self.sleep = sleep
        self.now = now
    }

    // MARK: Launch

    /// The device this install registered, if it did (and its key was not discarded since).
    public func registeredDevice() async throws -> RegisteredDevice? {
        try await gate.run { self.device(in: try await self.load()) }
    }

    /// The signer of the device this install registered, without attesting again; `nil` on the
    /// first launch (register then).
    public func restoredSigner() async throws -> (any RequestSigning)? {
        try await gate.run {
            let saved = try await self.load()
            guard let device = self.device(in: saved) else { return nil }
            return try await self.makeSigner(for: device, fallback: saved.fallback, restoring: true)
        }
    }

    // MARK: AttestationProvider

    public func registration(challenge: String) async throws -> RegistrationRequest {
        try await registration(for: IssuedChallenge(value: challenge))
    }

    /// The registration answering `challenge`: an attestation of this install's key (generated
    /// now if there is none yet; the one kept from an undelivered registration while its challenge
    /// is valid), or the fallback's registration where App Attest is unsupported.
    public func registration(for challenge: IssuedChallenge) async throws -> RegistrationRequest {
        try await gate.run { try await self.register(challenge) }
    }

    /// Keeps `device` and returns its signer: App Attest assertions, or the fallback's signer.
    public func signer(for device: RegisteredDevice) async throws -> any RequestSigning {
        try await gate.run {
            var saved = try await self.load()
            saved.deviceID = device.deviceID
            saved.deviceKeyID = device.keyID
            saved.pending = nil
            try await self.save(saved)
            return try await self.makeSigner(for: device, fallback: saved.fallback)
        }
    }

    /// The gateway refused the registration: a kept attestation is spent (its key was attested,
    /// so the next registration makes a new key).
    public func registrationRefused(_ error: SignetError) async {
        try? await gate.run {
            var saved = try await self.load()
            guard saved.pending != nil else { return }
            saved.pending = nil
            try await self.save(saved)
        }
    }

    /// Forgets the key and the device (the server revoked it, the user signed out): the next
    /// registration attests a new key. Refused in an app extension.
    public func reset() async throws {
        try await gate.run {
            guard !self.inAppExtension else {
                throw SignetError(.algUnsupported, "an app extension does not reset the app's App Attest registration")
            }
            try await self.save(Saved())
        }
    }

    // MARK: Assertions

    /// An assertion by `keyID`, one at a time, so counters are generated in order. A key that can
    /// no longer assert (`invalidKey`, or any error but `serverUnavailable`) is forgotten with its
    /// device — if it is still this install's — and `invalid_key` thrown: register again.
    func assertion(keyID: String, clientDataHash: Data) async throws -> Data {
        try await gate.run {
            do {
                return try await self.retrying {
                    try await self.service.generateAssertion(keyID, clientDataHash: clientDataHash)
                }
            } catch let error as AppAttestServiceError where error.kind != .serverUnavailable {
                if !self.inAppExtension, try await self.load().deviceKeyID == keyID {
                    try await self.save(Saved())
                }
                throw SignetError(.invalidKey, "the App Attest key cannot make assertions (\(error.kind)): register again")
            }
        }
    }

    // MARK: Registration

    private func register(_ challenge: IssuedChallenge) async throws -> RegistrationRequest {
        guard !inAppExtension else {
            throw SignetError(.algUnsupported, "App Attest keys cannot be generated in an app extension: register in the app")
        }
        guard service.isSupported else { return try await registerWithFallback(challenge) }
        var saved = try await load()
        if let keyID = saved.keyID, saved.attested, let pending = saved.pending,
            pending.expiresAt.timeIntervalSince(now()) > Self.deliveryMargin
        {
            return try Self.request(keyID: keyID, attestation: pending.attestation, challenge: pending.challenge)
        }
        let clientDataHash = Data(SHA256.hash(data: Array(challenge.value.utf8)))
        var startedOver = false
        while true {
            saved = try await load()
            saved.fallback = false
            // A key attested already (for a registration that did not go through) cannot be
            // attested again: a new one, as Apple's guide has it.
            if saved.keyID == nil || saved.attested {
                do {
                    saved = Saved(keyID: try await service.generateKey())
                } catch let error as AppAttestServiceError where error.kind == .unsupported {
                    // `isSupported` said yes (an extension, a device in a bad state): as unsupported.
                    return try await registerWithFallback(challenge)
                }
                try await save(saved)
            }
            let keyID = saved.keyID!
            do {
                let attestation = try await retrying { try await self.service.attestKey(keyID, clientDataHash: clientDataHash) }
                    .base64EncodedString()
                saved.attested = true
                saved.pending = challenge.expiresAt.map {
                    PendingAttestation(challenge: challenge.value, attestation: attestation, expiresAt: $0)
                }
                try await save(saved)
                return try Self.request(keyID: keyID, attestation: attestation, challenge: challenge.value)
            } catch let error as AppAttestServiceError where error.kind == .invalidKey && !startedOver {
                try await save(Saved())
                startedOver = true
            } catch let error as AppAttestServiceError where error.kind != .serverUnavailable {
                try await save(Saved())
                throw error
            }
        }
    }

    private func registerWithFallback(_ challenge: IssuedChallenge) async throws -> RegistrationRequest {
        guard case .provider(let provider) = fallback else {
            throw SignetError(.algUnsupported, "App Attest is not supported on this device, and there is no fallback")
        }
        var saved = try await load()
        saved.fallback = true
        try await save(saved)
        return try await provider.registration(for: challenge)
    }

    private static func request(keyID: String, attestation: String, challenge: String) throws -> RegistrationRequest {
        try RegistrationRequest(
            path: "/signet/v1/devices/attest",
            json: ["keyId": keyID, "attestation": attestation, "challenge": challenge]
        )
    }

    /// The signer of `device`; for the fallback, restored without writing where the provider keeps
    /// its own registration (an app extension must not write the app's state).
    private func makeSigner(for device: RegisteredDevice, fallback usesFallback: Bool, restoring: Bool = false) async throws
        -> any RequestSigning
    {
        guard usesFallback else {
            return AppAttestAssertionSigner(keyID: device.keyID, lifecycle: self, proofKey: try await proofKey())
        }
        guard case .provider(let provider) = fallback else {
            throw SignetError(.algUnsupported, "this install registered through a fallback that is no longer configured")
        }
        if restoring, let persistent = provider as? any PersistentAttestationProvider,
            let restored = try await persistent.restoredSigner()
        {
            return restored
        }
        return try await provider.signer(for: device)
    }

    // MARK: Helpers

    /// The install's proof key: the kept one, else a new one kept with the App Attest key; `nil`
    /// where none can be made (no Secure Enclave), or in an app extension that finds none kept
    /// (it must not write the app's state).
    private func proofKey() async throws -> (any DeviceSigningKey)? {
        var saved = try await load()
        if let kept = saved.proofKey, let key = try? proofKeys.restore(kept) { return key }
        guard !inAppExtension, let (key, kept) = try? proofKeys.make() else { return nil }
        saved.proofKey = kept
        try await save(saved)
        return key
    }

    private func device(in saved: Saved) -> RegisteredDevice? {
        guard let deviceID = saved.deviceID, let keyID = saved.deviceKeyID else { return nil }
        return RegisteredDevice(deviceID: deviceID, keyID: keyID)
    }

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

    /// Writes the kept state; never from an app extension, which may share the app's Keychain.
    private func save(_ saved: Saved) async throws {
        guard !inAppExtension else { return }
        try await store.set(saved == Saved() ? nil : try JSONEncoder().encode(saved), for: Self.storeName)
    }
}

/// RFC 9421 with an App Attest assertion over the signature base (the gateway's `apple-app-attest`):
/// `clientDataHash = SHA256(signature base)`, the assertion as the `Signature` value.
/// A `DPoP` proof on the request is covered: that names the proof key the token asked for is bound to.
struct AppAttestAssertionSigner: RequestSigning {
    let keyID: String
    let lifecycle: AppAttestLifecycle
    /// Makes DPoP proofs and client attestation PoPs; `nil` where none could be made.
    let proofKey: (any DeviceSigningKey)?

    func requireProofKey(_ what: String) throws -> any DeviceSigningKey {
        guard let proofKey else {
            throw SignetError(.algUnsupported, "an App Attest key signs only assertions, and this device could make no proof key for \(what)")
        }
        return proofKey
    }

    func sign(_ request: HTTPMessage, now: Date) async throws -> HTTPMessage {
        var message = request
        var components = MessageSigner.defaultComponents(for: message)
        if message.fields.contains("dpop") { components.append("dpop") }
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
