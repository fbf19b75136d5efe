// SPDX-License-Identifier: Apache-2.0
import Foundation
import SignetCore
import SignetTestSupport
import Testing

@testable import SignetServer

/// Every registered access mode fails closed, read from the registry rather than from a list kept
/// here: a route of any mode but `open` refuses a request that brings nothing — no signature, no
/// password, no token, no envelope — with a reason code of its own, and the upstream never sees it.
/// A mode added to the registry is checked by this test without a line changed; one whose owner a
/// router harness cannot configure must be named below, or the test fails.
@Suite(.awaitsCleanups) struct AccessModeRouterTests {
    /// Modes whose owner needs what an in-process gateway has not: mutual TLS, Google's keys.
    static let checkedElsewhere: Set<String> = ["client-certificate", "play-integrity"]

    @Test func everyRegisteredModeButOpenRefusesARequestThatBringsNothing() async throws {
        let modes = AccessModeRegistry.modes.map(\.name).filter { !Self.checkedElsewhere.contains($0) }
        #expect(Set(AccessModeRegistry.modes.map(\.name)).isSuperset(of: Self.checkedElsewhere), "a mode named here is no longer registered")
        let folder = try SignetProcess.temporaryDirectory()
        let harness = try await GatewayHarness.start(store: .memory, transport: .router) { configuration in
            // One route per mode, each with the options its mode needs.
            configuration.routes = modes.map { mode in
                var access = GatewayConfiguration.Route.Access(mode: mode)
                if mode == "legacy-query-hmac" { access.options["keyId"] = .string("highscore-legacy") }
                return .init(prefix: "/mode/\(mode)", access: access)
            } + [.init(prefix: "/", access: .open)]
            configuration.passwords = .init(realm: "signet-bank")
            configuration.tokens = .init(issuer: "https://signet.test", audience: ["scores"], keyFile: folder.appendingPathComponent("tokens.pem").path)
            configuration.firebaseAppCheck = .init(projectNumber: "123456", jwksUrl: "http://127.0.0.1:9/jwks")
            configuration.clientAttestation = .init(clientId: "com.example.scores", audience: "https://api.example.com")
            configuration.webBotAuth = .init(agents: [.init(name: "example-bot", directory: "http://127.0.0.1:9/keys")])
            configuration.legacyEnvelope = .init(format: .json, keys: [.init(version: "1", secretBase64: Base64.encode([UInt8](repeating: 7, count: 64)))])
        }
        Cleanup.after { try await harness.stop() }
        let upstream = try #require(harness.upstream)
        for mode in modes {
            // With a body (screened as the head arrives) and without (judged by the gate at once).
            for (method, body) in [("POST", Array(#"{"name":"Nobody","score":1}"#.utf8)), ("GET", nil)] as [(String, [UInt8]?)] {
                let before = upstream.received.count
                let answer = try await harness.sendAsWritten(
                    method,
                    "/mode/\(mode)/x",
                    fields: body == nil ? [] : [("Content-Type", "application/json")],
                    body: body
                )
                if mode == "open" {
                    #expect(upstream.received.count == before + 1, "open forwards")
                    continue
                }
                #expect((400..<500).contains(answer.status), "\(mode) \(method): \(answer.status) \(answer.text)")
                let reason = try #require(answer.reason, "\(mode) \(method): \(answer.text)")
                #expect(SignetError.Code(rawValue: reason) != nil && reason != "internal_error", "\(mode) \(method): \(reason)")
                #expect(upstream.received.count == before, "\(mode) let a \(method) that brought nothing reach the upstream")
            }
        }
        // The probe reached the routes it meant to: the last, open one forwarded.
        #expect(modes.contains("open") && modes.count >= 14, "\(modes)")
    }
}
