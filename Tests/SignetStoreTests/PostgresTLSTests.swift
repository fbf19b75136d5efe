// SPDX-License-Identifier: Apache-2.0
import Foundation
import SignetCore
import SignetPostgres
import SignetStore
import SignetTestSupport
import Testing

/// PostgreSQL over TLS, as `sslmode` in the URL asks: verified against the server's root, refused
/// against another root (so the check is real), unsupported modes refused before connecting.
@Suite struct PostgresTLSTests {
    static let root = ProcessInfo.processInfo.environment["SIGNET_POSTGRES_CA"]

    @Test(.enabled(if: TestPostgres.url != nil && root != nil))
    func verifyFullConnectsAndAnotherRootIsRefused() async throws {
        let url = try #require(TestPostgres.url)
        // The first store on the shared database migrates it: some forty round trips, each waiting
        // its turn while the suite starts its servers on two cores (measured: up to 20 s). What is
        // tested here is the TLS mode, not the start-up time: give it room.
        let store = try await PostgresStore.connect(
            url: url + "?sslmode=verify-full&sslrootcert=\(try #require(Self.root))",
            timeout: .seconds(60)
        )
        let now = Date()
        let nonce = "tls-\(UUID().uuidString)"
        #expect(try await store.claim(keyID: "tls", nonce: nonce, until: now.addingTimeInterval(60), now: now))
        #expect(try await !store.claim(keyID: "tls", nonce: nonce, until: now.addingTimeInterval(60), now: now))
        try await store.shutdown()

        let required = try await PostgresStore.connect(url: url + "?sslmode=require")
        try await required.shutdown()

        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("signet-pgtls-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let other = folder.appendingPathComponent("other.crt").path
        let made = try await SignetProcess.run("openssl", [
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "1",
            "-subj", "/CN=localhost", "-keyout", folder.appendingPathComponent("other.key").path, "-out", other,
        ])
        try #require(made.status == 0, "\(made.stderr)")
        await #expect(throws: SignetError(.storeUnavailable, "")) {
            _ = try await PostgresStore.connect(url: url + "?sslmode=verify-full&sslrootcert=\(other)", timeout: .seconds(3))
        }
    }

    @Test func unsupportedModesAreRefused() async throws {
        for mode in ["prefer", "verify-ca", "allow", "bogus"] {
            await #expect(throws: SignetError(.storeUnavailable, ""), "\(mode)") {
                _ = try await PostgresStore.connect(url: "postgres://u:p@127.0.0.1:1/db?sslmode=\(mode)")
            }
        }
    }
}
