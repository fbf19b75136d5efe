// SPDX-License-Identifier: Apache-2.0
import Foundation
import NIOHTTP1
import SignetCore
import SignetServer
import SignetSimulator
import SignetTestSupport
import Testing

/// DPoP-bound app tokens (RFC 9449) on `app-token` routes with `dpop` or `dpopNonce`: the token is
/// taken only with a proof by the key it is bound to, each proof once; every way a proof can be
/// wrong is refused with its code and a `WWW-Authenticate: DPoP` challenge; a nonce route hands
/// out `DPoP-Nonce` and takes proofs that carry it.
@Suite(.awaitsCleanups) struct DPoPTests {
    static func start(transport: GatewayHarness.Transport = .router) async throws -> GatewayHarness {
        try await AppTokenTests.start(transport: transport) { configuration, _ in
            configuration.routes.insert(contentsOf: [
                .init(prefix: "/echo/bound", access: .init(mode: "app-token", options: ["dpop": .bool(true)])),
                .init(prefix: "/echo/nonce", access: .init(mode: "app-token", options: ["dpopNonce": .bool(true)])),
                .init(prefix: "/echo/watched", access: .init(mode: "app-token", options: ["dpop": .bool(true)]), mode: .monitor),
            ], at: 0)
        }
    }

    static func token(_ harness: GatewayHarness, _ device: GatewayHarness.Device) async throws -> String {
        try #require(try await AppTokenTests.issue(harness, device).json["token"] as? String)
    }

    static func proof(
        _ key: SigningKey,
        _ url: String,
        method: String = "GET",
        token: String?,
        nonce: String? = nil,
        now: Date = Date()
    ) throws -> String {
        try DPoPProof.make(key: key, method: method, url: url, accessToken: token, nonce: nonce, now: now)
    }

    static func send(_ url: String, _ fields: [(String, String)], method: String = "GET") async throws -> GatewayHarness.Answer {
        try await GatewayHarness.send(method: method, url: url, headers: fields)
    }

    @Test func aBoundTokenIsTakenOnlyWithAProofOfItsKeyOnce() async throws {
        let harness = try await Self.start()
        Cleanup.after { try await harness.stop() }
        let device = try await harness.register(.p256)
        let token = try await Self.token(harness, device)
        let url = harness.base + "/echo/bound/x"

        // As a bearer token it is refused, with the challenge a DPoP client reads.
        let bare = try await Self.send(url, [("Signet-Token", token)])
        #expect(bare.status == 401 && bare.reason == "dpop_proof_missing", "\(bare.text)")
        #expect(bare.headers["WWW-Authenticate"].first?.hasPrefix("DPoP algs=\"") == true, "\(bare.headers)")
        let bearer = try await Self.send(url, [("Authorization", "Bearer \(token)")])
        #expect(bearer.status == 401 && bearer.reason == "token_missing", "\(bearer.text)")

        // With a proof, in either field the token may come in; each proof once.
        let proof = try Self.proof(device.key, url, token: token)
        let accepted = try await Self.send(url, [("Authorization", "DPoP \(token)"), ("DPoP", proof)])
        #expect(accepted.status == 200, "\(accepted.text)")
        let replayed = try await Self.send(url, [("Authorization", "DPoP \(token)"), ("DPoP", proof)])
        #expect(replayed.status == 401 && replayed.reason == "dpop_proof_replayed", "\(replayed.text)")
        #expect(replayed.headers["WWW-Authenticate"].first?.hasPrefix("DPoP error=\"invalid_dpop_proof\"") == true)
        let inField = try await Self.send(url, [("Signet-Token", token), ("DPoP", try Self.proof(device.key, url, token: token))])
        #expect(inField.status == 200, "\(inField.text)")
        let both = try await Self.send(url, [("Authorization", "DPoP \(token)"), ("Signet-Token", token), ("DPoP", try Self.proof(device.key, url, token: token))])
        #expect(both.status == 401 && both.reason == "token_invalid", "\(both.text)")

        // Each way a proof can be wrong.
        let stranger = try SigningKey.generate(.p256)
        let cases: [(String, [(String, String)], String)] = [
            ("another key", [("DPoP", try Self.proof(stranger, url, token: token))], "dpop_key_mismatch"),
            ("another URL", [("DPoP", try Self.proof(device.key, harness.base + "/echo/bound/y", token: token))], "dpop_proof_invalid"),
            ("another method", [("DPoP", try Self.proof(device.key, url, method: "POST", token: token))], "dpop_proof_invalid"),
            ("another token", [("DPoP", try Self.proof(device.key, url, token: token + "x"))], "dpop_proof_invalid"),
            ("no ath", [("DPoP", try Self.proof(device.key, url, token: nil))], "dpop_proof_invalid"),
            ("made an hour ago", [("DPoP", try Self.proof(device.key, url, token: token, now: Date().addingTimeInterval(-3600)))], "dpop_proof_stale"),
            ("two proofs", [("DPoP", try Self.proof(device.key, url, token: token)), ("DPoP", try Self.proof(device.key, url, token: token))], "dpop_proof_invalid"),
            ("garbage", [("DPoP", "a.b.c")], "dpop_proof_invalid"),
        ]
        for (name, fields, expected) in cases {
            let answer = try await Self.send(url, [("Authorization", "DPoP \(token)")] + fields)
            #expect(answer.status == 401 && answer.reason == expected, "\(name): \(answer.text)")
        }
        // A refused token on a DPoP route asks for DPoP too.
        let badToken = try await Self.send(url, [("Authorization", "DPoP e30.e30.AAAA"), ("DPoP", try Self.proof(device.key, url, token: "e30.e30.AAAA"))])
        #expect(badToken.reason == "token_invalid" && badToken.headers["WWW-Authenticate"].first?.hasPrefix("DPoP error=\"invalid_token\"") == true)
        // The plain app-token route still takes the token as a bearer token.
        #expect(try await Self.send(harness.base + "/echo/token/x", [("Signet-Token", token)]).status == 200)
    }

    @Test func aNonceRouteHandsOutItsNonceAndTakesProofsThatCarryIt() async throws {
        let harness = try await Self.start()
        Cleanup.after { try await harness.stop() }
        let device = try await harness.register(.ed25519)
        let token = try await Self.token(harness, device)
        let url = harness.base + "/echo/nonce/x"
        let first = try await Self.send(url, [("Authorization", "DPoP \(token)"), ("DPoP", try Self.proof(device.key, url, token: token))])
        #expect(first.status == 401 && first.reason == "dpop_nonce_required", "\(first.text)")
        #expect(first.headers["WWW-Authenticate"].first?.hasPrefix("DPoP error=\"use_dpop_nonce\"") == true)
        let nonce = try #require(first.headers["DPoP-Nonce"].first)
        let forged = try await Self.send(url, [("Authorization", "DPoP \(token)"), ("DPoP", try Self.proof(device.key, url, token: token, nonce: "x" + nonce.dropFirst()))])
        #expect(forged.reason == "dpop_nonce_required" && forged.headers["DPoP-Nonce"].first != nil)
        let second = try await Self.send(url, [("Authorization", "DPoP \(token)"), ("DPoP", try Self.proof(device.key, url, token: token, nonce: nonce))])
        #expect(second.status == 200, "\(second.text)")
        // A fresh nonce needs no renewal on the answer.
        #expect(second.headers["DPoP-Nonce"].isEmpty)
    }

    /// A nonce is taken for its lifetime; one past half of it is renewed on the answer, so a
    /// client that follows `DPoP-Nonce` never meets `dpop_nonce_required` again.
    @Test func aNonceOlderThanHalfItsLifeIsRenewedOnTheAnswer() async throws {
        let clock = ManualClock()
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("signet-dpop-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let harness = try await GatewayHarness.start(transport: .router, clock: clock) { configuration in
            configuration.tokens = .init(issuer: AppTokenTests.issuer, audience: ["scores"], keyFile: folder.appendingPathComponent("tokens.pem").path)
            configuration.routes.insert(.init(prefix: "/echo/nonce", access: .init(mode: "app-token", options: ["dpopNonce": .bool(true)])), at: 0)
        }
        Cleanup.after { try await harness.stop() }
        let device = try await harness.register(.p256)
        let token = try await Self.token(harness, device)
        let url = harness.base + "/echo/nonce/x"
        func send(nonce: String?) async throws -> GatewayHarness.Answer {
            try await Self.send(url, [("Authorization", "DPoP \(token)"), ("DPoP", try Self.proof(device.key, url, token: token, nonce: nonce, now: clock.now))])
        }
        let first = try #require(try await send(nonce: nil).headers["DPoP-Nonce"].first)
        let fresh = try await send(nonce: first)
        #expect(fresh.status == 200 && fresh.headers["DPoP-Nonce"].isEmpty, "\(fresh.text)")
        clock.advance(by: 200)
        let renewing = try await send(nonce: first)
        let renewed = try #require(renewing.headers["DPoP-Nonce"].first, "\(renewing.headers)")
        #expect(renewing.status == 200 && renewed != first)
        clock.advance(by: 120)
        #expect(try await send(nonce: first).reason == "dpop_nonce_required")
        #expect(try await send(nonce: renewed).status == 200)
    }

    /// A monitored DPoP route forwards what enforcing would refuse, with the verdict: a refusal with
    /// a challenge is a verdict as any other.
    @Test func aMonitoredRouteForwardsWithTheVerdict() async throws {
        let harness = try await Self.start()
        Cleanup.after { try await harness.stop() }
        let device = try await harness.register(.p256)
        let token = try await Self.token(harness, device)
        let url = harness.base + "/echo/watched/x"
        let bare = try await Self.send(url, [("Signet-Token", token)])
        #expect(bare.status == 200, "\(bare.text)")
        #expect((bare.json["headers"] as? [String: String])?["signet-verdict"] == "dpop_proof_missing", "\(bare.text)")
        let proven = try await Self.send(url, [("Authorization", "DPoP \(token)"), ("DPoP", try Self.proof(device.key, url, token: token))])
        #expect((proven.json["headers"] as? [String: String])?["signet-verdict"] == "accepted", "\(proven.text)")
        // A refused proof is forwarded without the token and the proof, as an accepted one is.
        let stranger = try SigningKey.generate(.p256)
        let refused = try await Self.send(url, [("Authorization", "DPoP \(token)"), ("DPoP", try Self.proof(stranger, url, token: token))])
        let seen = refused.json["headers"] as? [String: String] ?? [:]
        #expect(seen["signet-verdict"] == "dpop_key_mismatch", "\(refused.text)")
        #expect(seen["authorization"] == nil && seen["dpop"] == nil, "\(seen)")
        // Another scheme in Authorization is the upstream's, and stays.
        let own = try await Self.send(url, [("Signet-Token", token), ("Authorization", "Bearer upstream-own"), ("DPoP", try Self.proof(device.key, url, token: token))])
        #expect((own.json["headers"] as? [String: String])?["authorization"] == "Bearer upstream-own", "\(own.text)")
    }

    /// RFC 9449 §5: a proof on the token request makes the token DPoP-bound, and such a token is
    /// never taken as a bearer token (§7.2).
    @Test func aTokenAskedForWithAProofIsBoundAndNeverABearerToken() async throws {
        let harness = try await Self.start()
        Cleanup.after { try await harness.stop() }
        let device = try await harness.register(.p256)
        let endpoint = harness.base + "/signet/v1/tokens"
        func ask(proofBy key: SigningKey?) async throws -> GatewayHarness.Answer {
            var fields: MessageFields = []
            if let key { fields.append(name: "DPoP", value: try Self.proof(key, endpoint, method: "POST", token: nil)) }
            let request = try HTTPMessage.request(method: "POST", uri: endpoint, fields: fields)
            return try await GatewayHarness.send(try device.signer.sign(request, created: Date(), nonce: Nonce.random()))
        }
        let plain = try await ask(proofBy: nil)
        #expect(plain.status == 201 && plain.json["tokenType"] as? String == "Bearer", "\(plain.text)")
        let issued = try await ask(proofBy: device.key)
        #expect(issued.status == 201 && issued.json["tokenType"] as? String == "DPoP", "\(issued.text)")
        let token = try #require(issued.json["token"] as? String)
        let stranger = try await ask(proofBy: try SigningKey.generate(.p256))
        #expect(stranger.status == 401 && stranger.reason == "dpop_key_mismatch", "\(stranger.text)")

        // As a bearer token it is refused everywhere; with a proof it works.
        let bearer = try await Self.send(harness.base + "/echo/token/x", [("Signet-Token", token)])
        #expect(bearer.status == 401 && bearer.reason == "token_invalid", "\(bearer.text)")
        let url = harness.base + "/echo/bound/x"
        let proven = try await Self.send(url, [("Authorization", "DPoP \(token)"), ("DPoP", try Self.proof(device.key, url, token: token))])
        #expect(proven.status == 200, "\(proven.text)")
    }

    /// An App Attest key signs only assertions: the install binds its token to a key of its own,
    /// the proof's, which its assertion names by covering the `DPoP` field. Uncovered, the proof
    /// could be anyone's, and is refused.
    @Test func anAppAttestDeviceBindsItsTokenToTheProofKeyItsAssertionCovers() async throws {
        let harness = try await Self.start()
        Cleanup.after { try await harness.stop() }
        let iPhone = SimulatedAppAttestDevice(appID: GatewayHarness.appID, ca: GatewayHarness.simulatorCA)
        try #require(try await harness.attest(iPhone).status == 201)
        let proofKey = try SigningKey.generate(.p256)
        let endpoint = harness.base + "/signet/v1/tokens"
        func ask(covering: Bool) async throws -> GatewayHarness.Answer {
            let request = try HTTPMessage.request(
                method: "POST", uri: endpoint, fields: [("DPoP", try Self.proof(proofKey, endpoint, method: "POST", token: nil))])
            let components: [ComponentIdentifier] = covering ? [.method, .targetURI, "dpop"] : [.method, .targetURI]
            return try await GatewayHarness.send(
                try SimulatedAppAttestSigner(device: iPhone).sign(request, components: components, created: Date(), nonce: Nonce.random()))
        }
        let uncovered = try await ask(covering: false)
        #expect(uncovered.status == 401 && uncovered.reason == "dpop_key_mismatch", "\(uncovered.text)")
        #expect(uncovered.headers["WWW-Authenticate"].first?.hasPrefix("DPoP error=\"invalid_dpop_proof\"") == true)

        let issued = try await ask(covering: true)
        #expect(issued.status == 201 && issued.json["tokenType"] as? String == "DPoP", "\(issued.text)")
        let token = try #require(issued.json["token"] as? String)
        let claims = try #require(try JSONSerialization.jsonObject(with: Data(Base64.urlDecode(String(token.split(separator: ".")[1]))!)) as? [String: Any])
        #expect((claims["cnf"] as? [String: String])?["jkt"] == (try proofKey.verificationKey.jwk.thumbprint))
        #expect(claims["trust_level"] as? String == "app-attest")

        let url = harness.base + "/echo/bound/x"
        let proven = try await Self.send(url, [("Authorization", "DPoP \(token)"), ("DPoP", try Self.proof(proofKey, url, token: token))])
        #expect(proven.status == 200 && SignatureKeyTests.echoed(proven)["signet-trust-level"] == "app-attest", "\(proven.text)")
        let other = try await Self.send(url, [("Authorization", "DPoP \(token)"), ("DPoP", try Self.proof(try SigningKey.generate(.p256), url, token: token))])
        #expect(other.status == 401 && other.reason == "dpop_key_mismatch", "\(other.text)")
    }

    @Test func theOptionsBelongToAppTokenRoutes() async throws {
        var configuration = GatewayConfiguration(upstream: "http://127.0.0.1:9")
        configuration.tokens = .init(issuer: "https://i.example", audience: ["a"], keyFile: "/tmp/signet-dpop-\(UUID().uuidString).pem")
        configuration.firebaseAppCheck = .init(projectNumber: "123")
        configuration.routes = [.init(prefix: "/x", access: .init(mode: "firebase-app-check", options: ["dpop": .bool(true)]))]
        #expect(throws: ConfigurationError.self) { try configuration.validate() }
        configuration.routes = [.init(prefix: "/x", access: .init(mode: "app-token", options: ["dpop": .bool(true)]))]
        configuration.tokens?.dpopProofLifetime = 3
        #expect(throws: ConfigurationError.self) { try configuration.validate() }
        configuration.tokens?.dpopProofLifetime = 30
        try configuration.validate()
    }
}
