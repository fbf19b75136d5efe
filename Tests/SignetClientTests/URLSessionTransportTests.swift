// SPDX-License-Identifier: Apache-2.0
import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import Logging
@testable import SignetClient
import SignetCore
import SignetServer
import SignetSimulator
import SignetTestSupport
import Synchronization
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `SignetClient` over `URLSession` (FoundationNetworking here, Apple's on a device): the same
/// signing, redirects within the origins, signed answers and registration as over SwiftNIO, against
/// the real gateway. What Linux's URLSession cannot do safely (pins, client certificates) is refused
/// when the client is made, never silently skipped.
@Suite(.awaitsCleanups) struct URLSessionTransportTests {
    static func client(_ harness: GatewayHarness, origins extra: [Origin] = []) throws -> SignetClient {
        var configuration = SignetClientConfiguration(
            origins: [try Origin(harness.base)] + extra,
            responseKeys: KeyRing([KeyRecord(keyID: "gateway", algorithm: "ed25519", key: harness.gatewayKey.verificationKey)]),
            timeout: .seconds(10)
        )
        configuration.transport = .urlSession()
        return try SignetClient(configuration: configuration)
    }

    @Test func aClientOverURLSessionRegistersSignsAndChecksTheSignedAnswers() async throws {
        let harness = try await GatewayHarness.start()
        Cleanup.after { try await harness.stop() }
        let client = try Self.client(harness)
        let device = try await client.register(using: SoftwareKeyProvider())
        let body = Array(#"{"name":"Gilgamesh","score":100}"#.utf8)
        let answer = try await client.send("POST", harness.base + "/scores", fields: [("Content-Type", "application/json")], body: body)
        #expect(answer.status == 201, "\(answer.text)")
        #expect(answer.signature?.label == "gateway", "the gateway's signature over the answer verified")
        // The upstream learns the device the gateway verified.
        let echo = try await client.send("GET", harness.base + "/echo/headers")
        let headers = echo.json ?? [:]
        #expect(echo.status == 200 && headers["signet-device"] as? String == device.deviceID, "\(echo.status) \(echo.text)")

        // The same request sent again as it was is a replay, over this transport as over any.
        let signed = try await client.signer!.sign(
            try HTTPMessage.request(method: "POST", uri: harness.base + "/scores", fields: [("Content-Type", "application/json")], body: body),
            now: Date()
        )
        #expect(try await client.transmit(signed).status == 201)
        let replay = try await client.transmit(signed)
        #expect(replay.status == 401 && replay.reason == "nonce_replayed")
        // Unsigned, the gateway refuses it.
        let unsigned = try await client.send("POST", harness.base + "/scores", fields: [("Content-Type", "application/json")], body: body, sign: false)
        #expect(unsigned.status == 401 && unsigned.reason == "signature_missing")
    }

    @Test func urlSessionGoesNowhereTheClientWouldNot() async throws {
        let hits = Mutex<[String]>([])
        let server = try await BackgroundServer.loopback { router in
            router.get("/hello") { _, _ in
                hits.withLock { $0.append("/hello") }
                return "hello"
            }
            router.get("/redirect/{to}") { request, context in
                hits.withLock { $0.append(request.uri.path) }
                var headers = HTTPFields()
                headers[.location] = context.parameters.get("to") == "away" ? "http://127.0.0.2:9/hello" : "/hello"
                return Response(status: .found, headers: headers)
            }
        }
        Cleanup.after { await server.stop() }
        let base = "http://127.0.0.1:\(server.port)"
        var configuration = SignetClientConfiguration(origins: [try Origin(base)], pinReportPath: nil)
        configuration.transport = .urlSession()
        let client = try SignetClient(configuration: configuration)
        // Within the origin: the client follows it (once), not URLSession behind its back.
        let followed = try await client.send("GET", base + "/redirect/here")
        #expect(followed.status == 200 && followed.text == "hello")
        #expect(hits.withLock { $0 } == ["/redirect/here", "/hello"])
        // Elsewhere: refused before anything is sent there.
        await #expect(throws: SignetError(.originNotAllowed, "")) {
            _ = try await client.send("GET", base + "/redirect/away")
        }
        // A configured path that would make URLSession's URL name another host is refused, not sent.
        configuration.trustUpdates = TrustUpdates(
            trustKeys: ["trust": P256.Signing.PrivateKey().publicKey.pemRepresentation],
            store: nil,
            path: "@127.0.0.2:\(server.port)/hello"
        )
        let misconfigured = try SignetClient(configuration: configuration)
        guard case .refused(let error) = await misconfigured.updateTrust() else {
            Issue.record("a trust document path off the origin was followed")
            return
        }
        #expect(error.code == .originNotAllowed, "\(error)")
        #expect(hits.withLock { $0 } == ["/redirect/here", "/hello", "/redirect/away"])
    }

    @Test func whatLinuxsURLSessionCannotCheckIsRefusedWhenTheClientIsMade() async throws {
        var pinned = SignetClientConfiguration(origins: [try Origin("https://api.example.com")])
        pinned.transport = .urlSession()
        #if !(canImport(Security) && canImport(Darwin))
        #expect(throws: SignetError(.certificateUntrusted, "")) { _ = try SignetClient(configuration: pinned) }
        var identity = SignetClientConfiguration(
            origins: [try Origin("http://127.0.0.1:1")],
            clientIdentity: ClientIdentity(certificateChainPEM: "", privateKeyPEM: "")
        )
        identity.transport = .urlSession()
        #expect(throws: SignetError(.invalidKey, "")) { _ = try SignetClient(configuration: identity) }
        #endif
        // The same configuration over SwiftNIO is fine: its chains go through ServerTrustEvaluator.
        pinned.transport = .nio()
        _ = try SignetClient(configuration: pinned)
    }

    @Test func anUnreachableOriginAndASlowOneFailWithTheirOwnCodes() async throws {
        var configuration = SignetClientConfiguration(origins: [try Origin("http://127.0.0.1:9")], pinReportPath: nil)
        configuration.transport = .urlSession()
        let closed = try SignetClient(configuration: configuration)
        await #expect(throws: SignetError(.connectionFailed, "")) { _ = try await closed.send("GET", "http://127.0.0.1:9/x") }

        let harness = try await GatewayHarness.start()
        Cleanup.after { try await harness.stop() }
        var slow = SignetClientConfiguration(origins: [try Origin(harness.base)], pinReportPath: nil, timeout: .milliseconds(1))
        slow.transport = .urlSession()
        let impatient = try SignetClient(configuration: slow)
        await #expect(throws: SignetError(.requestTimeout, "")) {
            _ = try await impatient.send("POST", harness.base + "/signet/v1/challenges", sign: false)
        }
    }
}

/// A background `URLSession` configuration hands tasks to the system, which sends them later —
/// after their signatures' window — and takes no completion handlers: the client refuses it with
/// its own reason code instead of crashing or sending expired signatures (issue 37 §2). Background
/// configurations exist only on Apple platforms: the decision is tested here on the identifier
/// that marks one, and a foreground configuration goes on.
@Suite struct BackgroundSessionTests {
    @Test func aBackgroundConfigurationIsRefusedAndAForegroundOneTaken() throws {
        #expect {
            try URLSessionTransport.refuseBackground(identifier: "com.example.scores.uploads")
        } throws: { error in
            (error as? SignetError).map { $0.code == .transportUnsupported && $0.reason.contains("background") } ?? false
        }
        try URLSessionTransport.refuseBackground(identifier: URLSessionConfiguration.ephemeral.identifier)
        try URLSessionTransport.refuseBackground(identifier: URLSessionConfiguration.default.identifier)
    }
}
