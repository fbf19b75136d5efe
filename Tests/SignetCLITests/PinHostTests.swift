// SPDX-License-Identifier: Apache-2.0
import Foundation
import SignetCore
import SignetTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

@Suite struct PinHostTests {
    /// `signet pin --host` prints the served chain exactly as `--cert` prints the file it came from,
    /// for an Ed25519 server too (BoringSSL's client offers Ed25519 only when asked).
    @Test(arguments: [["ec", "-pkeyopt", "ec_paramgen_curve:P-384"], ["ed25519"]])
    func pinsOfAServedChainMatchTheCertificateFile(_ key: [String]) async throws {
        let dir = try SignetProcess.temporaryDirectory()
        let made = try await SignetProcess.run(
            "openssl",
            ["req", "-x509", "-nodes", "-days", "2", "-subj", "/CN=served", "-newkey"] + key + [
                "-keyout", "k.pem", "-out", "c.pem",
            ],
            in: dir
        )
        try #require(made.status == 0)
        _ = try await SignetProcess.run("openssl", ["genpkey", "-algorithm", "ed25519", "-out", "spare.pem"], in: dir)
        let (server, port) = try await Self.openSSLServer(in: dir)
        defer { Self.stop(server) }
        var served = try await SignetProcess.signet(["pin", "--host", "127.0.0.1:\(port)", "--backup-key", "spare.pem"], in: dir)
        for _ in 0..<50 where served.status != 0 {
            try await Task.sleep(for: .milliseconds(100))
            served = try await SignetProcess.signet(["pin", "--host", "127.0.0.1:\(port)", "--backup-key", "spare.pem"], in: dir)
        }
        #expect(served.status == 0, "\(served.stderr)")
        let file = try await SignetProcess.signet(["pin", "--cert", "c.pem"], in: dir)
        #expect(served.lines.first == file.lines.first)
        let spare = try await SignetProcess.run(
            "openssl",
            ["pkey", "-in", "spare.pem", "-pubout", "-outform", "DER", "-out", "spare.der"],
            in: dir
        )
        try #require(spare.status == 0)
        let backup = SPKIPin(spkiDER: Array(try Data(contentsOf: dir.appendingPathComponent("spare.der"))))
        #expect(served.stdout.contains("suggested pin set"))
        #expect(served.stdout.contains("  \(backup)"))
    }

    /// `signet request` (the SDK's pinned transport) completes a handshake with an Ed25519 server,
    /// checks the chain and the pin, and refuses the same server under a wrong pin.
    @Test func theClientTalksToAnEd25519ServerItPins() async throws {
        let dir = try SignetProcess.temporaryDirectory()
        let made = try await SignetProcess.run(
            "openssl",
            [
                "req", "-x509", "-nodes", "-days", "2", "-subj", "/CN=localhost", "-newkey", "ed25519",
                "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", "k.pem", "-out", "c.pem",
            ],
            in: dir
        )
        try #require(made.status == 0, "\(made.stderr)")
        let (server, port) = try await Self.openSSLServer(in: dir, "-www")
        defer { Self.stop(server) }
        let pin = try #require(try await SignetProcess.signet(["pin", "--cert", "c.pem"], in: dir).lines.first?.split(separator: " ").first)
        let url = "https://127.0.0.1:\(port)/"
        var answer = try await SignetProcess.signet(["request", url, "--cacert", "c.pem", "--pin", String(pin), "--waive-backup", "-i"], in: dir)
        for _ in 0..<50 where answer.stderr.contains("connection_failed") {
            try await Task.sleep(for: .milliseconds(100))
            answer = try await SignetProcess.signet(["request", url, "--cacert", "c.pem", "--pin", String(pin), "--waive-backup", "-i"], in: dir)
        }
        #expect(answer.status == 0, "\(answer.stderr)")
        #expect(answer.stdout.contains("200"), "\(answer.stdout)")
        let wrong = "sha256/" + Data(repeating: 7, count: 32).base64EncodedString()
        let refused = try await SignetProcess.signet(["request", url, "--cacert", "c.pem", "--pin", wrong, "--waive-backup"], in: dir)
        #expect(refused.status != 0 && refused.stderr.contains("pin_mismatch"), "\(refused.stderr)")
    }

    /// `openssl s_server` with `c.pem`/`k.pem` of `dir` on a random port, once it accepts
    /// connections: on a loaded machine it takes seconds to start, and a port already taken ends
    /// it (then another port is tried).
    static func openSSLServer(in dir: URL, _ extra: String...) async throws -> (Process, Int) {
        for _ in 0..<5 {
            let port = Int.random(in: 41_000...48_000)
            let server = Process()
            server.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            server.arguments = ["openssl", "s_server", "-accept", String(port), "-cert", "c.pem", "-key", "k.pem", "-quiet"] + extra
            server.currentDirectoryURL = dir
            server.standardOutput = FileHandle.nullDevice
            server.standardError = FileHandle.nullDevice
            server.standardInput = Pipe.closedOnExec()
            try server.run()
            for _ in 0..<300 where server.isRunning {
                if Self.accepts(port: port) { return (server, port) }
                try await Task.sleep(for: .milliseconds(100))
            }
            if server.isRunning { Self.stop(server) }
        }
        throw CancellationError()
    }

    /// Whether something accepts a TCP connection on 127.0.0.1:`port` now.
    static func accepts(port: Int) -> Bool {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
    }

    /// SIGKILL: children of Foundation's Process start with signals blocked, SIGTERM included.
    static func stop(_ server: Process) {
        kill(server.processIdentifier, SIGKILL)
        server.waitUntilExit()
    }
}
