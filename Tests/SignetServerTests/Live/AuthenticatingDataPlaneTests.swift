// SPDX-License-Identifier: Apache-2.0
import Crypto
import Foundation
import NIOHTTP1
import SignetCore
@testable import SignetServer
import SignetTestSupport
import Testing

/// Gates other than signatures on the event-loop data plane (`LoopAuthenticator`), over real
/// sockets: the route's own authenticator run on the connection's loop — admitted requests
/// forwarded as the gate left them (credentials removed, a query rebuilt), the fields it asks
/// for set on the answer, and every refusal answered as Hummingbird's path answers it.
@Suite(.awaitsCleanups) struct AuthenticatingDataPlaneTests {
    static func plane(_ harness: GatewayHarness) -> DataPlane {
        harness.gateway.listeners.dataPlane
    }

    /// A gateway with token routes (plain, DPoP-bound, nonce-bound, monitored) and a legacy query
    /// route under `/echo`, whose backend echoes what it received.
    static func gateway() async throws -> GatewayHarness {
        try await AppTokenTests.start(transport: .sockets) { configuration, _ in
            configuration.routes.insert(contentsOf: [
                .init(prefix: "/echo/bound", access: .init(mode: "app-token", options: ["dpop": .bool(true)])),
                .init(prefix: "/echo/nonce", access: .init(mode: "app-token", options: ["dpopNonce": .bool(true)])),
                .init(prefix: "/echo/watched", access: .init(mode: "app-token", options: ["dpop": .bool(true)]), mode: .monitor),
                .init(prefix: "/echo/legacy", access: .legacyQueryHMAC(keyId: "highscore-legacy")),
            ], at: 0)
            configuration.responseSigning = nil
        }
    }

    /// ``gateway()``, stopped after the test, and its data plane.
    static func started() async throws -> (GatewayHarness, DataPlane) {
        let harness = try await gateway()
        Cleanup.after { try await harness.stop() }
        return (harness, plane(harness))
    }

    /// What the backend received: its headers, lowercased, and its target.
    static func echoed(_ answer: GatewayHarness.Answer) -> (fields: [String: String], path: String?) {
        let json = answer.json
        let fields = (json["headers"] as? [String: String]) ?? [:]
        return (Dictionary(uniqueKeysWithValues: fields.map { ($0.key.lowercased(), $0.value) }), json["path"] as? String)
    }

    /// The fields of an answer, names lowercased, without those that vary between two sends.
    static func fields(_ headers: HTTPHeaders) -> [String: String] {
        var fields: [String: String] = [:]
        for (name, value) in headers where !["date", "x-request-id"].contains(name.lowercased()) {
            // A nonce minted for each answer: its presence is compared, not its value.
            fields[name.lowercased(), default: ""] += name.lowercased() == "dpop-nonce" ? "minted" : value
        }
        return fields
    }

    @Test func tokenRoutesAreAdmittedOnTheLoopWithTheirCredentialsKeptBack() async throws {
        let (harness, plane) = try await Self.started()
        let device = try await harness.register(.p256)
        let token = try await DPoPTests.token(harness, device)

        let plain = try await GatewayHarness.send(method: "GET", url: harness.base + "/echo/token/a", headers: [("Signet-Token", token)])
        #expect(plain.status == 200, "\(plain.text)")
        var (fields, _) = Self.echoed(plain)
        #expect(fields["signet-device"] == device.deviceID && fields["signet-trust-level"] != nil, "\(fields)")
        #expect(fields["signet-token"] == nil)
        #expect(plane.forwardedCount == 1)

        // DPoP-bound: token and proof stay at the gateway, the upstream learns the device.
        let url = harness.base + "/echo/bound/b?page=2"
        let proof = try DPoPTests.proof(device.key, url, token: token)
        let bound = try await GatewayHarness.send(method: "GET", url: url, headers: [("Authorization", "DPoP \(token)"), ("DPoP", proof)])
        #expect(bound.status == 200, "\(bound.text)")
        (fields, _) = Self.echoed(bound)
        #expect(fields["signet-device"] == device.deviceID, "\(fields)")
        #expect(fields["authorization"] == nil && fields["dpop"] == nil, "\(fields)")
        #expect(plane.forwardedCount == 2)
        // The proof is claimed once: its copy is a replay, refused on the loop.
        let again = try await GatewayHarness.send(method: "GET", url: url, headers: [("Authorization", "DPoP \(token)"), ("DPoP", proof)])
        #expect(again.status == 401 && again.reason == "dpop_proof_replayed", "\(again.text)")
        #expect(plane.forwardedCount == 2 && plane.refusedCount == 1)
    }

    /// A nonce route hands out its nonce on the loop as on Hummingbird's path, and the proof made
    /// with it is taken on the loop.
    @Test func aDPoPNonceIsHandedOutAndTakenOnTheLoop() async throws {
        let (harness, plane) = try await Self.started()
        let device = try await harness.register(.p256)
        let token = try await DPoPTests.token(harness, device)
        let url = harness.base + "/echo/nonce/c"
        let first = try await GatewayHarness.send(
            method: "GET", url: url, headers: [("Authorization", "DPoP \(token)"), ("DPoP", try DPoPTests.proof(device.key, url, token: token))])
        #expect(first.status == 401 && first.reason == "dpop_nonce_required", "\(first.text)")
        let nonce = try #require(first.headers.first(name: "DPoP-Nonce"))
        #expect(plane.refusedCount == 1)
        let second = try await GatewayHarness.send(
            method: "GET", url: url,
            headers: [("Authorization", "DPoP \(token)"), ("DPoP", try DPoPTests.proof(device.key, url, token: token, nonce: nonce))])
        #expect(second.status == 200, "\(second.text)")
        #expect(plane.forwardedCount == 1)
    }

    /// The legacy query scheme's gate rebuilds the query from what it verified: the upstream
    /// receives that query, not the one sent, on the loop as on Hummingbird's path.
    @Test func aLegacyQueryIsForwardedAsItsGateRebuiltIt() async throws {
        let (harness, plane) = try await Self.started()
        let snapshot = try #require(plane.snapshot)
        let query = LegacyQueryHMAC(key: GatewayHarness.legacySecret).query(for: "score=42")
        var paths: [String?] = []
        for loop in [true, false] {
            plane.replace(with: loop ? snapshot : nil)
            let answer = try await GatewayHarness.send(method: "GET", url: harness.base + "/echo/legacy/s?extra=1&" + query, headers: [])
            #expect(answer.status == 200, "\(answer.text)")
            let (fields, path) = Self.echoed(answer)
            #expect(fields["signet-key-id"] == "highscore-legacy", "\(fields)")
            paths.append(path)
        }
        #expect(paths[0] == "/echo/legacy/s?" + query, "\(paths)")
        #expect(paths[0] == paths[1])
        #expect(plane.forwardedCount == 1)
    }

    /// Each kind of refusal a token or legacy gate makes, sent both ways (the data plane swapped
    /// out for the second): the same status, fields (challenges included) and problem document.
    @Test func everyRefusalOfAnotherGateOnTheLoopIsTheOneHummingbirdMakes() async throws {
        let (harness, plane) = try await Self.started()
        let snapshot = try #require(plane.snapshot)
        let device = try await harness.register(.p256)
        let token = try await DPoPTests.token(harness, device)
        let other = try await harness.register(.p256)
        let boundURL = harness.base + "/echo/bound/x"
        let cases: [(String, String, () throws -> [(String, String)])] = [
            ("no token", harness.base + "/echo/token/x", { [] }),
            ("a forged token", harness.base + "/echo/token/x", { [("Signet-Token", token.dropLast(4) + "AAAA")] }),
            ("the token twice", harness.base + "/echo/token/x", { [("Signet-Token", token), ("Signet-Token", token)] }),
            ("bearer on a DPoP route", boundURL, { [("Authorization", "Bearer \(token)")] }),
            ("no proof", boundURL, { [("Authorization", "DPoP \(token)")] }),
            ("another key's proof", boundURL, { [("Authorization", "DPoP \(token)"), ("DPoP", try DPoPTests.proof(other.key, boundURL, token: token))] }),
            ("a stale proof", boundURL, {
                [("Authorization", "DPoP \(token)"), ("DPoP", try DPoPTests.proof(device.key, boundURL, token: token, now: Date().addingTimeInterval(-600)))]
            }),
            ("no nonce", harness.base + "/echo/nonce/x", {
                [("Authorization", "DPoP \(token)"), ("DPoP", try DPoPTests.proof(device.key, harness.base + "/echo/nonce/x", token: token))]
            }),
            ("a wrong legacy MAC", harness.base + "/echo/legacy/x?msg=score%3D1&hmac=" + String(repeating: "0", count: 64), { [] }),
        ]
        for (name, url, fields) in cases {
            var answers: [GatewayHarness.Answer] = []
            for loop in [true, false] {
                plane.replace(with: loop ? snapshot : nil)
                answers.append(try await GatewayHarness.send(method: "GET", url: url, headers: try fields()))
            }
            let (onLoop, onHummingbird) = (answers[0], answers[1])
            #expect(onLoop.status >= 400 && onLoop.status == onHummingbird.status, "\(name): \(onLoop.text) | \(onHummingbird.text)")
            #expect(onLoop.reason != nil && onLoop.reason == onHummingbird.reason, "\(name): \(onLoop.text) | \(onHummingbird.text)")
            #expect(Self.fields(onLoop.headers) == Self.fields(onHummingbird.headers), "\(name): \(onLoop.headers) | \(onHummingbird.headers)")
            // A detail that counts seconds may count one more the second time.
            func problem(_ answer: GatewayHarness.Answer) -> [String: Any] {
                answer.json.mapValues { ($0 as? String).map { $0.filter { !$0.isNumber } } ?? $0 }
            }
            #expect(NSDictionary(dictionary: problem(onLoop)).isEqual(to: problem(onHummingbird)), "\(name): \(onLoop.text) | \(onHummingbird.text)")
        }
        #expect(plane.forwardedCount == 0)
        #expect(plane.refusedCount == cases.count)
    }

    /// A monitored token route forwards its verdicts on the loop as Hummingbird does: the identity
    /// only when accepted, the token and proof kept back either way.
    @Test func aMonitoredTokenRouteForwardsEveryVerdictOnTheLoopAsHummingbirdDoes() async throws {
        let (harness, plane) = try await Self.started()
        let snapshot = try #require(plane.snapshot)
        let device = try await harness.register(.p256)
        let token = try await DPoPTests.token(harness, device)
        let url = harness.base + "/echo/watched/x"
        let cases: [(String, String, () throws -> [(String, String)])] = [
            ("accepted", "accepted", { [("Authorization", "DPoP \(token)"), ("DPoP", try DPoPTests.proof(device.key, url, token: token))] }),
            ("no token", "token_missing", { [] }),
            ("no proof", "dpop_proof_missing", { [("Authorization", "DPoP \(token)")] }),
        ]
        for (name, verdict, fields) in cases {
            var seen: [[String: String]] = []
            for loop in [true, false] {
                plane.replace(with: loop ? snapshot : nil)
                let forwarded = plane.forwardedCount
                let answer = try await GatewayHarness.send(method: "GET", url: url, headers: try fields())
                #expect(answer.status == 200, "\(name): \(answer.text)")
                #expect(plane.forwardedCount == forwarded + (loop ? 1 : 0), "\(name)")
                var (received, _) = Self.echoed(answer)
                #expect(received["signet-verdict"] == verdict, "\(name): \(received)")
                #expect((received["signet-device"] != nil) == (verdict == "accepted"), "\(name): \(received)")
                #expect(received["authorization"] == nil && received["dpop"] == nil, "\(name): \(received)")
                received["x-request-id"] = nil
                seen.append(received)
            }
            #expect(seen[0] == seen[1], "\(name): \(seen[0]) | \(seen[1])")
        }
    }

    /// A `client-certificate` route over mutual TLS, on HTTP/1.1 and on HTTP/2: the certificate
    /// the device got at registration (`signet register`) is read from the connection — an
    /// HTTP/2 stream's parent — on the loop, and a request without one is refused as Hummingbird
    /// refuses it.
    @Test func aClientCertificateRouteIsJudgedOnTheLoopOverEitherVersion() async throws {
        let harness = try await GatewayHarness.start(tls: GatewayHarness.developmentTLS) {
            $0.routes.insert(.init(prefix: "/echo/mtls", access: .clientCertificate), at: 0)
        }
        Cleanup.after { try await harness.stop() }
        let plane = Self.plane(harness)
        let folder = harness.folder
        try Data(try #require(harness.gateway.tls?.chainPEM).utf8).write(to: folder.appendingPathComponent("ca.pem"))
        #expect(try await SignetProcess.signet(["keygen", "--alg", "ecdsa-p256-sha256", "--name", "device"], in: folder).status == 0)
        let registered = try await SignetProcess.signet(
            ["register", harness.base, "--key", "device.key.pem", "--cacert", "ca.pem", "--certificate-out", "device.pem"], in: folder)
        #expect(registered.status == 0, "\(registered.stdout)\(registered.stderr)")
        let deviceID = try #require(registered.stdout.split(separator: "\n").first { $0.hasPrefix("deviceId: ") }?.dropFirst("deviceId: ".count))
        for version in ["--http1.1", "--http2"] {
            let forwarded = plane.forwardedCount
            let admitted = try await SignetProcess.run(
                "curl", ["-s", version, "--cacert", "ca.pem", "--cert", "device.pem", "--key", "device.key.pem", harness.base + "/echo/mtls/x"], in: folder)
            let received = Self.echoed(GatewayHarness.Answer(status: 200, headers: [:], body: Array(admitted.stdout.utf8))).fields
            #expect(received["signet-device"] == String(deviceID), "\(version): \(admitted.stdout)\(admitted.stderr)")
            #expect(plane.forwardedCount == forwarded + 1, "\(version)")
        }
        // Without a certificate: refused on the loop, as on Hummingbird's path.
        let snapshot = try #require(plane.snapshot)
        var answers: [String] = []
        for loop in [true, false] {
            plane.replace(with: loop ? snapshot : nil)
            let refused = try await SignetProcess.run(
                "curl", ["-s", "--http1.1", "--cacert", "ca.pem", "-w", "\n%{http_code}", harness.base + "/echo/mtls/x"], in: folder)
            answers.append(refused.stdout)
        }
        #expect(answers[0].hasSuffix("\n401") && answers[0].contains("certificate"), "\(answers[0])")
        #expect(answers[0] == answers[1], "\(answers[0]) | \(answers[1])")
        #expect(plane.refusedCount == 1)
    }

    /// A `play-integrity` route's gate verifies a signature too: on the loop its head is screened
    /// as a signature route's — an unsigned body announced and never sent is refused from its
    /// head, not waited for — and a device's signed request without a verdict is refused by the
    /// gate on the loop, as on Hummingbird's path.
    @Test func aPlayIntegrityRouteIsScreenedFromItsHeadAndJudgedOnTheLoop() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("signet-loop-play-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let decryptionFile = folder.appendingPathComponent("play-decryption.txt")
        try Data(Base64.encode(Array(repeating: 7, count: 32)).utf8).write(to: decryptionFile)
        let verificationFile = folder.appendingPathComponent("play-verification.txt")
        try Data(Base64.encode(Array(P256.Signing.PrivateKey().publicKey.derRepresentation)).utf8).write(to: verificationFile)
        let harness = try await GatewayHarness.start {
            $0.androidAttestation?.playIntegrity = .init(decryptionKeyFile: decryptionFile.path, verificationKeyFile: verificationFile.path)
            $0.routes.insert(.init(prefix: "/echo/purchase", access: .playIntegrity), at: 0)
            $0.responseSigning = nil
        }
        Cleanup.after {
            try await harness.stop()
            try? FileManager.default.removeItem(at: folder)
        }
        let plane = Self.plane(harness)
        let snapshot = try #require(plane.snapshot)
        let device = try await harness.register(.p256)
        let message = try HTTPMessage.request(
            method: "POST", uri: harness.base + "/echo/purchase/1", fields: [("Content-Type", "application/json")], body: Array("{}".utf8))
        let signed = Array(
            GatewayHardeningTests.raw(try device.signer.sign(message, created: Date(), nonce: Nonce.random()))
                .replacingOccurrences(of: "Connection: close\r\n", with: "").utf8)
        let cases: [(String, [UInt8], String)] = [
            ("an unsigned body never sent", Array("POST /echo/purchase/1 HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n\r\n".utf8), "signature_missing"),
            ("signed, without a verdict", signed, "token_missing"),
        ]
        for (name, bytes, reason) in cases {
            var answers: [String] = []
            for loop in [true, false] {
                plane.replace(with: loop ? snapshot : nil)
                let connection = try await RawConnection.open(port: harness.port)
                try await connection.send(bytes)
                answers.append(try await connection.response(timeout: .seconds(5)))
                await connection.close()
            }
            #expect(RawHTTP.reason(answers[0]) == reason, "\(name): \(answers[0])")
            #expect(RawHTTP.status(answers[0]) == RawHTTP.status(answers[1]) && RawHTTP.reason(answers[0]) == RawHTTP.reason(answers[1]), "\(name): \(answers[1])")
        }
        // The signed one was refused by its gate on the loop (its nonce unclaimed: a refused
        // request claims none); the unsigned one by Hummingbird after the loop's screen.
        #expect(plane.refusedCount == 1)
        #expect(plane.forwardedCount == 0)
    }
}
