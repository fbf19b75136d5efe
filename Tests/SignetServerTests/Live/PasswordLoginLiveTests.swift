// SPDX-License-Identifier: Apache-2.0
import Foundation
import NIOHTTP1
import SignetCore
import SignetPostgres
import SignetServer
import SignetTestSupport
import Testing

/// Password login across two instances on one PostgreSQL.
@Suite(.awaitsCleanups) struct PasswordLoginLiveTests {
    @Test func instancesOnOneDatabaseShareNoncesCountsAndLockouts() async throws {
        guard let server = TestPostgres.url else { return }
        // A database of its own: failure windows outlive a test in a shared one.
        let url = try await PostgresStore.createDatabase(url: server, named: "signet_pw_\(UInt64.random(in: 0...UInt64.max))")
        let harness = try await GatewayHarness.startWithPasswords(store: .postgres(url), instances: 2) {
            $0.passwords?.maxFailures = 2
        }
        Cleanup.after { try await harness.stop() }
        let name = "user-\(UUID().uuidString.prefix(8))"
        try await harness.putUser(name, password: "pw-1", gateway: 0)
        // A nonce from instance 0 answered at instance 1; its count then refused at instance 0.
        let challenge = try await harness.challenge("/echo/password/x", gateway: 0)
        let field = GatewayHarness.digest(challenge, user: name, password: "pw-1", uri: "/echo/password/x").fieldValue
        #expect(try await PasswordLoginTests.send(harness, "/echo/password/x", field, gateway: 1).status == 200)
        #expect(try await PasswordLoginTests.send(harness, "/echo/password/x", field, gateway: 0).reason == "nonce_replayed")
        // Failures at either instance count toward one lockout.
        for gateway in [0, 1] {
            let fresh = try await harness.challenge("/echo/password/x", gateway: gateway)
            let wrong = GatewayHarness.digest(fresh, user: name, password: "wrong", uri: "/echo/password/x").fieldValue
            #expect(try await PasswordLoginTests.send(harness, "/echo/password/x", wrong, gateway: gateway).reason == "credentials_invalid")
        }
        let last = try await harness.challenge("/echo/password/x", gateway: 1)
        let right = GatewayHarness.digest(last, user: name, password: "pw-1", uri: "/echo/password/x").fieldValue
        #expect(try await PasswordLoginTests.send(harness, "/echo/password/x", right, gateway: 1).reason == "login_locked")
    }
}
