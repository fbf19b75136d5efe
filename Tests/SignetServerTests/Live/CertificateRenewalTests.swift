// SPDX-License-Identifier: Apache-2.0
import Foundation
import SignetServer
import SignetTestSupport
import Testing
import X509

/// A certificate re-issued at the same path (ACME, cert-manager, Vault) is served after a reload
/// without a restart, to the connections accepted from then on; a key that is not its
/// certificate's is refused at the reload, and by `serve --check`, with the running one kept.
@Suite(.awaitsCleanups) struct CertificateRenewalTests {
    /// A CA and, under it, server certificates for 127.0.0.1 issued by openssl.
    struct Issuer {
        let folder: URL

        static func make() async throws -> Issuer {
            let folder = try SignetProcess.temporaryDirectory()
            let issuer = Issuer(folder: folder)
            try await issuer.openssl(
                "req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 30 -subj /CN=Renewal-CA -keyout ca.key -out ca.crt"
            )
            try Data("subjectAltName=DNS:localhost,IP:127.0.0.1\n".utf8).write(to: folder.appendingPathComponent("san.ext"))
            return issuer
        }

        func path(_ name: String) -> String { folder.appendingPathComponent(name).path }

        /// A new key and a certificate with `serial` for it, written to `certificate` and `key`.
        func issue(serial: String, certificate: String = "server.crt", key: String = "server.key") async throws {
            try await openssl("req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj /CN=localhost -keyout \(key) -out server.csr")
            try await openssl("x509 -req -in server.csr -CA ca.crt -CAkey ca.key -set_serial \(serial) -days 30 -extfile san.ext -out \(certificate)")
        }

        func openssl(_ arguments: String) async throws {
            let result = try await SignetProcess.run("/bin/sh", ["-c", "cd '\(folder.path)' && openssl \(arguments)"])
            guard result.status == 0 else { throw HarnessError("openssl \(arguments): \(result.stderr)") }
        }

        /// The serial of the certificate a new TLS connection to `port` is served (`openssl s_client`).
        func servedSerial(port: Int) async throws -> String {
            let result = try await SignetProcess.run(
                "/bin/sh",
                ["-c", "openssl s_client -connect 127.0.0.1:\(port) -servername localhost </dev/null 2>/dev/null | openssl x509 -noout -serial"]
            )
            return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        }
    }

    @Test func aReloadServesTheReissuedCertificateAndRefusesAKeyThatIsNotItsOwn() async throws {
        let issuer = try await Issuer.make()
        Cleanup.after { try? FileManager.default.removeItem(at: issuer.folder) }
        try await issuer.issue(serial: "0x1001")
        let tls = GatewayConfiguration.TLS(certificateFile: issuer.path("server.crt"), keyFile: issuer.path("server.key"))
        let harness = try await GatewayHarness.start(tls: tls)
        Cleanup.after { try await harness.stop() }
        let instance = harness.gateways[0]
        #expect(try await issuer.servedSerial(port: harness.port) == "serial=1001")

        // A connection open across the renewal (openssl's own client, its handshake done).
        let open = try RunningProcess("openssl", ["s_client", "-connect", "127.0.0.1:\(harness.port)", "-servername", "localhost", "-ign_eof"])
        Cleanup.after { open.kill() }
        #expect(try await open.wait(for: "Verify return code"), "the handshake of the open connection")

        // Re-issued at the same paths: the next connection gets it, after the reload only.
        try await issuer.issue(serial: "0x1002")
        #expect(try await issuer.servedSerial(port: harness.port) == "serial=1001")
        let configuration = try #require(instance.reloader.configuration)
        try instance.reloader.reload(to: configuration)
        #expect(try await issuer.servedSerial(port: harness.port) == "serial=1002")
        // The connection opened before keeps its certificate and is still served.
        // (`Connection: close`: an idle kept-alive connection would hold the server's shutdown.)
        try open.input.write(contentsOf: Data("GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n".utf8))
        #expect(try await open.wait(for: "HTTP/1.1 200"), "\(open.lines.suffix(5))")
        open.kill()
        #expect(harness.gateway.tls?.chain.first.map { Array($0.serialNumber.bytes) } == [0x10, 0x02])

        // A certificate whose key did not come with it: refused, the renewed one kept.
        try await issuer.issue(serial: "0x1003", key: "other.key")
        let refused = #expect(throws: ConfigurationError.self) { try instance.reloader.reload(to: configuration) }
        #expect(refused?.message.contains("server.key is not the key of the first certificate") == true, "\(String(describing: refused))")
        #expect(try await issuer.servedSerial(port: harness.port) == "serial=1002")

        // `serve --check` says so before anything starts.
        let file = issuer.path("signet.json")
        let json: [String: Any] = [
            "upstream": "http://127.0.0.1:9", "store": ["memory": true],
            "tls": ["certificateFile": issuer.path("server.crt"), "keyFile": issuer.path("server.key")],
        ]
        try JSONSerialization.data(withJSONObject: json).write(to: URL(fileURLWithPath: file))
        let check = try await SignetProcess.signet(["serve", "--check", "--config", file])
        #expect(check.status != 0 && check.stderr.contains("is not the key of the first certificate"), "\(check.stdout) \(check.stderr)")
    }

    /// Anything of `tls` but its files is fixed with the server: a reload that changes it is refused.
    @Test func aReloadThatChangesMoreThanTheFilesIsRefused() async throws {
        let issuer = try await Issuer.make()
        Cleanup.after { try? FileManager.default.removeItem(at: issuer.folder) }
        try await issuer.issue(serial: "0x2001")
        try await issuer.issue(serial: "0x2002", certificate: "next.crt", key: "next.key")
        let tls = GatewayConfiguration.TLS(certificateFile: issuer.path("server.crt"), keyFile: issuer.path("server.key"))
        let harness = try await GatewayHarness.start(tls: tls)
        Cleanup.after { try await harness.stop() }
        let reloader = harness.gateways[0].reloader
        var moved = try #require(reloader.configuration)
        moved.tls = GatewayConfiguration.TLS(certificateFile: issuer.path("next.crt"), keyFile: issuer.path("next.key"))
        try reloader.reload(to: moved)
        #expect(try await issuer.servedSerial(port: harness.port) == "serial=2002", "new paths are files too")
        var asking = moved
        asking.tls?.clientCertificates = true
        let refused = #expect(throws: ConfigurationError.self) { try reloader.reload(to: asking) }
        #expect(refused?.path == "tls")
    }
}
