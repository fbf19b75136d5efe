// SPDX-License-Identifier: Apache-2.0
import Foundation
import NIOHTTP1
import SignetCore
import SignetMiddleware
@testable import SignetServer
import SignetTestSupport
import Testing

/// Password routes on the event-loop data plane (`LoopAuthenticator`), over real sockets: a
/// Digest login's `Authentication-Info` set on the answer's head, an `auth-int` login's answer
/// held whole for its `rspauth` over the body, the `Authorization` field kept from the upstream,
/// and refusals answered as Hummingbird's path answers them.
@Suite(.awaitsCleanups) struct PasswordDataPlaneTests {
    static let user = "Mufasa"
    static let password = "Circle of Life"

    static func ha1() -> String {
        DigestResponse.ha1(username: user, realm: GatewayHarness.realm, password: password, algorithm: .sha256)
    }

    @Test func digestLoginsAreJudgedOnTheLoopWithTheirProofOnTheAnswer() async throws {
        let harness = try await GatewayHarness.startWithPasswords()
        Cleanup.after { try await harness.stop() }
        let plane = harness.gateway.listeners.dataPlane
        try await harness.putUser(Self.user, password: Self.password)

        // qop=auth: the proof is known when the request is admitted.
        let challenge = try await harness.challenge("/echo/password/profile")
        let credentials = GatewayHarness.digest(challenge, user: Self.user, password: Self.password, uri: "/echo/password/profile")
        let answer = try await GatewayHarness.send(
            method: "GET", url: harness.base + "/echo/password/profile", headers: [("Authorization", credentials.fieldValue)])
        #expect(answer.status == 200, "\(answer.text)")
        #expect(plane.forwardedCount == 1)
        let received = (answer.json["headers"] as? [String: String]) ?? [:]
        #expect(received["signet-user"] == Self.user && received["authorization"] == nil, "\(received)")
        let info = try HTTPAuthentication(credentials: "Digest " + (try #require(answer.headers["Authentication-Info"].first)))
        #expect(
            info["rspauth"]
                == DigestResponse.rspauth(
                    ha1: Self.ha1(), nonce: challenge.nonce, nc: "00000001", cnonce: credentials.cnonce, qop: .auth,
                    uri: credentials.uri, algorithm: .sha256))

        // qop=auth-int: the answer is held whole on the loop, its proof over the body.
        let body = Array(#"{"amount":"2300.00","to":"DE89"}"#.utf8)
        let intChallenge = try await harness.challenge("/echo/int/transfer", method: "POST")
        let intCredentials = GatewayHarness.digest(
            intChallenge, user: Self.user, password: Self.password, method: "POST", uri: "/echo/int/transfer", body: body, qop: .authInt)
        let transfer = try await GatewayHarness.send(
            method: "POST", url: harness.base + "/echo/int/transfer", headers: [("Authorization", intCredentials.fieldValue)], body: body)
        #expect(transfer.status == 200, "\(transfer.text)")
        #expect(plane.forwardedCount == 2)
        #expect(transfer.headers["Content-Length"].first == String(transfer.body.count))
        let intInfo = try HTTPAuthentication(credentials: "Digest " + (try #require(transfer.headers["Authentication-Info"].first)))
        #expect(
            intInfo["rspauth"]
                == DigestResponse.rspauth(
                    ha1: Self.ha1(), nonce: intChallenge.nonce, nc: "00000001", cnonce: intCredentials.cnonce, qop: .authInt,
                    uri: "/echo/int/transfer", responseBody: transfer.body, algorithm: .sha256))
    }

    /// Each kind of refusal a password gate makes, sent both ways (the data plane swapped out for
    /// the second): the same status, reason, challenge schemes and problem document (a challenge's
    /// nonce is fresh each time).
    @Test func everyRefusalOfAPasswordRouteOnTheLoopIsTheOneHummingbirdMakes() async throws {
        let harness = try await GatewayHarness.startWithPasswords()
        Cleanup.after { try await harness.stop() }
        let plane = harness.gateway.listeners.dataPlane
        let snapshot = try #require(plane.snapshot)
        try await harness.putUser(Self.user, password: Self.password)
        let cases: [(String, String, () async throws -> String?)] = [
            ("no credentials", "/echo/password/a", { nil }),
            ("a wrong password", "/echo/password/a", {
                let challenge = try await harness.challenge("/echo/password/a")
                return GatewayHarness.digest(challenge, user: Self.user, password: "Circle of Strife", uri: "/echo/password/a").fieldValue
            }),
            ("auth where auth-int is required", "/echo/int/a", {
                let challenge = try await harness.challenge("/echo/int/a")
                return GatewayHarness.digest(challenge, user: Self.user, password: Self.password, uri: "/echo/int/a").fieldValue
            }),
            ("Basic over plain HTTP", "/echo/password/a", { "Basic " + Base64.encode(Array("\(Self.user):\(Self.password)".utf8)) }),
        ]
        for (name, path, authorization) in cases {
            var answers: [GatewayHarness.Answer] = []
            for loop in [true, false] {
                plane.replace(with: loop ? snapshot : nil)
                let value = try await authorization()
                answers.append(try await GatewayHarness.send(method: "GET", url: harness.base + path, headers: value.map { [("Authorization", $0)] } ?? []))
            }
            let (onLoop, onHummingbird) = (answers[0], answers[1])
            #expect(onLoop.status >= 400 && onLoop.status == onHummingbird.status, "\(name): \(onLoop.text) | \(onHummingbird.text)")
            #expect(onLoop.reason != nil && onLoop.reason == onHummingbird.reason, "\(name): \(onLoop.text) | \(onHummingbird.text)")
            func schemes(_ answer: GatewayHarness.Answer) throws -> [String] {
                try HTTPAuthentication.challenges(answer.headers["WWW-Authenticate"]).map(\.scheme)
            }
            #expect(try schemes(onLoop) == (try schemes(onHummingbird)), "\(name): \(onLoop.headers) | \(onHummingbird.headers)")
            #expect(NSDictionary(dictionary: onLoop.json).isEqual(to: onHummingbird.json), "\(name): \(onLoop.text) | \(onHummingbird.text)")
        }
        #expect(plane.forwardedCount == 0)
        // Each on the loop, with the two challenges asked for on the loop's leg.
        #expect(plane.refusedCount == cases.count + 2)
    }

    /// An `auth-int` login's answer is proven where the gate can read it whole (within
    /// `maxBodyBytes`) and streams as it is past that, on the loop as on Hummingbird's path.
    @Test func anAuthIntAnswerIsProvenWithinTheLimitAndStreamsPastItEitherWay() async throws {
        let harness = try await GatewayHarness.startWithPasswords {
            $0.routes.insert(.init(prefix: "/large", access: .password(.init(requireAuthInt: true))), at: 0)
        }
        Cleanup.after { try await harness.stop() }
        let plane = harness.gateway.listeners.dataPlane
        let snapshot = try #require(plane.snapshot)
        try await harness.putUser(Self.user, password: Self.password)
        let limit = harness.gateway.configuration.maxBodyBytes
        for (size, proven) in [(1000, true), (limit + 1000, false)] {
            let path = "/large/\(size)"
            for loop in [true, false] {
                plane.replace(with: loop ? snapshot : nil)
                let forwarded = plane.forwardedCount
                let challenge = try await harness.challenge(path)
                let credentials = GatewayHarness.digest(challenge, user: Self.user, password: Self.password, uri: path, qop: .authInt)
                let answer = try await GatewayHarness.send(method: "GET", url: harness.base + path, headers: [("Authorization", credentials.fieldValue)])
                #expect(answer.status == 200 && answer.body.count == size, "\(size) \(loop): \(answer.status) \(answer.body.count)")
                #expect(plane.forwardedCount == forwarded + (loop ? 1 : 0))
                let info = answer.headers["Authentication-Info"].first
                #expect((info != nil) == proven, "\(size) \(loop): \(answer.headers)")
                if let info {
                    let parsed = try HTTPAuthentication(credentials: "Digest " + info)
                    #expect(
                        parsed["rspauth"]
                            == DigestResponse.rspauth(
                                ha1: Self.ha1(), nonce: challenge.nonce, nc: "00000001", cnonce: credentials.cnonce, qop: .authInt,
                                uri: path, responseBody: answer.body, algorithm: .sha256))
                }
            }
        }
    }
}
