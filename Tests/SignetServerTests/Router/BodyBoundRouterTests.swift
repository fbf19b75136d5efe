// SPDX-License-Identifier: Apache-2.0
import Foundation
import SignetCore
import SignetServer
import SignetTestSupport
import Testing

/// `maxBodyBytes` bounds every proxied route's body, whatever its mode — not only signed ones:
/// one byte past it is `413 body_too_large`, nothing reaches the upstream, and a body at the bound
/// passes.
@Suite(.awaitsCleanups) struct BodyBoundRouterTests {
    @Test func everyRoutesBodyIsBoundedWhateverItsMode() async throws {
        let bound = 256
        let harness = try await GatewayHarness.startWithPasswords(store: .memory, transport: .router) {
            $0.maxBodyBytes = bound
            $0.routes.insert(contentsOf: [.init(prefix: "/echo/open", access: .open), .init(prefix: "/echo/envelope", access: .legacyEnvelope)], at: 0)
            $0.legacyEnvelope = .init(format: .json, keys: [.init(version: "1", secretBase64: Base64.encode([UInt8](repeating: 7, count: 64)))])
        }
        Cleanup.after { try await harness.stop() }
        let upstream = try #require(harness.upstream)
        try await harness.putUser("Mufasa", password: "Circle of Life")
        func post(_ path: String, _ count: Int, login: Bool = false) async throws -> GatewayHarness.Answer {
            let body = [UInt8](repeating: UInt8(ascii: "a"), count: count)
            var fields = [("Content-Type", "text/plain")]
            if login {
                let challenge = try await harness.challenge(path, method: "POST")
                fields.append(("Authorization", GatewayHarness.digest(challenge, user: "Mufasa", password: "Circle of Life", method: "POST", uri: path, body: body).fieldValue))
            }
            return try await harness.sendAsWritten("POST", path, fields: fields, body: body)
        }
        for (path, login) in [("/echo/open/x", false), ("/echo/password/x", true), ("/echo/envelope/x", false)] {
            let before = upstream.received.count
            let refused = try await post(path, bound + 1, login: login)
            #expect(refused.status == 413 && refused.reason == "body_too_large", "\(path): \(refused.status) \(refused.text)")
            #expect(upstream.received.count == before, "\(path) forwarded a body past the bound")
        }
        #expect(try await post("/echo/open/x", bound).status == 200)
        #expect(try await post("/echo/password/x", bound, login: true).status == 200)
    }
}
