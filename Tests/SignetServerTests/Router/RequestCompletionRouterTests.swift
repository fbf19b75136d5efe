// SPDX-License-Identifier: Apache-2.0
import ExampleScores
import Foundation
import HTTPTypes
import SignetCore
import SignetServer
import SignetTestSupport
import Testing

/// A request is judged when it is complete, seen without a socket: a request held open between its
/// head and the end of its body is judged — window, nonce, configuration — at its end, and a sender
/// that cannot verify is refused from its head, before its body is read. (The request deadline and
/// a client that vanishes are the connection's: RequestCompletionTests.)
@Suite(.awaitsCleanups) struct RequestCompletionRouterTests {
    /// A signed POST to `/scores`: its head's fields (with `Content-Length`) and its body.
    static func signedScore(_ harness: GatewayHarness, created: Date = Date()) throws -> (fields: [(String, String)], body: [UInt8]) {
        let message = try RequestCompletionTests.bank.sign(
            try HTTPMessage.request(
                method: "POST",
                uri: harness.base + "/scores",
                fields: [("Content-Type", "application/json")],
                body: Array("{\"name\":\"Gilgamesh\",\"score\":100}".utf8)
            ),
            created: created,
            nonce: Nonce.random()
        )
        let fields = message.fields.lines.filter { $0.name.lowercased() != "host" }.map { ($0.name, $0.value) }
        return (fields + [("Content-Length", String(message.body.count))], message.body)
    }

    @Test func aRequestHeldPastItsWindowIsRefusedAndItsNonceReachesTheUpstreamOnce() async throws {
        let harness = try await GatewayHarness.start(transport: .router) {
            $0.policy.maxAgeSeconds = 2
            $0.policy.clockSkewSeconds = 0
        }
        Cleanup.after { try await harness.stop() }
        let (fields, body) = try Self.signedScore(harness)
        // Copy B opens first and is held; copy A goes through whole.
        let held = try harness.openAsWritten("POST", "/scores", fields: fields)
        held.send(Array(body.prefix(4)))
        let first = try await harness.sendAsWritten("POST", "/scores", fields: fields, body: body)
        #expect(first.status == 201, "\(first.text)")
        // Past the window (and past the first claim's lifetime), B completes.
        try await Task.sleep(for: .milliseconds(3600))
        held.send(Array(body.dropFirst(4)))
        held.end()
        let late = GatewayHarness.answer(try await held.response().head, try await held.response().body)
        #expect(late.status == 401 && late.reason == "created_too_old", "\(late.text)")
        #expect(harness.backend.receivedCount == 1)
        #expect(harness.upstream?.received.count == 1, "the nonce reached the upstream once")
    }

    @Test func aSecretRemovedByAReloadIsRefusedToARequestOpenedBeforeIt() async throws {
        let harness = try await GatewayHarness.start(transport: .router)
        Cleanup.after { try await harness.stop() }
        let (fields, body) = try Self.signedScore(harness)
        let held = try harness.openAsWritten("POST", "/scores", fields: fields)
        held.send(Array(body.prefix(4)))
        try await Task.sleep(for: .milliseconds(200))
        let reloader = harness.gateways[0].reloader
        var removed = try #require(reloader.configuration)
        removed.sharedSecrets.removeAll { $0.keyId == "bank-v1" }
        try reloader.reload(to: removed)
        held.send(Array(body.dropFirst(4)))
        held.end()
        let (head, answerBody) = try await held.response()
        let answer = GatewayHarness.answer(head, answerBody)
        #expect(answer.status == 401 && answer.reason == "unknown_key", "\(answer.text)")
        #expect(harness.upstream?.received.isEmpty == true)
    }

    @Test func aRouteTightenedByAReloadIsEnforcedOnARequestOpenedBeforeIt() async throws {
        let harness = try await GatewayHarness.start(transport: .router) {
            $0.routes.insert(.init(prefix: "/scores", access: .open), at: 0)
        }
        Cleanup.after { try await harness.stop() }
        let body = Array("{\"name\":\"Enkidu\",\"score\":1}".utf8)
        let held = try harness.openAsWritten(
            "POST",
            "/scores",
            fields: [("Content-Type", "application/json"), ("Content-Length", String(body.count))]
        )
        held.send(Array(body.prefix(3)))
        try await Task.sleep(for: .milliseconds(200))
        let reloader = harness.gateways[0].reloader
        var tightened = try #require(reloader.configuration)
        tightened.routes.removeFirst()
        try reloader.reload(to: tightened)
        held.send(Array(body.dropFirst(3)))
        held.end()
        let (head, answerBody) = try await held.response()
        let answer = GatewayHarness.answer(head, answerBody)
        #expect(answer.status == 401 && answer.reason == "signature_missing", "\(answer.text)")
        #expect(harness.upstream?.received.isEmpty == true)
    }

    @Test(arguments: [
        ([(String, String)](), "signature_missing"),
        ([("Signature-Input", "sig1=(\"@method\");created=1;keyid=\"nobody\""), ("Signature", "sig1=:AAAA:")], "unknown_key"),
        ([("Signature-Input", "sig1=("), ("Signature", "sig1=:AAAA:")], "malformed_header"),
        // A covered field the proxy would remove: refused on the head, not after a megabyte.
        ([("Signature-Input", "sig1=(\"@method\" \"x_amount\");created=1;keyid=\"bank-v1\""), ("Signature", "sig1=:AAAA:"), ("X_Amount", "5")], "malformed_header"),
    ])
    func aSenderThatCannotVerifyIsRefusedBeforeItsBodyIsRead(fields: [(String, String)], reason: String) async throws {
        let harness = try await GatewayHarness.start(transport: .router)
        Cleanup.after { try await harness.stop() }
        // A megabyte announced, none sent: the answer comes from the head alone.
        let held = try harness.openAsWritten(
            "POST",
            "/scores",
            fields: [("Content-Type", "application/json")] + fields + [("Content-Length", "1048000")]
        )
        Cleanup.after { held.end() }
        let (head, body) = try await held.response()
        let answer = GatewayHarness.answer(head, body)
        #expect(answer.status == 401 || answer.status == 400, "\(answer.text)")
        #expect(answer.reason == reason, "\(answer.text)")
        #expect(harness.upstream?.received.isEmpty == true)
    }
}
