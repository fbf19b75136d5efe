// SPDX-License-Identifier: Apache-2.0
import ExampleScores
import Foundation
import NIOHTTP1
import SignetCore
import SignetServer
import SignetTestSupport
import Testing

/// Requests encrypted to the gateway (RFC 9458 over RFC 9292), through the same pipeline as plain
/// ones, through the gateway in-process.
@Suite(.awaitsCleanups) struct ObliviousGatewayTests {
    static func start(
        failuresPerMinute: Int = 30,
        requestsPerMinute: Int? = nil,
        transport: GatewayHarness.Transport = .router,
        _ change: @escaping @Sendable (inout GatewayConfiguration) -> Void = { _ in }
    ) async throws -> GatewayHarness {
        try await GatewayHarness.start(transport: transport) { configuration in
            change(&configuration)
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("signet-ohttp-\(UUID().uuidString)")
            try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            var ohttp = GatewayConfiguration.OHTTP(keys: [
                .init(keyId: 1, keyFile: folder.appendingPathComponent("ohttp-1.key.pem").path),
                .init(keyId: 2, keyFile: folder.appendingPathComponent("ohttp-2.key.pem").path, kem: .p256),
            ])
            ohttp.decapsulationFailuresPerSourcePerMinute = failuresPerMinute
            ohttp.requestsPerSourcePerMinute = requestsPerMinute
            configuration.ohttp = ohttp
        }
    }

    /// The Binary HTTP form of a SignetCore request, as a client SDK would send it.
    static func binary(_ message: HTTPMessage) -> [UInt8] {
        let target = message.target!
        return BinaryHTTPMessage(
            head: .request(
                method: message.method!,
                scheme: target.scheme,
                authority: target.authority,
                path: target.pathValue + (target.query.map { "?" + $0 } ?? "")
            ),
            fields: message.fields.lines.filter { !["host", "content-length"].contains($0.name.lowercased()) }
                .map { BinaryHTTPMessage.Field($0.name, $0.value) },
            content: message.body
        ).encoded()
    }

    static func keys(_ harness: GatewayHarness) async throws -> [OHTTPKeyConfiguration] {
        let answer = try await GatewayHarness.send(method: "GET", url: harness.base + "/signet/v1/ohttp-keys")
        try #require(answer.status == 200)
        #expect(answer.headers.first(name: "content-type") == "application/ohttp-keys")
        return try OHTTPKeyConfiguration.decodeList(answer.body)
    }

    static func post(
        _ bytes: [UInt8],
        to harness: GatewayHarness,
        contentType: String = "message/ohttp-req",
        headers: [(String, String)] = []
    ) async throws -> GatewayHarness.Answer {
        try await GatewayHarness.send(
            method: "POST",
            url: harness.base + "/signet/v1/ohttp",
            headers: [("Content-Type", contentType)] + headers,
            body: bytes
        )
    }

    /// Sends `message` encrypted; returns the outer answer and, when it is 200, the inner response.
    static func exchange(
        _ message: [UInt8],
        harness: GatewayHarness,
        key: OHTTPKeyConfiguration
    ) async throws -> (outer: GatewayHarness.Answer, inner: BinaryHTTPMessage?, sent: ObliviousClientRequest) {
        let sent = try ObliviousClientRequest(encapsulating: message, to: key)
        let outer = try await post(sent.bytes, to: harness)
        guard outer.status == 200 else { return (outer, nil, sent) }
        #expect(outer.headers.first(name: "content-type") == "message/ohttp-res")
        return (outer, try BinaryHTTPMessage(decoding: try sent.openResponse(outer.body)), sent)
    }

    static func reason(_ message: BinaryHTTPMessage?) -> String? {
        guard let content = message?.content,
            let object = try? JSONSerialization.jsonObject(with: Data(content)) as? [String: Any]
        else { return nil }
        return object["reason"] as? String
    }

    @Test func aSignedRequestGoesThroughEncryptedAndItsSignedAnswerComesBack() async throws {
        let harness = try await Self.start()
        Cleanup.after { try await harness.stop() }
        let keys = try await Self.keys(harness)
        #expect(keys.map(\.keyID) == [1, 2])
        #expect(keys.map(\.kem) == [OHTTPAlgorithms.kemX25519, OHTTPAlgorithms.kemP256])
        #expect(keys.allSatisfy { $0.suites == OHTTPAlgorithms.allSuites })

        let device = try await harness.register(.ed25519)
        for key in keys {
            let signed = try device.signer.sign(try harness.scorePost(), created: Date(), nonce: Nonce.random())
            let (outer, inner, _) = try await Self.exchange(Self.binary(signed), harness: harness, key: key)
            #expect(outer.status == 200, "\(outer.text)")
            let response = try #require(inner)
            #expect(response.head == .response(status: 201), "\(String(decoding: response.content, as: UTF8.self))")
            let json = try JSONSerialization.jsonObject(with: Data(response.content)) as? [String: Any]
            #expect(json?["player"] as? String == device.deviceID, "the upstream saw the verified identity")

            // The gateway's response signature travels inside, bound to the request the client signed.
            var fields = MessageFields()
            for field in response.fields { fields.append(name: field.name, value: field.value) }
            let message = HTTPMessage.response(status: 201, fields: fields, body: response.content)
            var policy = VerificationPolicy.permissive
            policy.selection = .label("gateway")
            let verifier = MessageVerifier(
                keys: KeyRing([KeyRecord(keyID: "gateway", algorithm: "ed25519", key: harness.gatewayKey.verificationKey)]),
                policy: policy,
                nonces: nil
            )
            #expect(try await verifier.verify(message, relatedRequest: signed, now: Date()).covers(.contentDigest))
        }
        #expect(harness.backend.receivedCount == 2)

        // The open route, encrypted, without a signature.
        let top = try HTTPMessage.request(method: "GET", uri: harness.base + "/scores/top")
        let (_, open, _) = try await Self.exchange(Self.binary(top), harness: harness, key: keys[0])
        #expect(open?.head == .response(status: 200))
    }

    /// The upstream can log an inner request by its own `X-Request-Id`: the client's when it put
    /// one inside, else one made for it — never the relay's, which would tie the relay's logs to
    /// the content.
    @Test func anInnerRequestCarriesARequestIDOfItsOwn() async throws {
        let harness = try await Self.start()
        Cleanup.after { try await harness.stop() }
        let key = try #require(try await Self.keys(harness).first)
        let device = try await harness.register()
        func echoedID(inside: MessageFields) async throws -> String? {
            let get = try HTTPMessage.request(method: "GET", uri: harness.base + "/echo/headers", fields: inside)
            let signed = try device.signer.sign(get, created: Date(), nonce: Nonce.random())
            let sent = try ObliviousClientRequest(encapsulating: Self.binary(signed), to: key)
            let outer = try await Self.post(sent.bytes, to: harness, headers: [("X-Request-Id", "relay-7")])
            let inner = try BinaryHTTPMessage(decoding: try sent.openResponse(outer.body))
            #expect(inner.head == .response(status: 200), "\(Self.reason(inner) ?? "-")")
            let headers = try JSONDecoder().decode([String: String].self, from: Data(inner.content))
            return headers["x-request-id"]
        }
        let made = try #require(try await echoedID(inside: []))
        #expect(made != "relay-7" && UUID(uuidString: made) != nil, "\(made)")
        #expect(try await echoedID(inside: [("X-Request-Id", "app-42")]) == "app-42")
    }

    @Test func refusalsInsideTravelEncryptedAndNothingReachesTheUpstream() async throws {
        let harness = try await Self.start()
        Cleanup.after { try await harness.stop() }
        let key = try #require(try await Self.keys(harness).first)
        let device = try await harness.register()
        let signed = try device.signer.sign(try harness.scorePost(), created: Date(), nonce: Nonce.random())

        let first = try await Self.exchange(Self.binary(signed), harness: harness, key: key)
        #expect(first.inner?.head == .response(status: 201))
        // The same encapsulation again: refused before anything is opened.
        let replayed = try await Self.post(first.sent.bytes, to: harness)
        #expect(replayed.status == 400 && replayed.reason == "encapsulation_replayed", "\(replayed.text)")
        // A fresh encapsulation of the same signed request: the inner nonce refuses it, encrypted.
        let again = try await Self.exchange(Self.binary(signed), harness: harness, key: key)
        #expect(again.outer.status == 200)
        #expect(again.inner?.head == .response(status: 401) && Self.reason(again.inner) == "nonce_replayed")

        let unsigned = try await Self.exchange(Self.binary(try harness.scorePost()), harness: harness, key: key)
        #expect(unsigned.inner?.head == .response(status: 401) && Self.reason(unsigned.inner) == "signature_missing")

        // Requests do not nest, and the inner path is normalised like any other.
        let nested = try HTTPMessage.request(method: "POST", uri: harness.base + "/signet/v1/ohttp", body: [1])
        let nestedAnswer = try await Self.exchange(Self.binary(nested), harness: harness, key: key)
        #expect(nestedAnswer.inner?.head == .response(status: 404))
        let walking = try HTTPMessage.request(method: "GET", uri: harness.base + "/scores/top/..%2fx")
        let walkingAnswer = try await Self.exchange(Self.binary(walking), harness: harness, key: key)
        #expect(Self.reason(walkingAnswer.inner) == "path_ambiguous")

        // A Content-Length that disagrees with the content, or a smuggled line break, never goes on.
        var lying = try BinaryHTTPMessage(decoding: Self.binary(signed))
        lying.fields.append(.init("content-length", "1"))
        let lyingAnswer = try await Self.exchange(lying.encoded(), harness: harness, key: key)
        #expect(lyingAnswer.inner?.head == .response(status: 400) && Self.reason(lyingAnswer.inner) == "malformed_message")
        // A target no HTTP/1.1 parser would pass (a request line split in the query, a space, a control
        // or a non-ASCII byte in the path or the query) is refused when the Binary HTTP is read.
        let host = "127.0.0.1:\(harness.port)"
        for target in [
            "/scores/top?x HTTP/1.1\r\nHost: a\r\n\r\nGET /admin", "/scores/top?a b", "/scores/top?\u{7F}",
            "/scores/top?é", "/scores/top?\0", "/scores/top\r\nX: y", "/scores/t op", "/scores/tøp",
        ] {
            let smuggled = BinaryHTTPMessage(head: .request(method: "GET", scheme: "http", authority: host, path: target), fields: [])
            let answer = try await Self.exchange(smuggled.encoded(), harness: harness, key: key)
            #expect(answer.inner?.head == .response(status: 400) && Self.reason(answer.inner) == "malformed_message", "\(target.debugDescription) → \(Self.reason(answer.inner) ?? "-")")
        }
        // A query of visible ASCII goes on as it is.
        let plainQuery = BinaryHTTPMessage(head: .request(method: "GET", scheme: "http", authority: host, path: "/scores/top?a=%20b&c=[]"), fields: [])
        let plainAnswer = try await Self.exchange(plainQuery.encoded(), harness: harness, key: key)
        #expect(plainAnswer.inner?.head == .response(status: 200), "\(Self.reason(plainAnswer.inner) ?? "-")")
        #expect(harness.backend.receivedCount == 1)
    }

    @Test func refusalsBeforeDecapsulationArePlainAndFailuresAreLimited() async throws {
        let harness = try await Self.start(failuresPerMinute: 3)
        Cleanup.after { try await harness.stop() }
        let key = try #require(try await Self.keys(harness).first)
        let message = Self.binary(try HTTPMessage.request(method: "GET", uri: harness.base + "/scores/top"))

        var unknown = key
        unknown.keyID = 9
        let unknownAnswer = try await Self.post(try ObliviousClientRequest(encapsulating: message, to: unknown).bytes, to: harness)
        #expect(unknownAnswer.status == 400 && unknownAnswer.reason == "ohttp_key_unknown")
        // RFC 9458 §5.3: the problem type clients look for to fetch the keys again.
        #expect(unknownAnswer.json["type"] as? String == "https://iana.org/assignments/http-problem-types#ohttp-key")
        #expect(unknownAnswer.json["type"] as? String == "https://iana.org/assignments/http-problem-types#ohttp-key")

        let wrongType = try await Self.post(try ObliviousClientRequest(encapsulating: message, to: key).bytes, to: harness, contentType: "application/octet-stream")
        #expect(wrongType.status == 400 && wrongType.reason == "malformed_message")
        // The media type itself, not a prefix of it; its parameters and case aside.
        let lookalike = try await Self.post(try ObliviousClientRequest(encapsulating: message, to: key).bytes, to: harness, contentType: "message/ohttp-requests")
        #expect(lookalike.status == 400 && lookalike.reason == "malformed_message")
        let parameterised = try await Self.post(try ObliviousClientRequest(encapsulating: message, to: key).bytes, to: harness, contentType: "Message/OHTTP-Req; x=1")
        #expect(parameterised.status == 200, "\(parameterised.text)")

        let oversized = try await Self.post([UInt8](repeating: 1, count: (1 << 20) + 1), to: harness)
        #expect(oversized.status == 413 && oversized.reason == "body_too_large")

        for _ in 0..<3 {
            var tampered = try ObliviousClientRequest(encapsulating: message, to: key).bytes
            tampered[tampered.count - 1] ^= 1
            let answer = try await Self.post(tampered, to: harness)
            #expect(answer.status == 400 && answer.reason == "decapsulation_failed")
        }
        // Past the limit even a good request from that source waits.
        let limited = try await Self.post(try ObliviousClientRequest(encapsulating: message, to: key).bytes, to: harness)
        #expect(limited.status == 429 && limited.reason == "rate_limited")
        #expect(limited.headers.first(name: "Retry-After").flatMap { Int($0) }.map { (1...60).contains($0) } == true)
        #expect(harness.backend.receivedCount == 0)
    }

    /// Encapsulations that open are limited per source too: each is remembered in the store.
    @Test func encapsulatedRequestsAreLimitedPerSource() async throws {
        let harness = try await Self.start(requestsPerMinute: 2)
        Cleanup.after { try await harness.stop() }
        let key = try #require(try await Self.keys(harness).first)
        let message = Self.binary(try HTTPMessage.request(method: "GET", uri: harness.base + "/scores/top"))
        let window = RestOfWindow()
        for _ in 0..<2 {
            #expect(try await Self.exchange(message, harness: harness, key: key).inner?.head == .response(status: 200))
        }
        let third = try await Self.post(try ObliviousClientRequest(encapsulating: message, to: key).bytes, to: harness)
        #expect(third.status == 429 && third.reason == "rate_limited", "\(third.text)")
        #expect(window.admits(third.headers.first(name: "Retry-After").flatMap { Int($0) }))
    }

    /// Behind a load balancer, an encapsulated request is its client's, not the balancer's (issue 36
    /// §4): one client's challenges inside OHTTP do not use up another's, and the upstream is told
    /// the client's address.
    @Test func anEncapsulatedRequestKeepsItsClientsAddressBehindTrustedProxies() async throws {
        let harness = try await Self.start {
            $0.trustedProxies = ["127.0.0.1/32"]
            $0.challengesPerSourcePerMinute = 2
            $0.routes.insert(.init(prefix: "/echo", access: .open), at: 0)
        }
        Cleanup.after { try await harness.stop() }
        let key = try #require(try await Self.keys(harness).first)
        func send(_ message: HTTPMessage, from client: String) async throws -> BinaryHTTPMessage? {
            let sent = try ObliviousClientRequest(encapsulating: Self.binary(message), to: key)
            let outer = try await GatewayHarness.send(
                method: "POST", url: harness.base + "/signet/v1/ohttp",
                headers: [("Content-Type", "message/ohttp-req"), ("X-Forwarded-For", client)], body: sent.bytes)
            try #require(outer.status == 200, "\(outer.text)")
            return try BinaryHTTPMessage(decoding: try sent.openResponse(outer.body))
        }
        let challenge = try HTTPMessage.request(method: "POST", uri: harness.base + "/signet/v1/challenges")
        for _ in 0..<2 { #expect(try await send(challenge, from: "203.0.113.1")?.head == .response(status: 201)) }
        let third = try await send(challenge, from: "203.0.113.1")
        #expect(third?.head == .response(status: 429) && Self.reason(third) == "rate_limited")
        // Another client behind the same balancer still gets its first challenge.
        #expect(try await send(challenge, from: "203.0.113.2")?.head == .response(status: 201))
        // And the upstream hears of the client, not of the balancer.
        let echoed = try await send(try HTTPMessage.request(method: "GET", uri: harness.base + "/echo/client"), from: "198.51.100.7")
        #expect(echoed?.head == .response(status: 200))
        let echo = try JSONDecoder().decode(ScoresBackend.Echo.self, from: Data(try #require(echoed).content))
        #expect(echo.headers["x-forwarded-for"] == "198.51.100.7", "\(echo.headers)")
    }

    @Test func keysAreCreatedOnceAndSharedConfigurationsAreChecked() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("signet-ohttp-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("k.pem").path
        let configuration = GatewayConfiguration.OHTTP(keys: [.init(keyId: 5, keyFile: file)])
        let created = try OHTTPKeySet.loadOrCreate(configuration)
        let loaded = try OHTTPKeySet.loadOrCreate(configuration)
        #expect(created.entries[0].key.configuration == loaded.entries[0].key.configuration)
        #expect(try FileManager.default.attributesOfItem(atPath: file)[.posixPermissions] as? Int == 0o600)
        var wrongKEM = configuration
        wrongKEM.keys[0].kem = .p256
        let mismatch = #expect(throws: ConfigurationError.self) { try OHTTPKeySet.loadOrCreate(wrongKEM) }
        #expect(mismatch?.path == "ohttp.keys[0].keyFile" && mismatch?.message.contains("x25519") == true, "\(String(describing: mismatch))")

        // Windows: a key is served and used only inside its own.
        let now = Date()
        let set = OHTTPKeySet(entries: [
            .init(key: created.entries[0].key, notBefore: now.addingTimeInterval(60), notAfter: nil)
        ])
        #expect(set.active(at: now).isEmpty && set.active(at: now.addingTimeInterval(61)).count == 1)
    }


}
