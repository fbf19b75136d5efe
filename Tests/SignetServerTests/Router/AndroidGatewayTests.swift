// SPDX-License-Identifier: Apache-2.0
import Crypto
import ExampleScores
import Foundation
import SignetAndroid
import SignetCore
import SignetMiddleware
import SignetServer
import SignetSimulator
import SignetTestSupport
import Testing
import X509

/// Android Key Attestation through the real gateway: a simulated Android device registers with its
/// chain, signs RFC 9421 requests with its Keystore key, and reaches the same `attested` route as
/// an App Attest device; each kind of bad attestation is refused with its code; the leaked-key
/// count flags then blocks a batch; the console and the upstream see both platforms.
@Suite(.awaitsCleanups) struct AndroidGatewayTests {
    static let bearer = [("Authorization", "Bearer \(GatewayHarness.adminToken)")]

    /// A device of the harness's development root, with the app the harness allows.
    static func android(batch: DevelopmentAndroidAttestationCA.Batch? = nil, _ change: (inout SimulatedAndroidDevice.Profile) -> Void = { _ in })
        -> SimulatedAndroidDevice
    {
        var profile = SimulatedAndroidDevice.Profile()
        change(&profile)
        return SimulatedAndroidDevice(ca: GatewayHarness.androidCA, batch: batch, profile: profile)
    }

    static func signer(_ device: SimulatedAndroidDevice, keyID: String) -> MessageSigner {
        MessageSigner(key: device.signingKey, keyID: keyID, algorithm: ECDSAP256SHA256())
    }

    static func echo(_ answer: GatewayHarness.Answer) -> ScoresBackend.Echo? {
        try? JSONDecoder().decode(ScoresBackend.Echo.self, from: Data(answer.body))
    }

    @Test func androidAndIOSDevicesReachTheSameAttestedRoute() async throws {
        let harness = try await GatewayHarness.start(transport: .router) {
            $0.routes.insert(.init(prefix: "/echo/attested", access: .attested), at: 0)
            $0.routes.insert(.init(prefix: "/echo/android", access: .androidKeyAttestation), at: 0)
        }
        Cleanup.after { try await harness.stop() }

        let android = Self.android()
        let registered = try await harness.attestAndroid(android)
        #expect(registered.status == 201, "\(registered.text)")
        #expect(registered.json["trustLevel"] as? String == "android-key-attestation")
        #expect(registered.json["securityLevel"] as? String == "tee")
        let androidKeyID = try #require(registered.json["keyid"] as? String)
        let androidDevice = try #require(registered.json["deviceId"] as? String)
        #expect(androidKeyID == (try android.signingKey.verificationKey.jwk.thumbprint))

        let iPhone = SimulatedAppAttestDevice(appID: GatewayHarness.appID, ca: GatewayHarness.simulatorCA)
        #expect(try await harness.attest(iPhone).status == 201)
        let plain = try await harness.register(.p256)

        func get(_ path: String) throws -> HTTPMessage { try HTTPMessage.request(method: "GET", uri: harness.base + path) }
        // Both platforms reach the route that asks for an attested device, and the upstream learns which.
        let fromAndroid = try await GatewayHarness.send(try Self.signer(android, keyID: androidKeyID).sign(try get("/echo/attested/a"), created: Date(), nonce: Nonce.random()))
        #expect(fromAndroid.status == 200, "\(fromAndroid.text)")
        #expect(Self.echo(fromAndroid)?.headers["signet-trust-level"] == "android-key-attestation")
        #expect(Self.echo(fromAndroid)?.headers["signet-device"] == androidDevice)
        let fromIPhone = try await GatewayHarness.send(try SimulatedAppAttestSigner(device: iPhone).sign(try get("/echo/attested/i"), created: Date(), nonce: Nonce.random()))
        #expect(fromIPhone.status == 200, "\(fromIPhone.text)")
        #expect(Self.echo(fromIPhone)?.headers["signet-trust-level"] == "app-attest")
        // A key that is not attested does not; each platform's own route takes that platform only.
        let fromPlain = try await GatewayHarness.send(try plain.signer.sign(try get("/echo/attested/p"), created: Date(), nonce: Nonce.random()))
        #expect(fromPlain.status == 403 && fromPlain.reason == "trust_level_insufficient", "\(fromPlain.text)")
        let androidOnAppAttest = try await GatewayHarness.send(try Self.signer(android, keyID: androidKeyID).sign(try get("/attested/vault"), created: Date(), nonce: Nonce.random()))
        #expect(androidOnAppAttest.reason == "trust_level_insufficient", "\(androidOnAppAttest.text)")
        let iPhoneOnAndroid = try await GatewayHarness.send(try SimulatedAppAttestSigner(device: iPhone).sign(try get("/echo/android/x"), created: Date(), nonce: Nonce.random()))
        #expect(iPhoneOnAndroid.reason == "trust_level_insufficient", "\(iPhoneOnAndroid.text)")
        // The Android device's signed POST is verified like any: replay and tampering refused.
        let post = try Self.signer(android, keyID: androidKeyID).sign(try harness.scorePost(), created: Date(), nonce: Nonce.random())
        #expect(try await GatewayHarness.send(post).status == 201)
        #expect(try await GatewayHarness.send(post).reason == "nonce_replayed")
        var tampered = try Self.signer(android, keyID: androidKeyID).sign(try harness.scorePost(), created: Date(), nonce: Nonce.random())
        tampered.body = Array("{\"name\":\"Gilgamesh\",\"score\":999}".utf8)
        #expect(try await GatewayHarness.send(tampered).reason == "digest_mismatch")

        // The admin API and the console show the platform and what the attestation said.
        let record = try await GatewayHarness.send(method: "GET", url: harness.base + "/signet/v1/devices/\(androidDevice)", headers: Self.bearer)
        let attributes = try #require(record.json["attributes"] as? [String: String], "\(record.text)")
        #expect(record.json["trustLevel"] as? String == "android-key-attestation")
        #expect(attributes["platform"] == "android" && attributes["security_level"] == "tee")
        #expect(attributes["package"] == "com.example.scores@14" && attributes["os_patch_level"] == "202410")
        #expect(attributes["verified_boot_state"] == "verified" && attributes["device_locked"] == "true")
        #expect(attributes["attestation_batch"] == AndroidAttestationRegistrar.batchName(GatewayHarness.androidCA.batch.certificate))
        let browser = OperatorConsoleTests.Browser(base: harness.base)
        _ = try await browser.signIn()
        let list = try await browser.get("/signet/admin/devices")
        #expect(list.text.contains("android-key-attestation") && list.text.contains("app-attest"), "\(list.text)")
        let page = try await browser.get("/signet/admin/devices/\(androidDevice)")
        #expect(page.text.contains("<dt>platform</dt><dd>android</dd>"), "\(page.text)")
    }

    @Test func eachBadAttestationIsRefusedWithItsCode() async throws {
        let harness = try await GatewayHarness.start(transport: .router)
        Cleanup.after { try await harness.stop() }
        // An emulator (software level), an unlocked phone, another app, another signer, another root.
        #expect(try await harness.attestAndroid(Self.android { $0.securityLevel = .software }).reason == "attestation_security_level")
        #expect(try await harness.attestAndroid(Self.android { $0.deviceLocked = false }).reason == "attestation_boot_state")
        #expect(try await harness.attestAndroid(Self.android { $0.packageName = "com.evil.scores" }).reason == "app_id_mismatch")
        #expect(try await harness.attestAndroid(Self.android { $0.signingDigests = [Array(repeating: 7, count: 32)] }).reason == "app_id_mismatch")
        let rogue = SimulatedAndroidDevice(ca: try DevelopmentAndroidAttestationCA())
        #expect(try await harness.attestAndroid(rogue).reason == "attestation_root_unknown")
        // A chain made for another challenge, and a challenge used twice.
        let device = Self.android()
        let challenge = try await harness.challenge()
        let chain = try device.attest(challenge: Array("another challenge".utf8))
        let mismatched = try await GatewayHarness.send(
            method: "POST",
            url: harness.base + "/signet/v1/devices/android",
            headers: [("Content-Type", "application/json")],
            body: Array(try JSONSerialization.data(withJSONObject: ["challenge": challenge, "chain": chain.map { Base64.encode($0) }]))
        )
        #expect(mismatched.status == 401 && mismatched.reason == "attestation_nonce_mismatch", "\(mismatched.text)")
        #expect(try await harness.attestAndroid(device, challenge: challenge).reason == "challenge_unknown")
        // Shapes that are not a registration.
        for body in [#"{"challenge":"x"}"#, #"{"challenge":"x","chain":["AAAA"]}"#, #"{"challenge":"x","chain":["!!","AAAA"]}"#, "[]"] {
            let answer = try await GatewayHarness.send(
                method: "POST",
                url: harness.base + "/signet/v1/devices/android",
                headers: [("Content-Type", "application/json")],
                body: Array(body.utf8)
            )
            #expect(answer.status == 400 && answer.reason == "malformed_message", "\(body): \(answer.text)")
        }
        // Nothing above left a device behind.
        let after = try await harness.attestAndroid(Self.android())
        #expect(after.status == 201, "\(after.text)")
    }

    /// A chain read on the gateway's clock outside its certificates' validity, and a device below
    /// the patch level the operator asks for, are refused with their codes.
    @Test func aChainOutOfItsValidityOrBelowThePatchLevelIsRefused() async throws {
        let clock = ManualClock(Date().addingTimeInterval(-40 * 365 * 86400))
        let past = try await GatewayHarness.start(transport: .router, clock: clock)
        Cleanup.after { try await past.stop() }
        let early = try await past.attestAndroid(Self.android())
        #expect(early.status == 401 && early.reason == "attestation_expired", "\(early.text)")
        clock.advance(by: 80 * 365 * 86400)
        let late = try await past.attestAndroid(Self.android())
        #expect(late.status == 401 && late.reason == "attestation_expired", "\(late.text)")

        let harness = try await GatewayHarness.start(transport: .router) { $0.androidAttestation?.minimumPatchLevel = 202_501 }
        Cleanup.after { try await harness.stop() }
        let old = try await harness.attestAndroid(Self.android { $0.osPatchLevel = 202_412 })
        #expect(old.status == 401 && old.reason == "attestation_patch_level", "\(old.text)")
        let current = try await harness.attestAndroid(Self.android { $0.osPatchLevel = 202_501 })
        #expect(current.status == 201, "\(current.text)")
    }

    @Test func withoutAndroidConfiguredTheRouteIsNotThere() async throws {
        let harness = try await GatewayHarness.start(transport: .router) { $0.androidAttestation = nil }
        Cleanup.after { try await harness.stop() }
        let answer = try await harness.attestAndroid(Self.android())
        #expect(answer.status == 404 && answer.reason == "not_found", "\(answer.text)")
    }

    /// Above `flagAt` devices of one batch in the window are flagged; above `blockAt` refused when
    /// enforcing, flagged in shadow mode; another batch is counted apart.
    @Test(arguments: [GatewayConfiguration.AndroidAttestation.LeakedKeys.Mode.enforce, .shadow])
    func theLeakedKeyDefenceFlagsThenBlocksABatch(_ mode: GatewayConfiguration.AndroidAttestation.LeakedKeys.Mode) async throws {
        let harness = try await GatewayHarness.start(transport: .router) {
            $0.androidAttestation?.leakedKeys = .init(windowSeconds: 3600, flagAt: 1, blockAt: 2, mode: mode)
        }
        Cleanup.after { try await harness.stop() }
        let batch = try GatewayHarness.androidCA.issueBatch()
        func flag(_ answer: GatewayHarness.Answer) async throws -> String? {
            let id = try #require(answer.json["deviceId"] as? String, "\(answer.text)")
            let record = try await GatewayHarness.send(method: "GET", url: harness.base + "/signet/v1/devices/\(id)", headers: Self.bearer)
            return (record.json["attributes"] as? [String: String])?["attestation_batch_flag"]
        }
        let first = try await harness.attestAndroid(Self.android(batch: batch))
        #expect(first.status == 201)
        #expect(try await flag(first) == nil)
        let second = try await harness.attestAndroid(Self.android(batch: batch))
        #expect(try await flag(second)?.hasPrefix("flagged: 2 devices") == true)
        let third = try await harness.attestAndroid(Self.android(batch: batch))
        if mode == .enforce {
            #expect(third.status == 403 && third.reason == "attestation_batch_exceeded", "\(third.text)")
        } else {
            #expect(third.status == 201, "\(third.text)")
            #expect(try await flag(third)?.hasPrefix("over the blocking limit (shadow mode): 3 devices") == true)
        }
        // Another batch starts at one.
        let other = try await harness.attestAndroid(Self.android(batch: try GatewayHarness.androidCA.issueBatch()))
        #expect(other.status == 201)
        #expect(try await flag(other) == nil)
    }

    /// A leaked batch key hides under a fresh intermediate of its own for each registration: still
    /// counted under itself, so enforcing blocks it; the same key presented twice counts once.
    @Test func aLeakedBatchUnderFreshIntermediatesIsStillCounted() async throws {
        let harness = try await GatewayHarness.start(transport: .router) {
            $0.androidAttestation?.leakedKeys = .init(windowSeconds: 3600, flagAt: 1, blockAt: 2, mode: .enforce)
        }
        Cleanup.after { try await harness.stop() }
        let leaked = try GatewayHarness.androidCA.issueBatch()
        var answers: [GatewayHarness.Answer] = []
        for _ in 0..<3 {
            let hidden = try GatewayHarness.androidCA.issueBatch(under: leaked)
            answers.append(try await harness.attestAndroid(Self.android(batch: hidden)))
        }
        #expect(answers.map(\.status) == [201, 201, 403], "\(answers.map(\.text))")
        #expect(answers[2].reason == "attestation_batch_exceeded")
        let detail = answers[2].json["detail"] as? String ?? ""
        let hasDigits = detail.unicodeScalars.contains { CharacterSet.decimalDigits.contains($0) }
        #expect(!hasDigits, "the count stays with the operator: \(detail)")
        // One device presenting its key again (a new challenge, the same key): counted once, then
        // refused as registered already.
        let batch = try GatewayHarness.androidCA.issueBatch()
        let device = Self.android(batch: batch)
        #expect(try await harness.attestAndroid(device).status == 201)
        let again = try await harness.attestAndroid(device)
        #expect(again.status == 409 && again.reason == "device_exists", "\(again.text)")
        #expect(try await harness.attestAndroid(Self.android(batch: batch)).status == 201, "two devices of a batch, not three")
    }

    /// Google's list (here from a file) refuses a chain whose batch certificate is revoked.
    @Test func aRevokedBatchCertificateIsRefused() async throws {
        let batch = try GatewayHarness.androidCA.issueBatch()
        let serial = batch.certificate.serialNumber.bytes.map { String(format: "%02x", $0) }.joined()
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("signet-status-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let file = folder.appendingPathComponent("status.json")
        try Data(#"{"entries": {"\#(serial)": {"status": "REVOKED", "reason": "KEY_COMPROMISE"}}}"#.utf8).write(to: file)
        let harness = try await GatewayHarness.start(transport: .router) { $0.androidAttestation?.statusList = .init(file: file.path) }
        Cleanup.after {
            try await harness.stop()
            try? FileManager.default.removeItem(at: folder)
        }
        let revoked = try await harness.attestAndroid(Self.android(batch: batch))
        #expect(revoked.status == 401 && revoked.reason == "attestation_revoked", "\(revoked.text)")
        #expect(try await harness.attestAndroid(Self.android()).status == 201)
    }
}

/// Play Integrity at registration: a classic token (made by joserfc as Google Play makes them) whose
/// nonce is the registration's challenge is checked besides the key attestation.
@Suite(.awaitsCleanups) struct AndroidPlayIntegrityGatewayTests {
    /// Google's keys for classic tokens, and tokens made with them by the Python peer.
    struct PlayKeys {
        let folder: URL
        let decryption: String
        let signingFile: URL
        let settings: GatewayConfiguration.AndroidAttestation.PlayIntegrity

        init() throws {
            folder = FileManager.default.temporaryDirectory.appendingPathComponent("signet-play-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            decryption = SymmetricKey(size: .bits256).withUnsafeBytes { Base64.encode(Array($0)) }
            let google = P256.Signing.PrivateKey()
            let decryptionFile = folder.appendingPathComponent("play-decryption.txt")
            try Data(decryption.utf8).write(to: decryptionFile)
            let verificationFile = folder.appendingPathComponent("play-verification.txt")
            try Data(Base64.encode(Array(google.publicKey.derRepresentation)).utf8).write(to: verificationFile)
            signingFile = folder.appendingPathComponent("google.pem")
            try Data(google.pemRepresentation.utf8).write(to: signingFile)
            settings = .init(decryptionKeyFile: decryptionFile.path, verificationKeyFile: verificationFile.path)
        }

        /// A classic token for `nonce`; `deviceExtras` and `environment` add the opt-in signals.
        func token(
            nonce: String,
            device: [String] = ["MEETS_DEVICE_INTEGRITY"],
            deviceExtras: [String: Any] = [:],
            environment: [String: Any]? = nil
        ) async throws -> String {
            var deviceIntegrity: [String: Any] = ["deviceRecognitionVerdict": device]
            deviceIntegrity.merge(deviceExtras) { $1 }
            var verdict: [String: Any] = [
                "requestDetails": [
                    "requestPackageName": "com.example.scores", "nonce": nonce,
                    "timestampMillis": String(Int64(Date().timeIntervalSince1970 * 1000)),
                ],
                "appIntegrity": [
                    "appRecognitionVerdict": "PLAY_RECOGNIZED", "packageName": "com.example.scores",
                    "certificateSha256Digest": [Base64.urlEncode(SimulatedAndroidDevice.developmentSigningDigest)],
                ],
                "deviceIntegrity": deviceIntegrity,
                "accountDetails": ["appLicensingVerdict": "LICENSED"],
            ]
            if let environment { verdict["environmentDetails"] = environment }
            let file = folder.appendingPathComponent("verdict-\(UUID().uuidString).json")
            try JSONSerialization.data(withJSONObject: verdict).write(to: file)
            return try await PythonPeer.run("play_integrity_peer.py", ["make", decryption, signingFile.path, file.path])
                .trimmingCharacters(in: .whitespacesAndNewlines)
        }
    }

    /// A request to `path` signed by `device`, and the nonce its Play Integrity token must carry:
    /// the SHA-256 of the signature's base.
    static func signedForIntegrity(_ device: SimulatedAndroidDevice, keyID: String, _ url: String) throws -> (HTTPMessage, String) {
        let message = try AndroidGatewayTests.signer(device, keyID: keyID).sign(try HTTPMessage.request(method: "GET", uri: url), created: Date(), nonce: Nonce.random())
        let parameters = try SignatureFields(message.fields).entries[0].parameters
        let base = try SignatureBase(message: message, parameters: parameters).bytes
        return (message, Base64.urlEncode(Array(SHA256.hash(data: base))))
    }

    @Test func aRegistrationCarriesAVerdictForItsChallenge() async throws {
        let play = try PlayKeys()
        let harness = try await GatewayHarness.start(transport: .router) {
            $0.androidAttestation?.playIntegrity = play.settings
            $0.routes.insert(.init(prefix: "/echo/purchase", access: .playIntegrity), at: 0)
        }
        Cleanup.after {
            try await harness.stop()
            try? FileManager.default.removeItem(at: play.folder)
        }
        func token(nonce: String, device: [String] = ["MEETS_DEVICE_INTEGRITY"]) async throws -> String {
            try await play.token(nonce: nonce, device: device)
        }
        func register(_ challenge: String, token: String?) async throws -> GatewayHarness.Answer {
            try await harness.attestAndroid(AndroidGatewayTests.android(), challenge: challenge, integrityToken: token)
        }
        let challenge = try await harness.challenge()
        let registered = try await register(challenge, token: try await token(nonce: challenge))
        #expect(registered.status == 201, "\(registered.text)")
        let id = try #require(registered.json["deviceId"] as? String)
        let record = try await GatewayHarness.send(method: "GET", url: harness.base + "/signet/v1/devices/\(id)", headers: AndroidGatewayTests.bearer)
        let attributes = record.json["attributes"] as? [String: String]
        #expect(attributes?["play_device_integrity"] == "MEETS_DEVICE_INTEGRITY" && attributes?["play_app_recognition"] == "PLAY_RECOGNIZED")

        // Without a token; with a token requested for another challenge; from a device below the bar.
        let missing = try await register(try await harness.challenge(), token: nil)
        #expect(missing.status == 401 && missing.reason == "token_missing", "\(missing.text)")
        let other = try await harness.challenge()
        let stolen = try await register(other, token: try await token(nonce: challenge))
        #expect(stolen.status == 401 && stolen.reason == "attestation_nonce_mismatch", "\(stolen.text)")
        let basic = try await harness.challenge()
        let weak = try await register(basic, token: try await token(nonce: basic, device: ["MEETS_BASIC_INTEGRITY"]))
        #expect(weak.status == 403 && weak.reason == "integrity_verdict_insufficient", "\(weak.text)")

        // A play-integrity route: the registered device signs, then asks Play for a verdict whose
        // nonce is the SHA-256 of that signature's base, and sends both.
        let device = AndroidGatewayTests.android()
        let enrolment = try await harness.challenge()
        let enrolled = try await harness.attestAndroid(device, challenge: enrolment, integrityToken: try await token(nonce: enrolment))
        let keyID = try #require(enrolled.json["keyid"] as? String, "\(enrolled.text)")
        func signed() throws -> (HTTPMessage, String) {
            try Self.signedForIntegrity(device, keyID: keyID, harness.base + "/echo/purchase/42")
        }
        var (purchase, digest) = try signed()
        let unbound = try await GatewayHarness.send(purchase)
        #expect(unbound.status == 401 && unbound.reason == "token_missing", "\(unbound.text)")
        let bound = try await token(nonce: digest)
        purchase.fields.append(name: "Signet-Integrity-Token", value: bound)
        let bought = try await GatewayHarness.send(purchase)
        #expect(bought.status == 200, "\(bought.text)")
        #expect(AndroidGatewayTests.echo(bought)?.headers["signet-trust-level"] == "android-key-attestation")
        #expect(AndroidGatewayTests.echo(bought)?.headers["signet-integrity-token"] == nil, "the token stays at the gateway")
        // The same request again (its nonce claimed), and a second token field.
        let replayed = try await GatewayHarness.send(purchase)
        #expect(replayed.reason == "nonce_replayed", "\(replayed.text)")
        var doubled = try signed().0
        doubled.fields.append(name: "Signet-Integrity-Token", value: bound)
        doubled.fields.append(name: "Signet-Integrity-Token", value: bound)
        #expect(try await GatewayHarness.send(doubled).reason == "malformed_header")
        // A signature without a nonce (its base could come again), and one by a shared secret.
        let nonceless = try AndroidGatewayTests.signer(device, keyID: keyID).sign(
            try HTTPMessage.request(method: "GET", uri: harness.base + "/echo/purchase/43", fields: [("Signet-Integrity-Token", bound)]),
            created: Date()
        )
        #expect(try await GatewayHarness.send(nonceless).reason == "nonce_missing")
        let shared = try MessageSigner(key: try SigningKey(secret: GatewayHarness.bankSecret), keyID: "bank-v1", algorithm: HMACSHA256()).sign(
            try HTTPMessage.request(method: "GET", uri: harness.base + "/echo/purchase/44", fields: [("Signet-Integrity-Token", bound)]),
            created: Date(),
            nonce: Nonce.random()
        )
        let sharedAnswer = try await GatewayHarness.send(shared)
        #expect(sharedAnswer.status == 403 && sharedAnswer.reason == "trust_level_insufficient", "\(sharedAnswer.text)")
        // The same verdict on another request (another signature base) is refused.
        (purchase, digest) = try signed()
        purchase.fields.append(name: "Signet-Integrity-Token", value: bound)
        let moved = try await GatewayHarness.send(purchase)
        #expect(moved.status == 401 && moved.reason == "attestation_nonce_mismatch", "\(moved.text)")
    }

    /// Play Integrity's opt-in signals of 2026: kept in the device record; outside the policy, each
    /// refused with its own code, or — with `action: flag` — let through, the findings in the
    /// record and sent upstream as `Signet-Integrity-Flags` on `play-integrity` routes.
    @Test(arguments: [GatewayConfiguration.RiskAction.refuse, .flag])
    func theEnvironmentSignalsAreKeptAndRefusedOrFlagged(_ action: GatewayConfiguration.RiskAction) async throws {
        let play = try PlayKeys()
        let harness = try await GatewayHarness.start(transport: .router) {
            var settings = play.settings
            var environment = GatewayConfiguration.AndroidAttestation.PlayIntegrity.Environment()
            environment.maximumPlayProtectRisk = "NO_DATA"
            environment.refuseRecallBits = [1]
            environment.minimumSdkVersion = 33
            environment.action = action
            settings.environment = environment
            $0.androidAttestation?.playIntegrity = settings
            $0.routes.insert(.init(prefix: "/echo/purchase", access: .playIntegrity), at: 0)
        }
        Cleanup.after {
            try await harness.stop()
            try? FileManager.default.removeItem(at: play.folder)
        }
        func token(nonce: String, risk: String = "NO_ISSUES", recall: Bool = false, sdk: Int = 34) async throws -> String {
            try await play.token(
                nonce: nonce,
                deviceExtras: [
                    "recentDeviceActivity": ["deviceActivityLevel": "LEVEL_2"],
                    "deviceAttributes": ["sdkVersion": sdk],
                    "deviceRecall": ["values": ["bitFirst": recall, "bitSecond": false, "bitThird": true]],
                ],
                environment: ["playProtectVerdict": risk, "appAccessRiskVerdict": ["appsDetected": ["KNOWN_INSTALLED"]]]
            )
        }
        func register(_ device: SimulatedAndroidDevice = AndroidGatewayTests.android(), risk: String = "NO_ISSUES", recall: Bool = false, sdk: Int = 34)
            async throws -> GatewayHarness.Answer
        {
            let challenge = try await harness.challenge()
            return try await harness.attestAndroid(device, challenge: challenge, integrityToken: try await token(nonce: challenge, risk: risk, recall: recall, sdk: sdk))
        }
        func attributes(_ answer: GatewayHarness.Answer) async throws -> [String: String] {
            let id = try #require(answer.json["deviceId"] as? String, "\(answer.text)")
            let record = try await GatewayHarness.send(method: "GET", url: harness.base + "/signet/v1/devices/\(id)", headers: AndroidGatewayTests.bearer)
            return record.json["attributes"] as? [String: String] ?? [:]
        }

        // Within the policy: registered either way, the signals kept, nothing flagged.
        let clean = try await register()
        #expect(clean.status == 201, "\(clean.text)")
        let kept = try await attributes(clean)
        #expect(kept["play_protect"] == "NO_ISSUES" && kept["play_apps_detected"] == "KNOWN_INSTALLED", "\(kept)")
        #expect(kept["play_device_activity"] == "LEVEL_2" && kept["play_sdk_version"] == "34" && kept["play_device_recall"] == "3", "\(kept)")
        #expect(kept["play_integrity_flags"] == nil)

        // Outside it: each signal its own code, or flagged.
        let outside: [(risk: String, recall: Bool, sdk: Int, codes: [String])] = [
            ("HIGH_RISK", false, 34, ["play_protect_risk"]),
            ("NO_ISSUES", true, 34, ["device_recalled"]),
            ("NO_ISSUES", false, 30, ["device_sdk_outdated"]),
            ("MEDIUM_RISK", true, 34, ["play_protect_risk", "device_recalled"]),
        ]
        for (risk, recall, sdk, codes) in outside {
            let answer = try await register(risk: risk, recall: recall, sdk: sdk)
            switch action {
            case .refuse:
                #expect(answer.status == 403 && answer.reason == codes[0], "\(answer.text)")
            case .flag:
                #expect(answer.status == 201, "\(answer.text)")
                #expect(try await attributes(answer)["play_integrity_flags"] == codes.joined(separator: ","))
            }
        }

        // A device flagged at registration carries its flags on everything it signs.
        if action == .flag {
            let flagged = AndroidGatewayTests.android()
            let registered = try await register(flagged, risk: "HIGH_RISK")
            let flaggedKey = try #require(registered.json["keyid"] as? String, "\(registered.text)")
            let signed = try AndroidGatewayTests.signer(flagged, keyID: flaggedKey).sign(
                try HTTPMessage.request(method: "GET", uri: harness.base + "/echo/anything"), created: Date(), nonce: Nonce.random())
            let answer = try await GatewayHarness.send(signed)
            #expect(answer.status == 200 && AndroidGatewayTests.echo(answer)?.headers["signet-integrity-flags"] == "play_protect_risk", "\(answer.text)")
            // On a play-integrity route, with this request's findings that are new.
            var (purchase, nonce) = try Self.signedForIntegrity(flagged, keyID: flaggedKey, harness.base + "/echo/purchase/0")
            purchase.fields.append(name: "Signet-Integrity-Token", value: try await token(nonce: nonce, risk: "HIGH_RISK", recall: true))
            let bought = try await GatewayHarness.send(purchase)
            #expect(AndroidGatewayTests.echo(bought)?.headers["signet-integrity-flags"] == "play_protect_risk, device_recalled", "\(bought.text)")
        }

        // On a play-integrity route the same, per request; the upstream reads the flags.
        let device = AndroidGatewayTests.android()
        let enrolled = try await register(device)
        let keyID = try #require(enrolled.json["keyid"] as? String, "\(enrolled.text)")
        let cases: [(risk: String, recall: Bool, codes: [String])] = [
            ("NO_ISSUES", false, []), ("POSSIBLE_RISK", true, ["play_protect_risk", "device_recalled"]),
        ]
        for (risk, recall, codes) in cases {
            var (purchase, nonce) = try Self.signedForIntegrity(device, keyID: keyID, harness.base + "/echo/purchase/1")
            purchase.fields.append(name: "Signet-Integrity-Token", value: try await token(nonce: nonce, risk: risk, recall: recall))
            let answer = try await GatewayHarness.send(purchase)
            let flags = AndroidGatewayTests.echo(answer)?.headers["signet-integrity-flags"]
            if codes.isEmpty || action == .flag {
                #expect(answer.status == 200, "\(answer.text)")
                let expected: String? = codes.isEmpty ? nil : codes.joined(separator: ", ")
                #expect(flags == expected, "\(answer.text)")
            } else {
                #expect(answer.status == 403 && answer.reason == codes[0], "\(answer.text)")
            }
        }
        // A client cannot send the flags itself: the gateway's own field is the only one.
        var (forged, nonce) = try Self.signedForIntegrity(device, keyID: keyID, harness.base + "/echo/purchase/2")
        forged.fields.append(name: "Signet-Integrity-Token", value: try await token(nonce: nonce))
        forged.fields.append(name: "Signet-Integrity-Flags", value: "none")
        let answer = try await GatewayHarness.send(forged)
        #expect(answer.status == 200 && AndroidGatewayTests.echo(answer)?.headers["signet-integrity-flags"] == nil, "\(answer.text)")
    }
}
