// SPDX-License-Identifier: Apache-2.0
import Foundation
import NIOHTTP1
import SignetCore
@testable import SignetServer
import SignetTestSupport
import Testing

/// Known agents (Web Bot Auth): a signature whose `Signature-Agent` names a configured agent's
/// directory — served by Python's http.server — is verified with the key that directory publishes,
/// and the upstream learns the agent's name; every way it can be wrong is refused with its code;
/// the directory is fetched once for many requests, kept when its server fails, fetched again when
/// it expires, and never followed through a redirect.
@Suite(.awaitsCleanups) struct WebBotAuthTests {
    struct Setup {
        let harness: GatewayHarness
        let directory: PythonServer
        let file: URL
        let clock: ManualClock
        var origin: String { "http://127.0.0.1:\(directory.port)" }
    }

    static func directoryJSON(_ keys: [SigningKey]) throws -> Data {
        let entries = try keys.map { key -> [String: Any] in
            var jwk = try JSONSerialization.jsonObject(with: Data(key.verificationKey.jwk.jsonString.utf8)) as! [String: Any]
            jwk["kid"] = try key.verificationKey.jwk.thumbprint
            jwk["use"] = "sig"
            return jwk
        }
        return try JSONSerialization.data(withJSONObject: ["keys": entries])
    }

    static func start(
        publishing keys: [SigningKey],
        directory path: String = "",
        requireSigned: Bool = false,
        transport: GatewayHarness.Transport = .router
    ) async throws -> Setup {
        let folder = try SignetProcess.temporaryDirectory()
        let file = folder.appendingPathComponent("directory.json")
        try Self.directoryJSON(keys).write(to: file)
        let server = try await PythonServer("agent_directory_peer.py", [file.path])
        let clock = ManualClock()
        // Over sockets the gateway keeps real time; the manual clock, never advanced there, says it.
        let harness = try await GatewayHarness.start(store: .memory, transport: transport, clock: transport == .router ? clock : nil) { configuration in
            configuration.webBotAuth = .init(
                agents: [.init(name: "example-bot", directory: "http://127.0.0.1:\(server.port)\(path)")],
                tags: ["web-bot-auth", "agent-browser-auth"]
            )
            configuration.webBotAuth?.requireSignedDirectory = requireSigned
            configuration.routes.insert(contentsOf: [
                .init(prefix: "/echo/agents", access: .init(mode: "agent")),
                .init(prefix: "/echo/mixed", access: .init(mode: "verified", options: ["agents": .string("*")])),
                .init(prefix: "/echo/devices-or-agents", access: .init(mode: "device-key", options: ["agents": .string("*")])),
                .init(prefix: "/echo/attested-or-agents", access: .init(mode: "attested", options: ["agents": .string("example-bot")])),
            ], at: 0)
        }
        return Setup(harness: harness, directory: server, file: file, clock: clock)
    }

    /// `key` signs a GET of `path` as an agent whose directory is at `agent`.
    static func get(
        _ setup: Setup,
        _ path: String,
        key: SigningKey,
        agent: String? = nil,
        tag: String = "web-bot-auth",
        validity: Int64 = 3600,
        coverAgent: Bool = true,
        nonce: String = Nonce.random()
    ) async throws -> GatewayHarness.Answer {
        let request = try HTTPMessage.request(
            method: "GET",
            uri: setup.harness.base + path,
            fields: [("Signature-Agent", "sig1=\"\(agent ?? setup.origin)\"")]
        )
        // What the gateway asks of every signer: the method and the whole target.
        var components: [ComponentIdentifier] = ["@method", "@target-uri"]
        if coverAgent { components.append(ComponentIdentifier("signature-agent", parameters: SFParameters([("key", .string("sig1"))]))) }
        let signer = MessageSigner(key: key, keyID: try key.verificationKey.jwk.thumbprint, algorithm: try SignatureAlgorithms.standard.require(key.type.defaultAlgorithm))
        let signed = try signer.sign(
            request,
            components: components,
            created: setup.clock.now,
            expires: setup.clock.now.addingTimeInterval(TimeInterval(validity)),
            nonce: nonce,
            tag: tag
        )
        return try await GatewayHarness.send(signed)
    }

    static func fetches(_ setup: Setup) async throws -> Int {
        Int(try await GatewayHarness.send(method: "GET", url: setup.origin + "/fetches").text) ?? -1
    }

    /// Over real sockets too, where the event-loop data plane verifies agents (issue 39).
    @Test(arguments: [GatewayHarness.Transport.router, .sockets])
    func aKnownAgentSignsWithTheKeyItPublishes(_ transport: GatewayHarness.Transport) async throws {
        let key = try SigningKey.generate(.ed25519)
        let setup = try await Self.start(publishing: [key], transport: transport)
        Cleanup.after {
            try await setup.harness.stop()
            setup.directory.stop()
        }
        let nonce = Nonce.random()
        let accepted = try await Self.get(setup, "/echo/agents", key: key, nonce: nonce)
        #expect(accepted.status == 200, "\(accepted.text)")
        let seen = accepted.json["headers"] as? [String: String] ?? [:]
        #expect(seen["signet-agent"] == "example-bot" && seen["signet-trust-level"] == "agent", "\(seen)")
        #expect(seen["signet-key-id"] == (try key.verificationKey.jwk.thumbprint))
        #expect(try await Self.get(setup, "/echo/agents", key: key, nonce: nonce).reason == "nonce_replayed")
        // Visa's browsing tag is configured too; a tag not configured is not taken.
        #expect(try await Self.get(setup, "/echo/agents", key: key, tag: "agent-browser-auth").status == 200)
        #expect(try await Self.get(setup, "/echo/agents", key: key, tag: "agent-payer-auth").reason == "tag_mismatch")
        // A route that takes registered clients and agents takes both.
        #expect(try await Self.get(setup, "/echo/mixed", key: key).status == 200)
        let device = try await setup.harness.register(.p256)
        let signed = try device.signer.sign(
            try HTTPMessage.request(method: "GET", uri: setup.harness.base + "/echo/mixed"), created: setup.clock.now, nonce: Nonce.random())
        #expect(try await GatewayHarness.send(signed).status == 200)
        // An agent's key passes no route that asks for a registered client's trust level.
        #expect(try await Self.get(setup, "/echo/elsewhere", key: key).status == 401)
        // Many requests, one fetch.
        #expect(try await Self.fetches(setup) == 1)
        if transport == .sockets {
            // The four admitted ones (two agents', one device's on the mixed route) on the loop.
            #expect(setup.harness.gateway.listeners.dataPlane.forwardedCount == 4)
        }
    }

    /// An agent's refusal says what an agent's signature holds (`Accept-Signature`): its
    /// `Signature-Agent` member, `created`, `expires` and a tag the route takes; a registered
    /// client on a route that also takes agents is asked as any.
    @Test func anAgentIsToldWhatItsSignatureMustHold() async throws {
        let key = try SigningKey.generate(.ed25519)
        let setup = try await Self.start(publishing: [key])
        Cleanup.after {
            try await setup.harness.stop()
            setup.directory.stop()
        }
        let member = ComponentIdentifier("signature-agent", parameters: SFParameters([("key", .string("sig1"))]))
        func asked(_ answer: GatewayHarness.Answer) throws -> SignatureRequest { try AcceptSignatureTests.asked(answer) }
        let untagged = try await Self.get(setup, "/echo/agents", key: key, tag: "agent-payer-auth")
        #expect(untagged.status == 401 && untagged.reason == "tag_mismatch", "\(untagged.text)")
        let forAgent = try asked(untagged)
        #expect(forAgent.components.contains(member) && forAgent.components.contains(.targetURI), "\(forAgent)")
        #expect(forAgent.created && forAgent.expires && forAgent.tag == "web-bot-auth", "\(forAgent)")
        let uncovered = try await Self.get(setup, "/echo/agents", key: key, coverAgent: false)
        let forUncovered = try asked(uncovered)
        #expect(uncovered.reason == "component_not_covered" && forUncovered.components.contains(member), "\(uncovered.text)")
        // No signature at all on a route only agents pass: told to sign as one.
        let unsigned = try await GatewayHarness.send(method: "GET", url: setup.harness.base + "/echo/agents/x")
        let forUnsigned = try asked(unsigned)
        #expect(unsigned.reason == "signature_missing" && forUnsigned.components.contains(member), "\(unsigned.text)")
        // On a route for devices and agents, a client without Signature-Agent is asked as a device.
        let plain = try await GatewayHarness.send(method: "GET", url: setup.harness.base + "/echo/mixed/x")
        let forDevice = try asked(plain)
        #expect(plain.reason == "signature_missing" && !forDevice.components.contains(member) && forDevice.tag == nil, "\(forDevice)")
    }

    /// A trust-level route with `agents` takes known agents beside the devices its level admits,
    /// and still refuses a client below that level (issue 42).
    @Test func aTrustLevelRouteWithAgentsTakesThemBesideItsDevices() async throws {
        let key = try SigningKey.generate(.ed25519)
        let setup = try await Self.start(publishing: [key])
        Cleanup.after {
            try await setup.harness.stop()
            setup.directory.stop()
        }
        let agent = try await Self.get(setup, "/echo/devices-or-agents", key: key)
        #expect(agent.status == 200, "\(agent.text)")
        #expect((agent.json["headers"] as? [String: String])?["signet-trust-level"] == "agent")
        #expect(try await Self.get(setup, "/echo/attested-or-agents", key: key).status == 200)

        let device = try await setup.harness.register(.p256)
        func signed(_ path: String, by signer: MessageSigner) async throws -> GatewayHarness.Answer {
            let request = try HTTPMessage.request(method: "GET", uri: setup.harness.base + path)
            return try await GatewayHarness.send(try signer.sign(request, created: setup.clock.now, nonce: Nonce.random()))
        }
        #expect(try await signed("/echo/devices-or-agents", by: device.signer).status == 200)
        // Below the route's level: a shared secret on a device-key route, a device key on an attested one.
        let bank = MessageSigner(key: try SigningKey(secret: GatewayHarness.bankSecret), keyID: "bank-v1", algorithm: HMACSHA256())
        #expect(try await signed("/echo/devices-or-agents", by: bank).reason == "trust_level_insufficient")
        #expect(try await signed("/echo/attested-or-agents", by: device.signer).reason == "trust_level_insufficient")
    }

    @Test(arguments: [GatewayHarness.Transport.router, .sockets])
    func everyWayAnAgentsSignatureCanBeWrongIsRefused(_ transport: GatewayHarness.Transport) async throws {
        let key = try SigningKey.generate(.ed25519)
        let setup = try await Self.start(publishing: [key], transport: transport)
        Cleanup.after {
            try await setup.harness.stop()
            setup.directory.stop()
        }
        let stranger = try SigningKey.generate(.ed25519)
        let unknown = try await Self.get(setup, "/echo/agents", key: stranger)
        #expect(unknown.status == 401 && unknown.reason == "unknown_key", "\(unknown.text)")
        let elsewhere = try await Self.get(setup, "/echo/agents", key: key, agent: "https://other-agent.example")
        #expect(elsewhere.status == 401 && elsewhere.reason == "agent_unknown", "\(elsewhere.text)")
        let uncovered = try await Self.get(setup, "/echo/agents", key: key, coverAgent: false)
        #expect(uncovered.reason == "component_not_covered", "\(uncovered.text)")
        let long = try await Self.get(setup, "/echo/agents", key: key, validity: 2 * 86_400)
        #expect(long.reason == "expired", "\(long.text)")
        let notHTTPS = try await Self.get(setup, "/echo/agents", key: key, agent: "ftp://127.0.0.1")
        #expect(notHTTPS.reason == "malformed_header", "\(notHTTPS.text)")
        // A request with no agent at all, to an agents-only route: no key to find.
        let plain = try await setup.harness.register(.p256)
        let signed = try plain.signer.sign(
            try HTTPMessage.request(method: "GET", uri: setup.harness.base + "/echo/agents"), created: setup.clock.now, nonce: Nonce.random())
        #expect(try await GatewayHarness.send(signed).reason == "trust_level_insufficient")
    }

    /// An agent's body is checked against its `Content-Digest` as a registered client's is (where
    /// Cloudflare's verifier checks none, cloudflare/cloudflare-docs#23099): a body changed on the
    /// way, or a digest the signature does not cover, is refused.
    @Test func anAgentsBodyIsCheckedAgainstItsDigest() async throws {
        let key = try SigningKey.generate(.ed25519)
        let setup = try await Self.start(publishing: [key])
        Cleanup.after {
            try await setup.harness.stop()
            setup.directory.stop()
        }
        let signer = MessageSigner(key: key, keyID: try key.verificationKey.jwk.thumbprint, algorithm: Ed25519Algorithm())
        let agentKey = ComponentIdentifier("signature-agent", parameters: SFParameters([("key", .string("sig1"))]))
        func post(_ components: [ComponentIdentifier], changedOnTheWay: Bool = false) async throws -> GatewayHarness.Answer {
            let request = try HTTPMessage.request(
                method: "POST",
                uri: setup.harness.base + "/echo/agents",
                fields: [("Signature-Agent", "sig1=\"\(setup.origin)\""), ("Content-Type", "application/json")],
                body: Array(#"{"order":1}"#.utf8)
            )
            var signed = try signer.sign(
                request,
                components: components + [agentKey],
                created: setup.clock.now,
                expires: setup.clock.now.addingTimeInterval(3600),
                nonce: Nonce.random(),
                tag: "web-bot-auth"
            )
            if changedOnTheWay { signed.body = Array(#"{"order":9}"#.utf8) }
            return try await GatewayHarness.send(signed)
        }
        let covered: [ComponentIdentifier] = ["@method", "@target-uri", "content-digest", "content-type"]
        let accepted = try await post(covered)
        #expect(accepted.status == 200, "\(accepted.text)")
        let changed = try await post(covered, changedOnTheWay: true)
        #expect(changed.status == 401 && changed.reason == "digest_mismatch", "\(changed.text)")
        let uncovered = try await post(["@method", "@target-uri", "content-type"])
        #expect(uncovered.status == 401 && ["digest_missing", "digest_not_covered"].contains(uncovered.reason), "\(uncovered.text)")
    }

    @Test func theDirectoryIsKeptThroughAFailureAndFetchedAgainWhenItExpires() async throws {
        let first = try SigningKey.generate(.ed25519)
        let setup = try await Self.start(publishing: [first])
        Cleanup.after {
            try await setup.harness.stop()
            setup.directory.stop()
        }
        #expect(try await Self.get(setup, "/echo/agents", key: first).status == 200)
        // The server fails: the keys fetched before still serve, past their time (§6.10).
        try FileManager.default.removeItem(at: setup.file)
        setup.clock.advance(by: 120)
        #expect(try await Self.get(setup, "/echo/agents", key: first).status == 200)
        #expect(try await Self.fetches(setup) == 2, "fetched again once it expired, and failed")
        // The agent rotates its key: fetched again a minute later, the new key is taken.
        let second = try SigningKey.generate(.p256)
        try Self.directoryJSON([second]).write(to: setup.file)
        #expect(try await Self.get(setup, "/echo/agents", key: second).reason == "unknown_key", "not fetched again within the minute")
        setup.clock.advance(by: 61)
        #expect(try await Self.get(setup, "/echo/agents", key: second).status == 200)
        #expect(try await Self.get(setup, "/echo/agents", key: first).reason == "unknown_key", "the new directory replaced the old")
    }

    @Test func aRedirectIsNotFollowed() async throws {
        let key = try SigningKey.generate(.ed25519)
        let setup = try await Self.start(publishing: [key], directory: "/moved")
        Cleanup.after {
            try await setup.harness.stop()
            setup.directory.stop()
        }
        let answer = try await Self.get(setup, "/echo/agents", key: key, agent: setup.origin + "/moved")
        #expect(answer.status == 503 && answer.reason == "agent_directory_unavailable", "\(answer.text)")
    }

    /// A directory that sends its head and then trickles is given up after 5 s for the whole
    /// answer, and requests that arrive together while the first fetch runs wait for it.
    @Test func aTricklingDirectoryIsGivenUpAndConcurrentRequestsShareOneFetch() async throws {
        let key = try SigningKey.generate(.ed25519)
        let slow = try await Self.start(publishing: [key], directory: "/slow")
        Cleanup.after {
            try await slow.harness.stop()
            slow.directory.stop()
        }
        let started = ContinuousClock.now
        let answer = try await Self.get(slow, "/echo/agents", key: key, agent: slow.origin + "/slow")
        #expect(answer.status == 503 && answer.reason == "agent_directory_unavailable", "\(answer.text)")
        #expect(ContinuousClock.now - started < .seconds(15), "given up, not held for the directory's 30 s")

        let setup = try await Self.start(publishing: [key])
        Cleanup.after {
            try await setup.harness.stop()
            setup.directory.stop()
        }
        let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<4 { group.addTask { try await Self.get(setup, "/echo/agents", key: key).status } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(statuses == [200, 200, 200, 200], "\(statuses)")
        #expect(try await Self.fetches(setup) == 1)
    }

    /// pyauth's http-message-signatures signs as a known agent, with the Web Bot Auth tag and the
    /// dictionary form of `Signature-Agent`: the gateway takes it once.
    @Test func pyauthSignsAsAKnownAgent() async throws {
        guard PythonPeer.available("http_message_signatures, cryptography") else { return }
        let key = try SigningKey.generate(.ed25519)
        let setup = try await Self.start(publishing: [key])
        Cleanup.after {
            try await setup.harness.stop()
            setup.directory.stop()
        }
        let folder = try SignetProcess.temporaryDirectory()
        try Data(try #require(key.pemRepresentation).utf8).write(to: folder.appendingPathComponent("key.pem"))
        let output = try await PythonPeer.run(
            "web_bot_auth_peer.py", ["key.pem", setup.origin, "web-bot-auth", setup.harness.base + "/echo/agents"], in: folder)
        let wire = try #require(try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any])
        #expect(wire["keyid"] as? String == (try key.verificationKey.jwk.thumbprint), "Python and Signet agree on the thumbprint")
        let headers = (wire["headers"] as? [[String]] ?? []).filter { !["host", "content-length"].contains($0[0].lowercased()) }
        func send() async throws -> GatewayHarness.Answer {
            try await GatewayHarness.send(method: "GET", url: wire["url"] as! String, headers: headers.map { ($0[0], $0[1]) })
        }
        let accepted = try await send()
        #expect(accepted.status == 200, "\(accepted.text)")
        #expect((accepted.json["headers"] as? [String: String])?["signet-agent"] == "example-bot")
        #expect(try await send().reason == "nonce_replayed")
    }

    /// A directory signed by its key (§5.5, as the draft's E.2.3 vector is) is taken; unsigned, it is
    /// refused where `requireSignedDirectory`; signed by a key it does not publish, or with its body
    /// changed after signing, it is refused everywhere.
    @Test func aSignedDirectoryIsCheckedAndCanBeRequired() async throws {
        let key = try SigningKey.generate(.ed25519)
        let setup = try await Self.start(publishing: [key], requireSigned: true)
        Cleanup.after {
            try await setup.harness.stop()
            setup.directory.stop()
        }
        let unsigned = try await Self.get(setup, "/echo/agents", key: key)
        #expect(unsigned.status == 503 && unsigned.reason == "agent_directory_unavailable", "\(unsigned.text)")

        func sign(_ body: Data, by signer: SigningKey, published: SigningKey) throws {
            let request = try HTTPMessage.request(method: "GET", uri: setup.origin + "/.well-known/http-message-signatures-directory")
            let response = HTTPMessage.response(status: 200, body: Array(body))
            let messageSigner = MessageSigner(key: signer, keyID: try published.verificationKey.jwk.thumbprint, algorithm: Ed25519Algorithm())
            let signed = try messageSigner.sign(
                response,
                label: "binding0",
                components: [ComponentIdentifier("@authority", parameters: SFParameters([("req", .boolean(true))])), "content-digest"],
                created: setup.clock.now,
                expires: setup.clock.now.addingTimeInterval(86_400),
                tag: "http-message-signatures-directory",
                relatedRequest: request
            )
            // The body as signed (JSONSerialization need not write a dictionary the same way twice).
            try body.write(to: setup.file)
            let fields = signed.fields.lines.filter { ["content-digest", "signature-input", "signature"].contains($0.name.lowercased()) }
            try JSONSerialization.data(withJSONObject: fields.map { [$0.name, $0.value] })
                .write(to: URL(fileURLWithPath: setup.file.path + ".headers"))
        }
        // Signed by the published key: taken (after the minute the failed fetch waits).
        try sign(try Self.directoryJSON([key]), by: key, published: key)
        setup.clock.advance(by: 61)
        #expect(try await Self.get(setup, "/echo/agents", key: key).status == 200)
        // Another key signs in the published key's name, or the body changes: refused, the keys kept
        // from before still serve until they expire and fail for a day.
        let other = try SigningKey.generate(.ed25519)
        try sign(try Self.directoryJSON([key]), by: other, published: key)
        setup.clock.advance(by: 61)
        #expect(try await Self.get(setup, "/echo/agents", key: key).status == 200, "the last good directory still serves")
        #expect(try await Self.fetches(setup) == 3)
        try sign(try Self.directoryJSON([key]), by: key, published: key)
        try Self.directoryJSON([key, other]).write(to: setup.file)
        setup.clock.advance(by: 61)
        #expect(try await Self.get(setup, "/echo/agents", key: other).reason == "unknown_key", "a changed body's keys are not taken")
    }
}
