// SPDX-License-Identifier: Apache-2.0
import AsyncHTTPClient
import Crypto
import Foundation
import NIOCore
import NIOHTTP1
import SignetCore
import SignetServer
import SignetSimulator
import SignetTestSupport
import Testing
import _CryptoExtras

/// Standard Play Integrity tokens at Android registration, decoded through a stand-in for Google
/// (`play_integrity_google.py`) that checks the gateway's OAuth assertion with PyJWT as Google's
/// token endpoint would: the verdict's request hash is the challenge; the access token is reused;
/// a token Google does not decode, one for another challenge, and Google unreachable are refused.
@Suite(.awaitsCleanups) struct PlayIntegrityStandardTests {
    static let email = "signet-gateway@example-project.iam.gserviceaccount.com"

    @Test func standardTokensAreDecodedByGoogleAndJudgedHere() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("signet-play-std-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let account = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        let publicFile = folder.appendingPathComponent("account.pub.pem")
        try Data(account.publicKey.pemRepresentation.utf8).write(to: publicFile)
        let google = try await PythonServer("play_integrity_google.py", ["serve", publicFile.path, Self.email, "com.example.scores"])
        let base = "http://127.0.0.1:\(google.port)"
        let keyFile = folder.appendingPathComponent("service-account.json")
        let key: [String: Any] = [
            "type": "service_account", "client_email": Self.email, "private_key": account.pemRepresentation,
            "token_uri": base + "/token",
        ]
        try JSONSerialization.data(withJSONObject: key).write(to: keyFile)
        let harness = try await GatewayHarness.start(transport: .router) {
            $0.androidAttestation?.playIntegrity = .init(
                standard: .init(
                    serviceAccountFile: keyFile.path,
                    packageName: "com.example.scores",
                    decodeUrl: base + "/v1/{package}:decodeIntegrityToken"
                )
            )
            // Above the per-key bound, so the per-key bound is what the route loop meets.
            $0.androidAttestation?.playIntegrity?.standard?.decodesPerMinute = 12
            // Behind a balancer: the clients below are told apart by X-Forwarded-For.
            $0.trustedProxies = ["127.0.0.1/32"]
            $0.routes.insert(.init(prefix: "/echo/purchase", access: .playIntegrity), at: 0)
        }
        Cleanup.after {
            try await harness.stop()
            if google.process.isRunning { google.stop() }
            try? FileManager.default.removeItem(at: folder)
        }
        func verdict(requestHash: String, device: String = "MEETS_DEVICE_INTEGRITY") -> [String: Any] {
            [
                "requestDetails": [
                    "requestPackageName": "com.example.scores", "requestHash": requestHash,
                    "timestampMillis": String(Int64(Date().timeIntervalSince1970 * 1000)),
                ],
                "appIntegrity": [
                    "appRecognitionVerdict": "PLAY_RECOGNIZED", "packageName": "com.example.scores",
                    "certificateSha256Digest": [Base64.urlEncode(SimulatedAndroidDevice.developmentSigningDigest)],
                ],
                "deviceIntegrity": ["deviceRecognitionVerdict": [device]],
                "accountDetails": ["appLicensingVerdict": "LICENSED"],
            ]
        }
        func teach(_ verdicts: [String: Any]) async throws {
            let answer = try await GatewayHarness.send(
                method: "POST",
                url: base + "/verdicts",
                headers: [("Content-Type", "application/json")],
                body: Array(try JSONSerialization.data(withJSONObject: verdicts))
            )
            #expect(answer.status == 200)
        }
        func register(_ challenge: String, token: String, type: String = "standard") async throws -> GatewayHarness.Answer {
            try await harness.attestAndroid(AndroidGatewayTests.android(), challenge: challenge, integrityToken: token, integrityTokenType: type)
        }

        let first = try await harness.challenge()
        let second = try await harness.challenge()
        try await teach(["std-1": verdict(requestHash: first), "std-2": verdict(requestHash: second), "std-old": verdict(requestHash: first)])
        let accepted = try await register(first, token: "std-1")
        #expect(accepted.status == 201, "\(accepted.text)")
        #expect(try await register(second, token: "std-2").status == 201)
        // One access token for both decodes: the gateway keeps it.
        let stats = try await GatewayHarness.send(method: "GET", url: base + "/stats")
        #expect(stats.json["tokens"] as? Int == 1 && stats.json["decodes"] as? Int == 2, "\(stats.text)")
        #expect((stats.json["refused"] as? [String])?.isEmpty == true, "\(stats.text)")

        // Google revokes the access token: the gateway takes a new one and decodes again.
        _ = try await GatewayHarness.send(method: "POST", url: base + "/revoke-access", headers: [("Content-Type", "application/json")], body: Array("{}".utf8))
        let after = try await harness.challenge()
        try await teach(["std-after": verdict(requestHash: after)])
        let renewed = try await register(after, token: "std-after")
        #expect(renewed.status == 201, "\(renewed.text)")
        let restats = try await GatewayHarness.send(method: "GET", url: base + "/stats")
        #expect(restats.json["tokens"] as? Int == 2, "\(restats.text)")

        // A verdict for another challenge; a token Google does not decode; a classic token where
        // only standard ones are configured.
        let third = try await harness.challenge()
        let stolen = try await register(third, token: "std-old")
        #expect(stolen.status == 401 && stolen.reason == "attestation_nonce_mismatch", "\(stolen.text)")
        let unknown = try await register(try await harness.challenge(), token: "std-unknown")
        #expect(unknown.status == 401 && unknown.reason == "token_invalid", "\(unknown.text)")
        let classic = try await register(try await harness.challenge(), token: "a.b.c.d.e", type: "classic")
        #expect(classic.reason == "token_invalid", "\(classic.text)")
        let typo = try await register(try await harness.challenge(), token: "x", type: "standart")
        #expect(typo.status == 400 && typo.reason == "malformed_message", "\(typo.text)")

        // On a play-integrity route, standard tokens bound to each request's signature base: each
        // is a call to Google, so a key gets ten a minute.
        let device = AndroidGatewayTests.android()
        let enrolment = try await harness.challenge()
        try await teach(["std-enrol": verdict(requestHash: enrolment)])
        let enrolled = try await harness.attestAndroid(device, challenge: enrolment, integrityToken: "std-enrol", integrityTokenType: "standard")
        let keyID = try #require(enrolled.json["keyid"] as? String, "\(enrolled.text)")
        /// A purchase signed by `device`, with a standard token Google is taught to decode into a
        /// verdict bound to its signature base; from `client` behind the balancer when given.
        func purchase(_ device: SimulatedAndroidDevice, keyID: String, token: String, from client: String? = nil) async throws
            -> GatewayHarness.Answer
        {
            var message = try AndroidGatewayTests.signer(device, keyID: keyID).sign(
                try HTTPMessage.request(method: "GET", uri: harness.base + "/echo/purchase/\(token)"),
                created: Date(),
                nonce: Nonce.random()
            )
            let parameters = try SignatureFields(message.fields).entries[0].parameters
            let digest = Base64.urlEncode(Array(SHA256.hash(data: try SignatureBase(message: message, parameters: parameters).bytes)))
            try await teach([token: verdict(requestHash: digest)])
            message.fields.append(name: "Signet-Integrity-Token", value: token)
            message.fields.append(name: "Signet-Integrity-Token-Type", value: "standard")
            if let client { message.fields.append(name: "X-Forwarded-For", value: client) }
            return try await GatewayHarness.send(message)
        }
        var statuses: [Int] = []
        var last: GatewayHarness.Answer?
        for index in 0..<11 {
            last = try await purchase(device, keyID: keyID, token: "route-\(index)")
            statuses.append(last?.status ?? 0)
        }
        #expect(statuses == Array(repeating: 200, count: 10) + [429], "\(statuses)")
        #expect(last?.reason == "rate_limited")

        // A fresh key costs nothing to make: from the same address it gets no fresh allowance.
        let secondDevice = AndroidGatewayTests.android()
        let secondChallenge = try await harness.challenge()
        try await teach(["std-enrol-2": verdict(requestHash: secondChallenge)])
        let secondEnrolled = try await harness.attestAndroid(secondDevice, challenge: secondChallenge, integrityToken: "std-enrol-2", integrityTokenType: "standard")
        let secondKeyID = try #require(secondEnrolled.json["keyid"] as? String, "\(secondEnrolled.text)")
        let perSource = try await purchase(secondDevice, keyID: secondKeyID, token: "route-fresh")
        #expect(perSource.status == 429 && perSource.reason == "rate_limited", "\(perSource.text)")

        // Other clients behind the balancer have allowances of their own, until the gateway's
        // decodes for the minute (12 here; 10 were spent above) are gone for every client.
        var others: [GatewayHarness.Answer] = []
        for index in 0..<3 {
            others.append(try await purchase(secondDevice, keyID: secondKeyID, token: "route-other-\(index)", from: "203.0.113.\(10 + index)"))
        }
        #expect(others.map(\.status) == [200, 200, 429], "\(others.map(\.text))")
        #expect(others.last?.reason == "rate_limited" && others.last?.text.contains("decodes for this minute are spent") == true)
        #expect(others.last?.headers.first(name: "Retry-After") != nil)

        // Google unreachable: 503, the service's fault, not the app's.
        google.stop()
        // (Within the call's 10 s timeout: a connection kept from earlier calls is dead too.)
        let down = try await register(try await harness.challenge(), token: "std-4")
        #expect(down.status == 503 && down.reason == "token_keys_unavailable", "\(down.text)")
        #expect(down.headers.first(name: "Retry-After") == "30")
    }
}
