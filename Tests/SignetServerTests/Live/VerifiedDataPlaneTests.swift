// SPDX-License-Identifier: Apache-2.0
import Foundation
import PropertyBased
import SignetCore
@testable import SignetServer
import SignetTestSupport
import Testing

/// Signature routes on the event-loop data plane (`LoopVerifier`), on real connections: the route's
/// own verification middleware, run on the connection's loop — the head screened when it arrives,
/// the request verified when it is complete, the nonce claimed once, the identity sent upstream —
/// and every refusal answered as Hummingbird's path answers it.
@Suite(.awaitsCleanups) struct VerifiedDataPlaneTests {
    static let bank = GatewayHardeningTests.bank
    static let stranger = MessageSigner(key: try! SigningKey(secret: Array("an unregistered shared secret!!!".utf8)), keyID: "nobody", algorithm: HMACSHA256())

    static func gateway(_ adjust: @escaping (inout GatewayConfiguration) -> Void = { _ in }) async throws -> GatewayHarness {
        try await GatewayHarness.start {
            $0.routes.insert(.init(prefix: "/echo", access: .verified), at: 0)
            $0.responseSigning = nil
            adjust(&$0)
        }
    }

    /// A request signed by `signer` as raw HTTP/1.1 bytes, the connection kept open.
    static func signed(
        _ harness: GatewayHarness,
        _ method: String = "POST",
        _ path: String = "/echo/score",
        body: String? = "{\"score\":100}",
        signer: MessageSigner = bank,
        created: Date = Date()
    ) throws -> [UInt8] {
        let message = try HTTPMessage.request(
            method: method,
            uri: harness.base + path,
            fields: body == nil ? [] : [("Content-Type", "application/json")],
            body: Array((body ?? "").utf8)
        )
        let raw = GatewayHardeningTests.raw(try signer.sign(message, created: created, nonce: Nonce.random()))
        return Array(raw.replacingOccurrences(of: "Connection: close\r\n", with: "").utf8)
    }

    static func plane(_ harness: GatewayHarness) -> DataPlane {
        harness.gateway.listeners.dataPlane
    }

    /// The header section of the first answer in `raw`, names lowercased, without `Date`.
    static func fields(_ raw: String) -> [String: String] {
        let head = raw.components(separatedBy: "\r\n\r\n")[0].components(separatedBy: "\r\n").dropFirst()
        var fields: [String: String] = [:]
        for line in head {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let name = line[..<colon].lowercased()
            guard name != "date" else { continue }
            fields[name] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        return fields
    }

    @Test func aSignedRequestIsVerifiedAndForwardedOnTheLoopWithItsIdentity() async throws {
        let harness = try await Self.gateway()
        Cleanup.after { try await harness.stop() }
        let connection = try await RawConnection.open(port: harness.port)
        Cleanup.after { await connection.close() }
        try await connection.send(try Self.signed(harness))
        let answer = try await connection.response()
        #expect(RawHTTP.status(answer) == 200, "\(answer)")
        #expect(Self.plane(harness).forwardedCount == 1)
        let echo = try #require(DataPlaneTests.body(answer), "\(answer)")
        let fields = try #require(echo["headers"] as? [String: String])
        #expect(fields["signet-key-id"] == "bank-v1", "\(fields)")
        #expect(fields["signet-trust-level"] == "shared-secret", "\(fields)")
        // The signature reaches the upstream as signed, with what it covers.
        #expect(fields["signature-input"] != nil && fields["content-digest"] != nil)
        // The same connection goes on: a second request, signed afresh.
        try await connection.send(try Self.signed(harness, "GET", "/echo/again", body: nil))
        let second = try await connection.responses(2)
        #expect(second.components(separatedBy: "HTTP/1.1 200").count - 1 == 2, "\(second)")
        #expect(Self.plane(harness).forwardedCount == 2)
    }

    /// The invariant: a nonce reaches the upstream at most once, however many copies of its request
    /// arrive, on one connection or several at once.
    @Test func aNonceReachesTheUpstreamAtMostOnce() async throws {
        let harness = try await Self.gateway()
        Cleanup.after { try await harness.stop() }
        let request = try Self.signed(harness)
        // Pipelined on one connection.
        let connection = try await RawConnection.open(port: harness.port)
        Cleanup.after { await connection.close() }
        try await connection.send(request + request + request)
        let answers = try await connection.responses(3)
        let statuses = answers.components(separatedBy: "HTTP/1.1 ").dropFirst().map { Int($0.prefix(3)) }
        #expect(statuses == [200, 401, 401], "\(answers)")
        #expect(answers.components(separatedBy: "\"reason\":\"nonce_replayed\"").count - 1 == 2, "\(answers)")
        // On several connections at once.
        let again = try Self.signed(harness)
        let outcomes = try await withThrowingTaskGroup(of: Int?.self) { group in
            for _ in 0..<8 {
                group.addTask {
                    let connection = try await RawConnection.open(port: harness.port)
                    defer { Task { await connection.close() } }
                    try await connection.send(again)
                    return RawHTTP.status(try await connection.response())
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(outcomes.filter { $0 == 200 }.count == 1, "\(outcomes)")
        #expect(outcomes.filter { $0 == 401 }.count == 7, "\(outcomes)")
        #expect(Self.plane(harness).forwardedCount == 2)
    }

    /// Judged when complete: a request whose head arrives inside its signature's window and whose
    /// body ends after it is refused `created_too_old`, never forwarded.
    @Test func aRequestHeldPastItsWindowIsRefusedWhenItsBodyEnds() async throws {
        let harness = try await Self.gateway()
        Cleanup.after { try await harness.stop() }
        let policy = harness.gateway.configuration.policy
        // One second left in the window when it is sent.
        let request = try Self.signed(harness, created: Date().addingTimeInterval(-Double(policy.maxAgeSeconds + policy.clockSkewSeconds - 1)))
        let cut = try #require(request.firstRange(of: Array("\r\n\r\n".utf8))).upperBound + 3
        let connection = try await RawConnection.open(port: harness.port)
        Cleanup.after { await connection.close() }
        try await connection.send(Array(request[..<cut]))
        try await Task.sleep(for: .milliseconds(2500))
        try await connection.send(Array(request[cut...]))
        let answer = try await connection.response()
        #expect(RawHTTP.status(answer) == 401 && RawHTTP.reason(answer) == "created_too_old", "\(answer)")
        #expect(Self.plane(harness).forwardedCount == 0)
    }

    /// An unsigned sender is refused from its head: its body is never waited for.
    @Test func anUnsignedBodyIsRefusedFromItsHead() async throws {
        let harness = try await Self.gateway()
        Cleanup.after { try await harness.stop() }
        let connection = try await RawConnection.open(port: harness.port)
        Cleanup.after { await connection.close() }
        try await connection.send(Array("POST /echo/x HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\nabc".utf8))
        let answer = try await connection.response(timeout: .seconds(5))
        #expect(RawHTTP.status(answer) == 401 && RawHTTP.reason(answer) == "signature_missing", "\(answer)")
        #expect(Self.plane(harness).forwardedCount == 0)
    }

    /// A client cannot tell which path refused it: each refusal the loop makes — status, reason,
    /// challenges, `Accept-Signature`, every other field and the problem document — is the one
    /// Hummingbird's path makes for the same request.
    @Test func everyRefusalOnTheLoopIsTheOneHummingbirdMakes() async throws {
        let harness = try await Self.gateway()
        Cleanup.after { try await harness.stop() }
        let plane = Self.plane(harness)
        let snapshot = try #require(plane.snapshot)
        func tampered(_ bytes: [UInt8]) -> [UInt8] {
            var bytes = bytes
            bytes[bytes.count - 2] = UInt8(ascii: "9")
            return bytes
        }
        let cases: [(String, () throws -> [UInt8])] = [
            ("unsigned", { Array("GET /echo/x HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8) }),
            ("unknown key", { try Self.signed(harness, "GET", "/echo/x", body: nil, signer: Self.stranger) }),
            ("stale", { try Self.signed(harness, "GET", "/echo/x", body: nil, created: Date().addingTimeInterval(-3600)) }),
            ("future", { try Self.signed(harness, "GET", "/echo/x", body: nil, created: Date().addingTimeInterval(3600)) }),
            ("body changed", { tampered(try Self.signed(harness)) }),
            // Two faults, its body in the read of its head: the screen's finding (the key) comes
            // first on both paths, not the verify's (the window).
            ("unknown key, stale, with a body", { try Self.signed(harness, signer: Self.stranger, created: Date().addingTimeInterval(-3600)) }),
            ("unsigned body", { Array("POST /echo/x HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 3\r\n\r\nabc".utf8) }),
        ]
        for (name, request) in cases {
            // The same bytes both ways: a refused request claims no nonce.
            let bytes = try request()
            var answers: [String] = []
            for loop in [true, false] {
                plane.replace(with: loop ? snapshot : nil)
                let connection = try await RawConnection.open(port: harness.port)
                try await connection.send(bytes)
                answers.append(try await connection.response())
                await connection.close()
            }
            let (onLoop, onHummingbird) = (answers[0], answers[1])
            #expect(RawHTTP.status(onLoop) == RawHTTP.status(onHummingbird), "\(name): \(onLoop) | \(onHummingbird)")
            #expect(RawHTTP.reason(onLoop) != nil && RawHTTP.reason(onLoop) == RawHTTP.reason(onHummingbird), "\(name): \(onLoop)")
            #expect(Self.fields(onLoop) == Self.fields(onHummingbird), "\(name): \(onLoop) | \(onHummingbird)")
            // A detail that counts seconds may count one more the second time.
            func problem(_ raw: String) -> [String: Any]? {
                DataPlaneTests.body(raw).map { document in
                    document.mapValues { ($0 as? String).map { $0.filter { !$0.isNumber } } ?? $0 }
                }
            }
            let loopProblem = try #require(problem(onLoop), "\(name)")
            let hummingbirdProblem = try #require(problem(onHummingbird), "\(name)")
            #expect(NSDictionary(dictionary: loopProblem).isEqual(to: hummingbirdProblem), "\(name): \(loopProblem) | \(hummingbirdProblem)")
        }
        #expect(plane.forwardedCount == 0)
        // The loop refused them itself, all but the two a screen refuses (Hummingbird's, then).
        #expect(plane.refusedCount >= cases.count - 3, "\(plane.refusedCount)")
    }

    /// The route decided when the request is complete: a signed request whose route is made open
    /// between its head and its end is forwarded as the open route forwards it (`DataPlaneTests`
    /// has the reverse).
    @Test func aReloadBeforeTheBodyEndsJudgesTheRequestByTheRouteInForceThen() async throws {
        let harness = try await Self.gateway()
        Cleanup.after { try await harness.stop() }
        let signed = try Self.signed(harness)
        let cut = try #require(signed.firstRange(of: Array("\r\n\r\n".utf8))).upperBound + 2
        let connection = try await RawConnection.open(port: harness.port)
        Cleanup.after { await connection.close() }
        try await connection.send(Array(signed[..<cut]))
        try await Task.sleep(for: .milliseconds(200))
        var configuration = harness.gateway.configuration
        configuration.routes[0] = .init(prefix: "/echo", access: .open)
        try harness.gateways[0].reloader.reload(to: configuration)
        try await connection.send(Array(signed[cut...]))
        let answer = try await connection.response()
        #expect(RawHTTP.status(answer) == 200, "\(answer)")
        let echo = try #require(DataPlaneTests.body(answer))
        // No identity: nothing verified it.
        #expect((echo["headers"] as? [String: String])?["signet-key-id"] == nil, "\(echo)")
        #expect(Self.plane(harness).forwardedCount == 1)
    }

    /// Where the gateway signs answers, an answer to a request the loop verified is signed there as
    /// Hummingbird's path signs it: bound to the request, over the digest of the body as relayed;
    /// one too large to hold whole is refused alike, with the upstream's connection closed.
    @Test func anAnswerToAVerifiedRequestIsSignedOnTheLoop() async throws {
        let harness = try await GatewayHarness.start {
            $0.routes.insert(.init(prefix: "/echo", access: .verified), at: 0)
            $0.routes.insert(.init(prefix: "/large", access: .verified), at: 0)
        }
        Cleanup.after { try await harness.stop() }
        let plane = Self.plane(harness)
        for method in ["GET", "POST", "HEAD"] {
            let message = try HTTPMessage.request(
                method: method,
                uri: harness.base + "/echo/signed",
                fields: method == "POST" ? [("Content-Type", "application/json")] : [],
                body: method == "POST" ? Array("{}".utf8) : []
            )
            let request = try Self.bank.sign(message, created: Date(), nonce: Nonce.random())
            let answer = try await GatewayHarness.send(request)
            // The example backend serves no HEAD: its 404 is signed all the same, without content.
            #expect(answer.status == (method == "HEAD" ? 404 : 200), "\(method): \(answer.text)")
            let verified = try await ResponseSigningRouterTests.verify(answer, answering: request, harness)
            #expect(verified.covers(.status), "\(method)")
            #expect(verified.covers(.contentDigest) == (method != "HEAD"), "\(method)")
        }
        #expect(plane.forwardedCount == 3)
        let snapshot = try #require(plane.snapshot)
        var refusals: [String] = []
        for loop in [true, false] {
            plane.replace(with: loop ? snapshot : nil)
            let request = try Self.bank.sign(try HTTPMessage.request(method: "GET", uri: harness.base + "/large/9437184"), created: Date(), nonce: Nonce.random())
            let answer = try await GatewayHarness.send(request)
            refusals.append("\(answer.status) \(answer.reason ?? "")")
        }
        #expect(refusals == ["503 upstream_unavailable", "503 upstream_unavailable"], "\(refusals)")
        #expect(plane.forwardedCount == 4)
    }

    /// A `monitor` route on the loop: every request forwarded with the verdict enforcing would
    /// give — `accepted` with the identity, or the reason code without one — and the upstream
    /// receives the same fields as from Hummingbird's `MonitoredGate`; a replay is still a replay.
    @Test func aMonitorRouteForwardsEveryVerdictOnTheLoopAsHummingbirdDoes() async throws {
        let harness = try await Self.gateway {
            $0.routes.insert(.init(prefix: "/echo/watched", access: .verified, mode: .monitor), at: 0)
        }
        Cleanup.after { try await harness.stop() }
        let plane = Self.plane(harness)
        let snapshot = try #require(plane.snapshot)
        let replayed = try Self.signed(harness, "POST", "/echo/watched/replayed")
        let cases: [(String, String, () throws -> [UInt8])] = [
            ("accepted", "accepted", { try Self.signed(harness, "POST", "/echo/watched/a") }),
            ("unsigned", "signature_missing", { Array("POST /echo/watched/b HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 2\r\n\r\n{}".utf8) }),
            ("stale", "created_too_old", { try Self.signed(harness, "GET", "/echo/watched/c", body: nil, created: Date().addingTimeInterval(-3600)) }),
            ("replayed", "nonce_replayed", { replayed }),
        ]
        // Its nonce claimed once before, as a client's earlier copy would.
        let first = try await RawConnection.open(port: harness.port)
        try await first.send(replayed)
        #expect(RawHTTP.status(try await first.response()) == 200)
        await first.close()
        for (name, verdict, request) in cases {
            var seen: [[String: String]] = []
            for loop in [true, false] {
                plane.replace(with: loop ? snapshot : nil)
                let forwarded = plane.forwardedCount
                let connection = try await RawConnection.open(port: harness.port)
                // Made again each time: the accepted one with a fresh nonce.
                try await connection.send(try request())
                let answer = try await connection.response()
                await connection.close()
                #expect(RawHTTP.status(answer) == 200, "\(name): \(answer)")
                #expect(plane.forwardedCount == forwarded + (loop ? 1 : 0), "\(name)")
                var fields = try #require(DataPlaneTests.body(answer)?["headers"] as? [String: String], "\(name): \(answer)")
                #expect(fields["signet-verdict"] == verdict, "\(name): \(fields)")
                #expect((fields["signet-key-id"] != nil) == (verdict == "accepted"), "\(name): \(fields)")
                for varying in ["x-request-id", "signature", "signature-input", "content-digest", "content-length", "content-type"] {
                    fields[varying] = nil
                }
                seen.append(fields)
            }
            #expect(seen[0] == seen[1], "\(name): \(seen[0]) | \(seen[1])")
        }
    }
}
