// SPDX-License-Identifier: Apache-2.0
import Foundation
import SignetCore
import SignetSimulator
import SignetTestSupport
import Testing

@testable import SignetServer

/// The signature family of access modes, key by key: which keys each mode takes, written out as the
/// known answer (not derived from `TrustLevel.satisfies`); the level judged before any cryptography,
/// so a refused request costs no verification and claims no nonce; and a key past its validity or
/// revoked refused on every mode that took it.
@Suite(.awaitsCleanups) struct TrustLevelRouterTests {
    /// The keys a test signs with, one of each kind a gateway registers.
    enum Key: String, CaseIterable, CustomStringConvertible {
        case sharedSecret, deviceKey, appAttest, android, debug
        var description: String { rawValue }
        /// What the upstream is told (`Signet-Trust-Level`).
        var level: String {
            switch self {
            case .sharedSecret: "shared-secret"
            case .deviceKey: "device-key"
            case .appAttest: "app-attest"
            case .android: "android-key-attestation"
            case .debug: "debug"
            }
        }
    }

    /// Which keys each signature mode takes. A platform's mode takes that platform's attestation
    /// alone; `attested` either platform or an operator's debug device; the others a key at their
    /// level or above.
    static let takes: [String: Set<Key>] = [
        "verified": Set(Key.allCases),
        "shared-secret": Set(Key.allCases),
        "device-key": [.deviceKey, .appAttest, .android, .debug],
        "app-attest": [.appAttest],
        "android-key-attestation": [.android],
        "attested": [.appAttest, .android, .debug],
        // Known agents only (Web Bot Auth): no registered key (WebBotAuthTests for agents).
        "agent": [],
    ]

    /// Signs a message at a time with a nonce.
    typealias Signer = @Sendable (HTTPMessage, Date, String) throws -> HTTPMessage

    static func signer(_ signer: MessageSigner) -> Signer {
        { try signer.sign($0, created: $1, nonce: $2) }
    }

    /// A gateway with a route per signature mode (`/echo/mode/<mode>`, answered by the backend's
    /// echo) and a signer of each kind registered with it.
    static func start(clock: ManualClock? = nil, adjust: @escaping (inout GatewayConfiguration) -> Void = { _ in }) async throws
        -> (GatewayHarness, [Key: Signer], [Key: String])
    {
        let harness = try await GatewayHarness.start(store: .memory, transport: .router, clock: clock) { configuration in
            configuration.allowDebugDevices = true
            configuration.webBotAuth = .init(agents: [.init(name: "example-bot", directory: "http://127.0.0.1:9/keys")])
            configuration.routes.insert(contentsOf: takes.keys.sorted().map { .init(prefix: "/echo/mode/\($0)", access: .init(mode: $0)) }, at: 0)
            adjust(&configuration)
        }
        var signers: [Key: Signer] = [:]
        var devices: [Key: String] = [:]
        signers[.sharedSecret] = signer(MessageSigner(key: try SigningKey(secret: GatewayHarness.bankSecret), keyID: "bank-v1", algorithm: HMACSHA256()))
        let device = try await harness.register(.p256)
        signers[.deviceKey] = signer(device.signer)
        devices[.deviceKey] = device.deviceID

        let iPhone = SimulatedAppAttestDevice(appID: GatewayHarness.appID, ca: GatewayHarness.simulatorCA)
        let attested = try await harness.attest(iPhone)
        try #require(attested.status == 201, "\(attested.text)")
        let assertions = SimulatedAppAttestSigner(device: iPhone)
        signers[.appAttest] = { try assertions.sign($0, created: $1, nonce: $2) }
        devices[.appAttest] = attested.json["deviceId"] as? String

        let android = SimulatedAndroidDevice(ca: GatewayHarness.androidCA)
        let registered = try await harness.attestAndroid(android)
        try #require(registered.status == 201, "\(registered.text)")
        let androidKeyID = try #require(registered.json["keyid"] as? String)
        signers[.android] = signer(MessageSigner(key: android.signingKey, keyID: androidKeyID, algorithm: ECDSAP256SHA256()))
        devices[.android] = registered.json["deviceId"] as? String

        let debugKey = try SigningKey.generate(.p256)
        let debug = try await Self.registerDebug(debugKey, named: "CI runner", harness)
        try #require(debug.status == 201, "\(debug.text)")
        signers[.debug] = signer(MessageSigner(key: debugKey, keyID: try #require(debug.json["keyid"] as? String), algorithm: ECDSAP256SHA256()))
        devices[.debug] = debug.json["deviceId"] as? String
        return (harness, signers, devices)
    }

    /// `POST /signet/v1/devices/debug` for `key`, with the admin token.
    static func registerDebug(_ key: SigningKey, named name: String, _ harness: GatewayHarness) async throws -> GatewayHarness.Answer {
        let body = try JSONSerialization.data(withJSONObject: [
            "name": name, "publicKey": try JSONSerialization.jsonObject(with: Data(key.verificationKey.jwk.jsonString.utf8)),
        ])
        return try await GatewayHarness.send(
            method: "POST",
            url: harness.base + "/signet/v1/devices/debug",
            headers: [("Authorization", "Bearer \(GatewayHarness.adminToken)"), ("Content-Type", "application/json")],
            body: Array(body)
        )
    }

    static func get(_ harness: GatewayHarness, _ path: String, by sign: Signer, nonce: String = Nonce.random()) throws -> HTTPMessage {
        try sign(try HTTPMessage.request(method: "GET", uri: harness.base + path), Date(), nonce)
    }

    static func trustLevel(_ answer: GatewayHarness.Answer) -> String? {
        (answer.json["headers"] as? [String: String])?["signet-trust-level"]
    }

    @Test func everySignatureModeTakesExactlyTheKeysItsLevelAllows() async throws {
        // play-integrity adds Google's verdict to an Android key: PlayIntegrityStandardTests.
        let registered = Set(AccessModeRegistry.modes.filter { $0.signature != nil }.map(\.name)).subtracting(["play-integrity"])
        #expect(registered == Set(Self.takes.keys), "a signature mode without a known answer here, or one no longer registered")
        let (harness, signers, _) = try await Self.start()
        Cleanup.after { try await harness.stop() }
        let upstream = try #require(harness.upstream)
        for mode in Self.takes.keys.sorted() {
            for key in Key.allCases {
                let before = upstream.received.count
                let answer = try await GatewayHarness.send(try Self.get(harness, "/echo/mode/\(mode)/x", by: signers[key]!))
                if Self.takes[mode]!.contains(key) {
                    #expect(answer.status == 200 && Self.trustLevel(answer) == key.level, "\(mode) refused \(key): \(answer.status) \(answer.text)")
                    #expect(upstream.received.count == before + 1)
                } else {
                    #expect(answer.status == 403 && answer.reason == "trust_level_insufficient", "\(mode) took \(key): \(answer.status) \(answer.text)")
                    #expect(upstream.received.count == before, "\(mode) let \(key) reach the upstream")
                }
            }
        }
    }

    /// A key below the route is refused by its level alone: a garbage signature under it gets
    /// `trust_level_insufficient`, not `signature_invalid`, and a refusal claims no nonce — the
    /// same nonce, rightly signed, still passes where the key is taken.
    @Test func theLevelIsJudgedBeforeAnyCryptographyAndARefusalClaimsNoNonce() async throws {
        let (harness, signers, _) = try await Self.start()
        Cleanup.after { try await harness.stop() }
        for (key, mode) in [(Key.sharedSecret, "device-key"), (.deviceKey, "app-attest"), (.debug, "android-key-attestation")] {
            let garbage = try Self.get(harness, "/echo/mode/\(mode)/x", by: signers[key]!).replacingSignatureBytes()
            let refused = try await GatewayHarness.send(garbage)
            #expect(refused.status == 403 && refused.reason == "trust_level_insufficient", "\(key) on \(mode): \(refused.text)")

            let nonce = Nonce.random()
            let below = try await GatewayHarness.send(try Self.get(harness, "/echo/mode/\(mode)/x", by: signers[key]!, nonce: nonce))
            #expect(below.reason == "trust_level_insufficient")
            let taken = try await GatewayHarness.send(try Self.get(harness, "/echo/mode/verified/x", by: signers[key]!, nonce: nonce))
            #expect(taken.status == 200, "\(key): the refused request claimed its nonce: \(taken.text)")
            let replayed = try await GatewayHarness.send(try Self.get(harness, "/echo/mode/verified/y", by: signers[key]!, nonce: nonce))
            #expect(replayed.reason == "nonce_replayed")
        }
    }

    /// Shared secrets rotate by their validity, read on the gateway's clock: before `notBefore` a
    /// key is `key_not_yet_valid`, after `notAfter` `key_expired`, and in the overlap both pass.
    @Test func sharedSecretsRotateByTheirValidityOnTheGatewaysClock() async throws {
        let clock = ManualClock(Date())
        let switchover = clock.now.addingTimeInterval(3600)
        let old = Array("the-2026-secret-for-the-bank-api!".utf8)
        let new = Array("the-2027-secret-for-the-bank-api!".utf8)
        let harness = try await GatewayHarness.start(store: .memory, transport: .router, clock: clock) {
            $0.sharedSecrets = [
                .init(keyId: "bank-2026", secretBase64: Base64.encode(old), notAfter: switchover),
                .init(keyId: "bank-2027", secretBase64: Base64.encode(new), notBefore: switchover.addingTimeInterval(-600)),
            ]
            $0.policy.clockSkewSeconds = 0
        }
        Cleanup.after { try await harness.stop() }
        let signers = [
            "bank-2026": MessageSigner(key: try SigningKey(secret: old), keyID: "bank-2026", algorithm: HMACSHA256()),
            "bank-2027": MessageSigner(key: try SigningKey(secret: new), keyID: "bank-2027", algorithm: HMACSHA256()),
        ]
        func send(_ keyID: String) async throws -> GatewayHarness.Answer {
            // Signed at the gateway's time, so only the key's validity decides.
            try await GatewayHarness.send(
                try signers[keyID]!.sign(try HTTPMessage.request(method: "GET", uri: harness.base + "/echo/k"), created: clock.now, nonce: Nonce.random())
            )
        }
        let phases: [(TimeInterval, [String: String?])] = [
            (-1200, ["bank-2026": nil, "bank-2027": "key_not_yet_valid"]),
            (-300, ["bank-2026": nil, "bank-2027": nil]),
            (300, ["bank-2026": "key_expired", "bank-2027": nil]),
        ]
        for (offset, expected) in phases {
            clock.advance(by: switchover.addingTimeInterval(offset).timeIntervalSince(clock.now))
            for (keyID, reason) in expected.sorted(by: { $0.key < $1.key }) {
                let answer = try await send(keyID)
                if let reason {
                    #expect(answer.status == 401 && answer.reason == reason, "\(keyID) at \(offset): \(answer.text)")
                } else {
                    #expect(answer.status == 200, "\(keyID) at \(offset): \(answer.text)")
                }
            }
        }
    }

    /// A revoked device is refused `key_revoked` on every mode that took it, whatever its platform,
    /// and the others still pass.
    @Test func aRevokedDeviceIsRefusedOnEveryModeThatTookIt() async throws {
        let (harness, signers, devices) = try await Self.start()
        Cleanup.after { try await harness.stop() }
        for key in [Key.deviceKey, .appAttest, .android, .debug] {
            let revoked = try await GatewayHarness.send(
                method: "DELETE",
                url: harness.base + "/signet/v1/devices/\(devices[key]!)",
                headers: [("Authorization", "Bearer \(GatewayHarness.adminToken)")]
            )
            #expect((200..<300).contains(revoked.status), "\(key): \(revoked.text)")
            for mode in Self.takes.keys.sorted() where Self.takes[mode]!.contains(key) {
                let answer = try await GatewayHarness.send(try Self.get(harness, "/echo/mode/\(mode)/x", by: signers[key]!))
                #expect(answer.status == 401 && answer.reason == "key_revoked", "\(key) on \(mode): \(answer.text)")
            }
            let other = try await GatewayHarness.send(try Self.get(harness, "/echo/mode/verified/x", by: signers[.sharedSecret]!))
            #expect(other.status == 200)
        }
    }

    /// Debug devices are taken only while `allowDebugDevices` is on: a reload that turns it off
    /// refuses the ones registered before (`trust_level_insufficient`, on every route, `verified`
    /// too) and registers no more.
    @Test func debugDevicesAreRefusedOnceAllowDebugDevicesIsOff() async throws {
        let (harness, signers, _) = try await Self.start()
        Cleanup.after { try await harness.stop() }
        let debug = try #require(signers[.debug])
        #expect(try await GatewayHarness.send(try Self.get(harness, "/echo/mode/verified/x", by: debug)).status == 200)
        var production = try #require(harness.gateways[0].reloader.configuration)
        production.allowDebugDevices = false
        try harness.gateways[0].reloader.reload(to: production)
        for mode in ["verified", "device-key", "attested"] {
            let refused = try await GatewayHarness.send(try Self.get(harness, "/echo/mode/\(mode)/x", by: debug))
            #expect(refused.status == 403 && refused.reason == "trust_level_insufficient", "\(mode): \(refused.text)")
        }
        let registration = try await Self.registerDebug(try SigningKey.generate(.p256), named: "another runner", harness)
        #expect(registration.status == 403 && registration.reason == "trust_level_insufficient", "\(registration.text)")
    }

}
