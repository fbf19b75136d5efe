// SPDX-License-Identifier: Apache-2.0
import Foundation
import Logging
import SignetCore

/// Registration: a challenge, the provider's proof, the signer for later requests — and, for a
/// provider that keeps its registration (``PersistentAttestationProvider``), restoring it at launch
/// and registering again when the key is gone.
extension SignetClient {
    /// What an app calls at launch: restores the registration `provider` kept, or registers. From
    /// then on, when the key is gone — the signer throws `invalid_key` (a reinstall or a restore:
    /// the Keychain came along, the key did not; an erased Secure Enclave), or the gateway answers
    /// `invalid_key` or `unknown_key` (`key_revoked` too with
    /// ``SignetClientConfiguration/reregisterRevokedDevices``) — the client forgets the
    /// registration, registers again and resends the request, once.
    public func start(with provider: some PersistentAttestationProvider, origin: Origin? = nil) async throws {
        persistentProvider = provider
        registrationOrigin = origin ?? configuration.origins[0]
        do {
            if let restored = try await provider.restoredSigner() {
                signer = restored
                return
            }
        } catch let error as SignetError where error.code == .invalidKey {
            // The kept key no longer opens (an erased Secure Enclave): a new key, a new registration.
            configuration.logger.notice("the kept device key is gone: registering again")
            try await provider.reset()
        }
        try await register(using: provider, origin: registrationOrigin)
    }

    /// Challenge → registration (with `provider`'s proof) → the signer for later requests.
    /// Concurrent calls share one registration.
    ///
    /// A registration that cannot be delivered (no network) is sent again, with backoff, while its
    /// challenge is valid; a refusal is passed to the provider
    /// (``AttestationProvider/registrationRefused(_:)``) and thrown with the gateway's reason code.
    @discardableResult
    public func register(using provider: any AttestationProvider, origin: Origin? = nil) async throws
        -> RegisteredDevice
    {
        try await coalesced { try await self.registerNow(using: provider, origin: origin) }
    }

    /// Runs `work` unless a registration is under way, whose result it then shares. No suspension
    /// between the check and the claim: the actor makes them one step.
    private func coalesced(_ work: @escaping @Sendable () async throws -> RegisteredDevice) async throws -> RegisteredDevice {
        if let registrationInFlight { return try await registrationInFlight.value }
        let task = Task { try await work() }
        registrationInFlight = task
        defer { registrationInFlight = nil }
        return try await task.value
    }

    private func registerNow(using provider: any AttestationProvider, origin: Origin?) async throws -> RegisteredDevice {
        let registeringAt = origin ?? configuration.origins[0]
        let base = registeringAt.description
        // A spent challenge (a kept proof whose challenge the gateway had taken, or let expire)
        // gets one more try with a new challenge; the provider made a new proof by then.
        for attempt in 1...2 {
            let challenge = try await issuedChallenge(base: base)
            let registration = try await provider.registration(for: challenge)
            let answer = try await deliver(registration, to: base, until: challenge.expiresAt)
            guard answer.status == 201, let object = answer.json, let deviceID = object["deviceId"] as? String,
                let keyID = object["keyid"] as? String
            else {
                let error = SignetError(
                    answer.reason.flatMap(SignetError.Code.init(rawValue:)) ?? .registrationFailed,
                    "registration refused: \(answer.status) \(answer.text)"
                )
                // A refusal that will not change (a spent challenge, an attestation that does not
                // verify) spends a kept proof; a limit or an outage (429, 5xx) keeps it for later.
                if (400..<500).contains(answer.status), answer.status != 429 { await provider.registrationRefused(error) }
                if attempt == 1, [.challengeUnknown, .challengeExpired].contains(error.code) { continue }
                throw error
            }
            var registered = RegisteredDevice(
                deviceID: deviceID,
                keyID: keyID,
                certificateChainPEM: object["certificate"] as? String
            )
            registered.user = object["user"] as? String
            signer = try await provider.signer(for: registered)
            device = registered
            registrationGeneration += 1
            if let persistent = provider as? any PersistentAttestationProvider {
                persistentProvider = persistent
                registrationOrigin = registeringAt
            }
            configuration.logger.debug("registered", metadata: ["device": "\(deviceID)", "keyid": "\(keyID)"])
            return registered
        }
        throw SignetError(.registrationFailed, "the gateway refused two challenges in a row")
    }

    /// A new challenge, its expiry moved onto this device's clock.
    private func issuedChallenge(base: String) async throws -> IssuedChallenge {
        let answer = try await send("POST", base + "/signet/v1/challenges", sign: false)
        guard answer.status == 201, let value = answer.json?["challenge"] as? String else {
            throw SignetError(.malformedMessage, "no challenge: \(answer.status) \(answer.text)")
        }
        let expires = (answer.json?["expiresAt"] as? String).flatMap(Self.parseRFC3339)
        return IssuedChallenge(value: value, expiresAt: expires?.addingTimeInterval(-clockOffset))
    }

    /// Posts a registration; a failure to reach the gateway is retried (the same body: a proof is
    /// made once) with backoff while the challenge has time left.
    private func deliver(_ registration: RegistrationRequest, to base: String, until expiry: Date?) async throws
        -> ClientResponse
    {
        var failures = 0
        while true {
            do {
                return try await send(
                    "POST",
                    base + registration.path,
                    fields: [("Content-Type", "application/json")],
                    body: registration.body,
                    sign: false
                )
            } catch let error as SignetError where [.connectionFailed, .requestTimeout].contains(error.code) {
                failures += 1
                let delay = configuration.retry.delay(afterFailures: failures)
                guard let expiry, clock().addingTimeInterval(delay.seconds + 5) < expiry else { throw error }
                try await Task.sleep(for: delay)
            }
        }
    }

    /// Forgets the registration and registers again with the kept provider, unless another
    /// request did since `generation` (the registration the failed request was signed under);
    /// `false` when there is no such provider (the app registered with one that keeps nothing).
    func registerAgain(after generation: Int, refusedBy origin: Origin) async throws -> Bool {
        // Another gateway's word (one on another store) says nothing of this registration.
        guard let provider = persistentProvider, origin == registrationOrigin ?? configuration.origins[0] else { return false }
        guard generation == registrationGeneration else { return true }
        _ = try await coalesced {
            self.configuration.logger.notice("the device key is gone: registering again")
            try await provider.reset()
            return try await self.registerNow(using: provider, origin: origin)
        }
        return true
    }

    /// Whether `response` says the gateway no longer takes this device's key: its own refusal
    /// (``ClientResponse/gatewayRefusal``), not an upstream's body that happens to say so.
    func saysKeyIsGone(_ response: ClientResponse) -> Bool {
        guard let code = response.gatewayRefusal else { return false }
        return code == .invalidKey || code == .unknownKey || (code == .keyRevoked && configuration.reregisterRevokedDevices)
    }
}
