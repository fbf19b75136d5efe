// SPDX-License-Identifier: Apache-2.0
import Foundation
import Logging
import SignetCore
import SignetMiddleware
import SignetServer
import SignetTestSupport
import Synchronization
import Testing

/// A reload swaps the configuration in while requests flow: a shared secret and a token key are
/// rotated under load, and no request is refused that should pass, none accepted that should not.
/// A refused configuration keeps the running one; what only a restart can change is refused.
@Suite(.awaitsCleanups) struct ReloadTests {
    static let newSecret = Array("a-new-bank-secret-for-the-reload".utf8)

    /// Whether the load goes on.
    final class Running: Sendable {
        let value = Atomic(true)
        let sent = Atomic(0)
    }

    /// Requests that must pass across a reload, sent by several tasks until `stop` is set; returns
    /// the answers that were not what they should be.
    static func load(
        _ harness: GatewayHarness,
        secret: [UInt8],
        keyID: String,
        token: String,
        tasks: Int = 4,
        while running: Running
    ) async -> [String] {
        await withTaskGroup(of: [String].self) { group in
            for index in 0..<tasks {
                group.addTask {
                    var wrong: [String] = []
                    let signer = MessageSigner(key: try! SigningKey(secret: secret), keyID: keyID, algorithm: HMACSHA256())
                    while running.value.load(ordering: .relaxed) {
                        running.sent.add(1, ordering: .relaxed)
                        do {
                            if index % 2 == 0 {
                                let answer = try await GatewayHarness.send(
                                    try signer.sign(try harness.scorePost(), created: Date(), nonce: Nonce.random())
                                )
                                if answer.status != 201 { wrong.append("\(keyID): \(answer.status) \(answer.reason ?? "")") }
                            } else {
                                let answer = try await AppTokenTests.use(token, harness.base + "/echo/token")
                                if answer.status != 200 { wrong.append("token: \(answer.status) \(answer.reason ?? "")") }
                            }
                        } catch {
                            wrong.append("\(error)")
                        }
                    }
                    return wrong
                }
            }
            return await group.reduce(into: []) { $0 += $1 }
        }
    }

    /// Runs `load` while `change` happens: from its tenth request until ten more were sent after the
    /// change (counted, not timed: a loaded machine sends few requests in a fixed time).
    static func underLoad(
        _ harness: GatewayHarness,
        secret: [UInt8],
        keyID: String,
        token: String,
        change: @Sendable () async throws -> Void
    ) async throws -> [String] {
        let running = Running()
        async let wrong = load(harness, secret: secret, keyID: keyID, token: token, while: running)
        func waitUntilSent(_ count: Int) async throws {
            let deadline = ContinuousClock.now + .seconds(60)
            while running.sent.load(ordering: .relaxed) < count && ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(5))
            }
        }
        try await waitUntilSent(10)
        try await change()
        try await waitUntilSent(running.sent.load(ordering: .relaxed) + 10)
        running.value.store(false, ordering: .relaxed)
        let answers = await wrong
        #expect(running.sent.load(ordering: .relaxed) >= 20, "requests flowed across the reload")
        return answers
    }

    /// The `kid` of a compact JWS's protected header.
    static func kid(of token: String) -> String? {
        guard let header = token.split(separator: ".").first, let bytes = Base64.urlDecode(String(header)) else { return nil }
        return (try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])?["kid"] as? String
    }

    @Test func aSharedSecretAndATokenKeyRotateUnderLoad() async throws {
        let harness = try await AppTokenTests.start()
        Cleanup.after { try await harness.stop() }
        let reloader = harness.gateways[0].reloader
        let device = try await harness.register(.p256)
        let oldToken = try #require(try await AppTokenTests.issue(harness, device).json["token"] as? String)
        let newSigner = MessageSigner(key: try SigningKey(secret: Self.newSecret), keyID: "bank-v2", algorithm: HMACSHA256())
        #expect(try await GatewayHarness.send(try newSigner.sign(try harness.scorePost(), created: Date(), nonce: Nonce.random())).reason == "unknown_key")

        // 1. Add the new secret; the next token key signs, the old one is retired (still accepted).
        var rotated = try #require(reloader.configuration)
        rotated.sharedSecrets.append(.init(keyId: "bank-v2", secretBase64: Base64.encode(Self.newSecret)))
        var tokens = try #require(rotated.tokens)
        tokens.retiredKeys = [.init(keyFile: tokens.keyFile, retiredAt: Date())]
        tokens.keyFile = try #require(tokens.nextKeyFile)
        tokens.nextKeyFile = harness.folder.appendingPathComponent("tokens-3.pem").path
        rotated.tokens = tokens
        let first = rotated
        let wrongDuringFirst = try await Self.underLoad(harness, secret: GatewayHarness.bankSecret, keyID: "bank-v1", token: oldToken) {
            try reloader.reload(to: first)
        }
        #expect(wrongDuringFirst.isEmpty, "\(wrongDuringFirst.prefix(5))")
        let newToken = try #require(try await AppTokenTests.issue(harness, device).json["token"] as? String)
        #expect(Self.kid(of: newToken) != nil && Self.kid(of: newToken) != Self.kid(of: oldToken), "signed by the next key")
        #expect(try await AppTokenTests.use(newToken, harness.base + "/echo/token").status == 200)
        #expect(try await GatewayHarness.send(try newSigner.sign(try harness.scorePost(), created: Date(), nonce: Nonce.random())).status == 201)

        // 2. Drop the old secret and the retired token key: the new ones keep passing throughout.
        rotated.sharedSecrets.removeAll { $0.keyId == "bank-v1" }
        rotated.tokens?.retiredKeys = nil
        let second = rotated
        let wrongDuringSecond = try await Self.underLoad(harness, secret: Self.newSecret, keyID: "bank-v2", token: newToken) {
            try reloader.reload(to: second)
        }
        #expect(wrongDuringSecond.isEmpty, "\(wrongDuringSecond.prefix(5))")
        let oldSigner = MessageSigner(key: try SigningKey(secret: GatewayHarness.bankSecret), keyID: "bank-v1", algorithm: HMACSHA256())
        #expect(try await GatewayHarness.send(try oldSigner.sign(try harness.scorePost(), created: Date(), nonce: Nonce.random())).reason == "unknown_key")
        let refusedToken = try await AppTokenTests.use(oldToken, harness.base + "/echo/token")
        #expect(refusedToken.status == 401, "a token of a key no longer published: \(refusedToken.text)")
    }

    /// A guesser of the admin token gets no fresh allowance from a reload that keeps the token.
    @Test func failedAdminAttemptsOutliveAReload() async throws {
        let harness = try await GatewayHarness.start(transport: .router)
        Cleanup.after { try await harness.stop() }
        let metrics = harness.base + "/metrics"
        for _ in 0..<10 {
            #expect(try await GatewayHarness.send(method: "GET", url: metrics, headers: [("Authorization", "Bearer wrong")]).status == 401)
        }
        try harness.gateways[0].reloader.reload(to: try #require(harness.gateways[0].reloader.configuration))
        let after = try await GatewayHarness.send(
            method: "GET",
            url: metrics,
            headers: [("Authorization", "Bearer \(GatewayHarness.adminToken)")]
        )
        #expect(after.status == 429 && after.reason == "rate_limited", "\(after.status) \(after.text)")
    }

    /// A reload asked of a reloader that serves nothing yet, or was given nothing to read, is the
    /// embedder's mistake: a ConfigurationError, not a client's `malformed_message`.
    @Test func aReloadBeforeServingOrWithNothingToReadIsAConfigurationError() throws {
        let reloader = GatewayReloader(onHangup: false, logger: Logger(label: "signet.test.reload"))
        let early = #expect(throws: ConfigurationError.self) { try reloader.reload(to: GatewayConfiguration(upstream: "http://127.0.0.1:9")) }
        #expect(early?.kind == .restartRequired, "\(String(describing: early))")
        let nothing = #expect(throws: ConfigurationError.self) { try reloader.reload() }
        #expect(nothing?.kind == .file, "\(String(describing: nothing))")
    }

    @Test func aRefusedConfigurationKeepsTheRunningOne() async throws {
        let harness = try await GatewayHarness.start(transport: .router)
        Cleanup.after { try await harness.stop() }
        let reloader = harness.gateways[0].reloader
        let running = try #require(reloader.configuration)
        let bank = MessageSigner(key: try SigningKey(secret: GatewayHarness.bankSecret), keyID: "bank-v1", algorithm: HMACSHA256())

        var broken = running
        broken.routes.append(.init(prefix: "/a/../b", access: .open))
        broken.sharedSecrets = []
        #expect(throws: ConfigurationError.self) { try reloader.reload(to: broken) }
        var missingFile = running
        missingFile.trustDocument = .init(file: harness.folder.appendingPathComponent("nothing.jws").path)
        missingFile.sharedSecrets = []
        let missing = #expect(throws: ConfigurationError.self) { try reloader.reload(to: missingFile) }
        #expect(missing?.kind == .file && missing?.message.contains("nothing.jws") == true)
        var moved = running
        moved.listen.port = 1
        moved.upstream = "http://127.0.0.1:2"
        moved.sharedSecrets = []
        let restart = #expect(throws: ConfigurationError.self) { try reloader.reload(to: moved) }
        #expect(restart?.kind == .restartRequired && restart?.path == "listen", "\(String(describing: restart))")
        // A reload creates no key: a response key path that is not there is refused, not made.
        var newKey = running
        newKey.responseSigning?.keyFile = harness.folder.appendingPathComponent("typo.key.pem").path
        newKey.sharedSecrets = []
        let noKey = #expect(throws: ConfigurationError.self) { try reloader.reload(to: newKey) }
        #expect(noKey?.kind == .file && noKey?.path == "responseSigning.keyFile", "\(String(describing: noKey))")
        #expect(noKey?.message.contains("typo.key.pem") == true, "\(String(describing: noKey))")
        #expect(!FileManager.default.fileExists(atPath: harness.folder.appendingPathComponent("typo.key.pem").path))
        #expect(restart?.message.contains("listen, upstream changed: a restart applies them") == true, "\(String(describing: restart))")
        // The secret every refused configuration dropped still works: the running one was kept.
        #expect(try await GatewayHarness.send(try bank.sign(try harness.scorePost(), created: Date(), nonce: Nonce.random())).status == 201)
        // And the console's activity and the metrics carried on through a good reload.
        try reloader.reload(to: running)
        let metrics = try await GatewayHarness.send(
            method: "GET",
            url: harness.base + "/metrics",
            headers: [("Authorization", "Bearer \(GatewayHarness.adminToken)")]
        ).text
        #expect(metrics.contains("signet_http_requests_total{route=\"/\",code=\"201\",reason=\"none\"} 1"), "\(metrics)")
    }



    /// A reload that changes a route's mode decides the very next request: `open` to `device-key`
    /// refuses an unsigned request the upstream never sees, and back again lets it through.
    @Test func aRouteChangedByAReloadDecidesTheNextRequest() async throws {
        let harness = try await GatewayHarness.start(store: .memory, transport: .router) {
            $0.routes.insert(.init(prefix: "/echo/report", access: .open), at: 0)
        }
        Cleanup.after { try await harness.stop() }
        let upstream = try #require(harness.upstream)
        let reloader = harness.gateways[0].reloader
        let open = try #require(reloader.configuration)
        let device = try await harness.register(.p256)
        func unsigned() async throws -> GatewayHarness.Answer {
            try await GatewayHarness.send(method: "GET", url: harness.base + "/echo/report/q")
        }
        #expect(try await unsigned().status == 200)

        var tightened = open
        tightened.routes[0].access = .deviceKey
        try reloader.reload(to: tightened)
        let before = upstream.received.count
        let refused = try await unsigned()
        #expect(refused.status == 401 && refused.reason == "signature_missing", "\(refused.text)")
        #expect(upstream.received.count == before)
        let signed = try device.signer.sign(try HTTPMessage.request(method: "GET", uri: harness.base + "/echo/report/q"), created: Date(), nonce: Nonce.random())
        let taken = try await GatewayHarness.send(signed)
        #expect(taken.status == 200 && (taken.json["headers"] as? [String: String])?["signet-device"] == device.deviceID, "\(taken.text)")

        try reloader.reload(to: open)
        #expect(try await unsigned().status == 200)
    }

    /// A reload is held to what a start is: a route whose mode's owner the new configuration does
    /// not configure — added, or left behind when its feature was removed — is refused at that
    /// route, and the running table keeps serving.
    @Test func aReloadLeavingARouteWithoutItsOwnerIsRefusedAtThatRoute() async throws {
        let folder = try SignetProcess.temporaryDirectory()
        let harness = try await GatewayHarness.start(store: .memory, transport: .router) {
            $0.tokens = .init(issuer: "https://signet.test", audience: ["scores"], keyFile: folder.appendingPathComponent("tokens.pem").path)
            $0.routes.insert(.init(prefix: "/echo/token", access: .appToken), at: 0)
        }
        Cleanup.after { try await harness.stop() }
        let reloader = harness.gateways[0].reloader
        let running = try #require(reloader.configuration)

        var added = running
        added.routes.insert(.init(prefix: "/echo/login", access: .password(PasswordRouteOptions())), at: 1)
        let unowned = #expect(throws: ConfigurationError.self) { try reloader.reload(to: added) }
        #expect(unowned?.path == "routes[1].access" && unowned?.message.contains("password") == true, "\(String(describing: unowned))")

        var removed = running
        removed.tokens = nil
        let orphaned = #expect(throws: ConfigurationError.self) { try reloader.reload(to: removed) }
        #expect(orphaned?.path == "routes[0].access" && orphaned?.message.contains("app-token") == true, "\(String(describing: orphaned))")

        // Still the running table: the token route asks for a token, the login route is not there.
        let token = try await GatewayHarness.send(method: "GET", url: harness.base + "/echo/token/x")
        #expect(token.status == 401 && token.reason == "token_missing", "\(token.text)")
        let login = try await GatewayHarness.send(method: "GET", url: harness.base + "/echo/login")
        #expect(login.reason == "signature_missing", "the verified catch-all, as before: \(login.text)")
        #expect(reloader.configuration == running)
    }


    /// A reload makes a key file only under a path the running gateway does not use (a new
    /// `nextKeyFile` at a rotation): a token, OHTTP or device CA key the running gateway uses that
    /// has vanished is refused at its key, never made again — a new key under the same path would
    /// fail every token, encapsulation or certificate made with the old one.
    @Test func aReloadRefusesToRemakeAKeyFileTheRunningGatewayUses() async throws {
        let folder = try SignetProcess.temporaryDirectory()
        func path(_ name: String) -> String { folder.appendingPathComponent(name).path }
        let harness = try await GatewayHarness.start(store: .memory, transport: .router) {
            $0.tokens = .init(issuer: "https://signet.test", audience: ["scores"], keyFile: path("tokens.pem"))
            $0.ohttp = .init(keys: [.init(keyId: 1, keyFile: path("ohttp.pem"))])
            $0.deviceCA = .init(certificateFile: path("ca.pem"), keyFile: path("ca.key"))
        }
        Cleanup.after { try await harness.stop() }
        let reloader = harness.gateways[0].reloader
        let running = try #require(reloader.configuration)
        let cases: [([String], String)] = [(["tokens.pem"], "tokens.keyFile"), (["ohttp.pem"], "ohttp.keys[0].keyFile"), (["ca.pem", "ca.key"], "deviceCA")]
        for (files, key) in cases {
            let saved = try files.map { try Data(contentsOf: URL(fileURLWithPath: path($0))) }
            for file in files { try FileManager.default.removeItem(atPath: path(file)) }
            let refused = #expect(throws: ConfigurationError.self) { try reloader.reload(to: running) }
            #expect(refused?.path == key && refused?.kind == .file, "\(files): \(String(describing: refused))")
            for file in files { #expect(!FileManager.default.fileExists(atPath: path(file)), "\(file) was made again") }
            for (file, data) in zip(files, saved) { try data.write(to: URL(fileURLWithPath: path(file))) }
        }
        // A rotation names a new next key: that one is made.
        var rotation = running
        rotation.tokens?.nextKeyFile = path("tokens-next.pem")
        try reloader.reload(to: rotation)
        #expect(FileManager.default.fileExists(atPath: path("tokens-next.pem")))
        let jwks = try await GatewayHarness.send(method: "GET", url: harness.base + "/signet/v1/jwks")
        #expect((jwks.json["keys"] as? [[String: Any]])?.count == 2, "\(jwks.text)")
    }

}
