// SPDX-License-Identifier: Apache-2.0
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import NIOHTTP1
import PropertyBased
import SignetCore
import SignetServer
import SignetStore
import SignetTestSupport
import Testing

/// What reaches the upstream, seen without a socket: the gateway in-process (`.router`) in front of
/// a recording upstream. The routed target under the upstream's base path, the client's body, the
/// gateway's identity and forwarding fields in place of anything the client said for itself, each
/// signed request at most once, and the upstream's failures as reason codes.
@Suite struct ForwardedRequestRouterTests {
    static let secret = GatewayHarness.bankSecret
    static let bank = MessageSigner(key: try! SigningKey(secret: GatewayHarness.bankSecret), keyID: "bank-v1", algorithm: HMACSHA256())

    static func gateway(_ upstream: RecordingUpstream) throws -> SignetGateway {
        var configuration = GatewayConfiguration(upstream: "http://upstream.test:8080/api")
        configuration.store = .memory
        configuration.routes = [.init(prefix: "/public", access: .open), .init(prefix: "/", access: .verified)]
        configuration.publicAuthority = "localhost"
        configuration.sharedSecrets = [.init(keyId: "bank-v1", secretBase64: Base64.encode(Self.secret))]
        var logger = Logger(label: "signet.test.forwarded")
        logger.logLevel = .critical
        return try SignetGateway(configuration: configuration, store: MemoryStore(), logger: logger, upstream: upstream)
    }

    /// `message` signed by the bank's shared secret, as header fields for the test client.
    static func signed(_ method: String, _ path: String, body: String = "", fields extra: [(String, String)] = []) throws
        -> (HTTPFields, ByteBuffer)
    {
        var fields = MessageFields(extra.map { MessageFields.Field(name: $0.0, value: $0.1) })
        if !body.isEmpty { fields.append(name: "Content-Type", value: "application/json") }
        let message = try Self.bank.sign(
            try HTTPMessage.request(method: method, uri: "http://localhost\(path)", fields: fields, body: Array(body.utf8)),
            created: Date(),
            nonce: Nonce.random()
        )
        var headers = HTTPFields()
        for line in message.fields.lines { headers.append(HTTPField(name: HTTPField.Name(line.name)!, value: line.value)) }
        return (headers, ByteBuffer(string: body))
    }

    static func reason(_ response: TestResponse) -> String? {
        (try? JSONSerialization.jsonObject(with: Data(response.body.readableBytesView)) as? [String: Any])?["reason"] as? String
    }

    @Test func theUpstreamReceivesTheRoutedRequestWithTheGatewaysFieldsOnly() async throws {
        let upstream = try RecordingUpstream(origin: "http://upstream.test:8080/api")
        upstream.answer(.respond(status: .created, fields: [("Content-Type", "application/json"), ("Connection", "close")], body: Array("{}".utf8)))
        let (headers, body) = try Self.signed(
            "POST",
            "/transfers",
            body: #"{"amount":10}"#,
            fields: [
                ("Signet-Trust-Level", "app-attest"), ("Signet_Key_Id", "someone-else"), ("X-Forwarded-For", "10.9.9.9"),
                ("X-HTTP-Method-Override", "DELETE"), ("X-Custom", "kept"),
            ]
        )
        try await Self.gateway(upstream).application().test(.router) { client in
            let answer = try await client.execute(uri: "/transfers", method: .post, headers: headers, body: body)
            #expect(answer.status == .created && String(buffer: answer.body) == "{}")
            #expect(answer.headers[.connection] == nil, "the upstream's hop-by-hop fields stay on its hop")
        }
        let received = try #require(upstream.received.first)
        #expect(upstream.received.count == 1)
        #expect(received.method == .post && received.target == "/api/transfers")
        #expect(received.body == Array(#"{"amount":10}"#.utf8))
        #expect(received.authority == "upstream.test:8080")
        #expect(received.fields["Content-Length"] == ["13"])
        #expect(received.fields["Signet-Key-Id"] == ["bank-v1"] && received.fields["Signet-Trust-Level"] == ["shared-secret"])
        #expect(received.fields["X-Custom"] == ["kept"] && received.fields["Signature"].count == 1)
        #expect(received.fields["X-HTTP-Method-Override"].isEmpty && received.fields["Signet_Key_Id"].isEmpty)
        #expect(received.fields["X-Forwarded-For"].allSatisfy { $0 != "10.9.9.9" }, "the gateway's own, not the client's")
        #expect(received.fields["X-Forwarded-Proto"] == ["http"] && received.fields["X-Forwarded-Host"] == ["localhost"])
    }

    /// The invariant, over random sequences of fresh and repeated requests: a signed request (its
    /// nonce) reaches the upstream at most once; the repeats are refused `nonce_replayed`; unsigned
    /// requests never reach it.
    @Test func aSignedRequestReachesTheUpstreamAtMostOnce() async throws {
        let upstream = try RecordingUpstream()
        let gateway = try Self.gateway(upstream)
        try await gateway.application().test(.router) { client in
            await propertyCheck(count: 40, input: Gen.int(in: 0...2).array(of: 1...12)) { steps in
                let before = upstream.received.count
                var sent: [(HTTPFields, ByteBuffer)] = []
                var accepted = 0
                for step in steps {
                    let request: (HTTPFields, ByteBuffer)
                    switch step {
                    case 0: request = try! Self.signed("POST", "/orders", body: #"{"n":1}"#)
                    case 1 where !sent.isEmpty: request = sent.randomElement()!
                    default: request = (HTTPFields(), ByteBuffer(string: "{}"))
                    }
                    sent.append(request)
                    guard let answer = try? await client.execute(uri: "/orders", method: .post, headers: request.0, body: request.1) else {
                        continue
                    }
                    if answer.status == .ok { accepted += 1 }
                    let reason = Self.reason(answer)
                    #expect(answer.status == .ok || reason == "nonce_replayed" || reason == "signature_missing", "\(answer.status) \(reason ?? "")")
                }
                let nonces = Set(upstream.received.dropFirst(before).compactMap { $0.fields["Signature-Input"].first })
                #expect(upstream.received.count - before == accepted)
                #expect(nonces.count == accepted, "every forwarded request carried a signature seen once")
            }
        }
    }

    /// The upstream's reason phrase stays on its hop: it may say what the app did not mean to
    /// tell, and no response signature covers it.
    @Test func theClientGetsTheStatusWithItsOwnReasonPhrase() async throws {
        let upstream = try RecordingUpstream()
        upstream.answer(.respond(status: HTTPResponse.Status(code: 403, reasonPhrase: "internal: user 17 lacks role admin"), fields: [], body: []))
        try await Self.gateway(upstream).application().test(.router) { client in
            let answer = try await client.execute(uri: "/public/x", method: .get)
            #expect(answer.status.code == 403 && !answer.status.reasonPhrase.contains("internal"), "\(answer.status)")
            // What HTTP/1 then writes: the code's own phrase.
            #expect(HTTPResponseStatus(statusCode: answer.status.code, reasonPhrase: answer.status.reasonPhrase).reasonPhrase == "Forbidden")
        }
    }

    @Test(arguments: [
        (UpstreamFailure.unreachable, HTTPResponse.Status.badGateway, "upstream_unreachable"),
        (.closedBeforeAnswer, .serviceUnavailable, "upstream_unavailable"),
        (.timedOut, .serviceUnavailable, "upstream_unavailable"),
        (.saturated, .serviceUnavailable, "upstream_unavailable"),
    ])
    func anUpstreamsFailureIsAnsweredWithItsReasonCode(_ failure: UpstreamFailure, _ status: HTTPResponse.Status, _ reason: String)
        async throws
    {
        let upstream = try RecordingUpstream(origin: "http://upstream.test:8080/api")
        upstream.answerEveryRequest(.fail(failure))
        try await Self.gateway(upstream).application().test(.router) { client in
            let answer = try await client.execute(uri: "/public/scores", method: .get)
            #expect(answer.status == status && Self.reason(answer) == reason)
        }
        #expect(upstream.received.count == 1 && upstream.received[0].target == "/api/public/scores")
    }
}
