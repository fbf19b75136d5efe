// SPDX-License-Identifier: Apache-2.0
import Foundation
import HTTPTypes
import HummingbirdTesting
import Logging
import NIOCore
import PropertyBased
import SignetCore
import SignetMiddleware
@testable import SignetServer
import SignetStore
import SignetTestSupport
import Testing

/// Issue 41 §3: a route in `monitor` mode verifies every request exactly as `enforce` would and
/// forwards it whatever the verdict, telling the upstream (`Signet-Verdict`), the access log, the
/// metrics and the console what enforcing would have done.
@Suite(.awaitsCleanups) struct MonitorModeRouterTests {
    static func gateway(logs: CapturedLogs? = nil) async throws -> GatewayHarness {
        try await GatewayHarness.start(logger: logs?.logger(), transport: .router) {
            $0.routes.insert(.init(prefix: "/echo", access: .deviceKey, mode: .monitor), at: 0)
        }
    }

    /// What the upstream received, as the example backend echoes it.
    static func upstreamFields(_ answer: GatewayHarness.Answer) -> [String: String] {
        (answer.json as? [String: String]) ?? [:]
    }

    @Test func everyVerdictIsForwardedAndTold() async throws {
        let logs = CapturedLogs()
        let harness = try await Self.gateway(logs: logs)
        Cleanup.after { try await harness.stop() }
        let url = harness.base + "/echo/headers"

        // No signature: forwarded with the refusal enforcing would make, and no identity — a
        // client's own verdict and identity fields never reach the upstream.
        let unsigned = try await GatewayHarness.send(
            method: "GET", url: url, headers: [("Signet-Verdict", "accepted"), ("Signet-Key-Id", "forged")])
        #expect(unsigned.status == 200)
        #expect(Self.upstreamFields(unsigned)["signet-verdict"] == "signature_missing", "\(unsigned.text)")
        #expect(Self.upstreamFields(unsigned)["signet-key-id"] == nil)

        // A device's signature: accepted, with the identity enforcing would send.
        let device = try await harness.register()
        let signed = try device.signer.sign(try HTTPMessage.request(method: "GET", uri: url), created: Date(), nonce: Nonce.random())
        let accepted = try await GatewayHarness.send(signed)
        #expect(accepted.status == 200)
        #expect(Self.upstreamFields(accepted)["signet-verdict"] == "accepted", "\(accepted.text)")
        #expect(Self.upstreamFields(accepted)["signet-key-id"] == device.keyID)

        // Its nonce was claimed: the same request again is a replay, forwarded as one.
        let replayed = try await GatewayHarness.send(signed)
        #expect(replayed.status == 200 && Self.upstreamFields(replayed)["signet-verdict"] == "nonce_replayed", "\(replayed.text)")

        // What protects the gateway is refused in either mode: a path it cannot route exactly.
        let ambiguous = try await GatewayHarness.send(method: "GET", url: harness.base + "/echo/a%2Fb")
        #expect(ambiguous.status == 400 && ambiguous.reason == "path_ambiguous")

        // Metrics: the would-be refusals by route and reason.
        let metrics = try await GatewayHarness.send(
            method: "GET", url: harness.base + "/metrics", headers: [("Authorization", "Bearer \(GatewayHarness.adminToken)")]
        ).text
        #expect(metrics.contains(#"signet_would_refuse_total{route="/echo",reason="signature_missing"} 1"#), "\(metrics)")
        #expect(metrics.contains(#"signet_would_refuse_total{route="/echo",reason="nonce_replayed"} 1"#))
        #expect(metrics.contains(#"signet_requests_total{outcome="monitored",reason="signature_missing"} 1"#))

        // The access log says what enforcing would have done.
        let lines = logs.all.filter { $0.message == "request" && $0.metadata["route"] == "/echo" }.map(\.metadata)
        #expect(lines.compactMap { $0["verdict"] } == ["signature_missing", "accepted", "nonce_replayed"], "\(lines)")

        // The console keeps them apart from refusals.
        _ = try await harness.gateway.activity.flush(to: harness.store)
        let kept = try await harness.store.refusals(reason: nil, before: nil, limit: 10)
        #expect(Set(kept.filter(\.monitored).map(\.reason)) == ["signature_missing", "nonce_replayed"], "\(kept)")
        #expect(kept.filter { !$0.monitored }.map(\.reason) == ["path_ambiguous"])
        let browser = OperatorConsoleTests.Browser(base: harness.base)
        _ = try await browser.signIn()
        let overview = try await browser.get("/signet/admin/overview").text
        #expect(overview.contains("Would be refused on monitor routes") && overview.contains("<code>signature_missing</code>"))
        let refusals = try await browser.get("/signet/admin/refusals?reason=nonce_replayed").text
        #expect(refusals.contains("401 (monitor: forwarded)"), "\(refusals)")
    }

    /// Switching a route from `monitor` to `enforce` is a reload: the next unsigned request is refused.
    @Test func enforcingIsAReload() async throws {
        let harness = try await Self.gateway()
        Cleanup.after { try await harness.stop() }
        let url = harness.base + "/echo/headers"
        #expect(try await GatewayHarness.send(method: "GET", url: url).status == 200)
        let reloader = harness.gateways[0].reloader
        var next = try #require(reloader.configuration)
        next.routes[0].mode = .enforce
        try reloader.reload(to: next)
        let refused = try await GatewayHarness.send(method: "GET", url: url)
        #expect(refused.status == 401 && refused.reason == "signature_missing")
    }

    /// A route is monitored only where forwarding it unjudged is what enforcing would forward.
    @Test(arguments: [
        (#"{"upstream": "http://x", "routes": [{"prefix": "/", "access": "open", "mode": "monitor"}]}"#, "routes[0].mode"),
        (#"{"upstream": "http://x", "routes": [{"prefix": "/", "access": "verified", "mode": "watch"}]}"#, "routes[0].mode"),
        (#"{"upstream": "http://x", "routes": [{"prefix": "/l", "access": "legacy-query-hmac", "keyId": "k", "mode": "monitor"}]}"#, "routes[0].mode"),
    ])
    func aModeIsCheckedWithItsRoute(_ text: String, _ path: String) throws {
        let error = try #require(
            #expect(throws: ConfigurationError.self) {
                try GatewayConfiguration.decode(Data(text.utf8)).validate()
            }
        )
        #expect(error.path == path, "\(error)")
        let monitored = try GatewayConfiguration.decode(
            Data(#"{"upstream": "http://x", "routes": [{"prefix": "/", "access": "verified", "mode": "monitor"}]}"#.utf8))
        #expect(monitored.routes[0].mode == .monitor)
        #expect(monitored.routeTableLines.contains { $0.hasSuffix("verified (monitor)") }, "\(monitored.routeTableLines)")
    }

    /// The invariant, over random sequences of fresh, repeated, tampered and unsigned requests to a
    /// monitor route: every request reaches the upstream exactly once, with the verdict enforcing
    /// would have given it — so a nonce is `accepted` at most once, as on an enforced route.
    @Test func everyRequestIsForwardedOnceWithEnforcingsVerdict() async throws {
        let upstream = try RecordingUpstream()
        var configuration = GatewayConfiguration(upstream: "http://upstream.test:8080")
        configuration.store = .memory
        configuration.routes = [.init(prefix: "/watched", access: .verified, mode: .monitor), .init(prefix: "/", access: .verified)]
        configuration.publicAuthority = "localhost"
        configuration.sharedSecrets = [.init(keyId: "bank-v1", secretBase64: Base64.encode(ForwardedRequestRouterTests.secret))]
        var logger = Logger(label: "signet.test.monitor")
        logger.logLevel = .critical
        let gateway = try SignetGateway(configuration: configuration, store: MemoryStore(), logger: logger, upstream: upstream)
        try await gateway.application().test(.router) { client in
            await propertyCheck(count: 40, input: Gen.int(in: 0...3).array(of: 1...12)) { steps in
                let before = upstream.received.count
                var signed: [(HTTPFields, ByteBuffer)] = []
                var expected: [String] = []
                for step in steps {
                    let request: (HTTPFields, ByteBuffer)
                    switch step {
                    case 0:
                        request = try! ForwardedRequestRouterTests.signed("POST", "/watched/orders", body: #"{"n":1}"#)
                        signed.append(request)
                        expected.append("accepted")
                    case 1 where !signed.isEmpty:
                        request = signed.randomElement()!
                        expected.append("nonce_replayed")
                    case 3:
                        let fresh = try! ForwardedRequestRouterTests.signed("POST", "/watched/orders", body: #"{"n":1}"#)
                        request = (fresh.0, ByteBuffer(string: #"{"n":9}"#))
                        expected.append("digest_mismatch")
                    default:
                        request = (HTTPFields(), ByteBuffer(string: "{}"))
                        expected.append("signature_missing")
                    }
                    let answer = try? await client.execute(uri: "/watched/orders", method: .post, headers: request.0, body: request.1)
                    #expect(answer?.status == .ok, "forwarded whatever the verdict")
                }
                let verdicts = upstream.received.dropFirst(before).map { $0.fields["Signet-Verdict"] }
                #expect(verdicts == expected.map { [$0] }, "\(steps)")
                let accepted = upstream.received.dropFirst(before).filter { $0.fields["Signet-Verdict"] == ["accepted"] }
                #expect(Set(accepted.compactMap { $0.fields["Signature-Input"].first }).count == accepted.count)
            }
        }
    }
}
