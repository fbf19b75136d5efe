// SPDX-License-Identifier: Apache-2.0
import Foundation
import SignetCore
import SignetTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Pin sets (SignetCore) over certificates openssl makes: a leaf (P-256), an intermediate (RSA) and a
/// root (Ed25519). Pin evaluation runs after chain validation, so the three need not chain here.
@Suite struct PinSetTests {
    // Made once, the first time a test asks, by three short openssl runs that talk to nothing here.
    static let chain: [[UInt8]] = {
        guard let dir = try? SignetProcess.temporaryDirectory() else { return [] }
        let kinds: [[String]] = [
            ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256"], ["-newkey", "rsa:2048"], ["-newkey", "ed25519"],
        ]
        return kinds.enumerated().compactMap { index, options in
            _ = try? SignetProcess.runBlocking(
                "openssl",
                [
                    "req", "-x509", "-nodes", "-days", "2", "-subj", "/CN=c\(index)", "-keyout", "k\(index).pem",
                    "-out", "c\(index).der", "-outform", "DER",
                ] + options,
                in: dir
            )
            return (try? Data(contentsOf: dir.appendingPathComponent("c\(index).der"))).map(Array.init)
        }
    }()

    /// The pin of openssl's certificate `index`; a missing certificate fails the test, never traps.
    static func pin(_ index: Int) throws -> SPKIPin {
        guard chain.indices.contains(index) else { throw VectorError("openssl made \(chain.count) certificates, not \(index + 1)") }
        return try SPKIPin(certificateDER: chain[index])
    }
    static let backup = try! SPKIPin(parsing: "sha256/" + Base64.encode([UInt8](repeating: 7, count: 32)))
    let now = Date(timeIntervalSince1970: 1_800_000_000)

    /// openssl made all three certificates (a missing openssl fails here, not silently below).
    @Test func opensslMadeTheChain() {
        #expect(Self.chain.count == 3)
    }

    @Test func hostPatterns() throws {
        let exact = try HostPattern("api.example.com")
        let one = try HostPattern("*.example.com")
        let any = try HostPattern("**.example.com")
        #expect(exact.matches("API.example.com") && !exact.matches("x.api.example.com"))
        #expect(one.matches("api.example.com") && !one.matches("a.b.example.com") && !one.matches("example.com"))
        #expect(any.matches("a.b.example.com") && any.matches("api.example.com") && !any.matches("example.com"))
        #expect(!any.matches("badexample.com"))
        for bad in ["", "*.", "a.*.com", ".example.com"] { #expect(throws: SignetError.self) { try HostPattern(bad) } }
    }

    @Test func pinSpellingsParseAndPrint() throws {
        let pin = try Self.pin(0)
        #expect(try SPKIPin(parsing: pin.description) == pin)
        #expect(try SPKIPin(parsing: pin.hpkpDescription) == pin)
        #expect(try SPKIPin(parsing: pin.base64) == pin)
        for bad in ["sha256/short", "pin-sha256=unquoted", "sha1/AAAA"] {
            #expect(throws: SignetError.self) { try SPKIPin(parsing: bad) }
        }
    }

    @Test func aMatchingPinAtAnAllowedPositionAllows() throws {
        try #require(Self.chain.count == 3)
        let set = try PinSet(
            pattern: HostPattern("api.example.com"),
            pins: [try Self.pin(1), Self.backup],
            positions: [.intermediate]
        )
        let result = set.evaluate(chain: Self.chain, host: "api.example.com", now: now)
        #expect(result.decision == .allow)
        #expect(result.report == nil && !result.backupMissing)
        // The same pin at a position the set does not allow does not count.
        let leafOnly = try PinSet(
            pattern: HostPattern("api.example.com"),
            pins: [try Self.pin(1), Self.backup],
            positions: [.leaf]
        )
        #expect(leafOnly.evaluate(chain: Self.chain, host: "api.example.com", now: now).decision == .deny)
    }

    @Test func aMismatchIsRefusedWithEveryServedPinAndAReport() throws {
        try #require(Self.chain.count == 3)
        let other = try SPKIPin(parsing: "sha256/" + Base64.encode([UInt8](repeating: 1, count: 32)))
        let set = try PinSet(pattern: HostPattern("*.example.com"), pins: [other, Self.backup])
        let result = set.evaluate(chain: Self.chain, host: "api.example.com", port: 8443, now: now)
        #expect(result.decision == .deny)
        #expect(result.error?.code == .pinMismatch)
        for index in 0..<3 { #expect(result.message.contains(try Self.pin(index).description)) }
        let report = try #require(result.report)
        let json = try #require(try JSONSerialization.jsonObject(with: Data(report.json)) as? [String: Any])
        #expect(json["hostname"] as? String == "api.example.com")
        #expect(json["port"] as? Int == 8443)
        #expect(json["noted-hostname"] as? String == "*.example.com")
        #expect(json["include-subdomains"] as? Bool == true)
        #expect((json["served-certificate-chain"] as? [String])?.count == 3)
        #expect((json["known-pins"] as? [String])?.contains(other.hpkpDescription) == true)
        // Report-only lets it through, with the same report.
        var reportOnly = set
        reportOnly.mode = .reportOnly
        let reported = reportOnly.evaluate(chain: Self.chain, host: "api.example.com", now: now)
        #expect(reported.decision == .allowReported && reported.report != nil)
    }

    @Test func backupsAndExpiryAreExplicit() throws {
        try #require(Self.chain.count == 3)
        #expect(throws: SignetError.self) { try PinSet(pattern: HostPattern("a.example"), pins: [try Self.pin(0)]) }
        let waived = try PinSet(pattern: HostPattern("a.example"), pins: [try Self.pin(0)], backupWaived: true)
        #expect(waived.evaluate(chain: Self.chain, host: "a.example", now: now).decision == .allow)
        let noBackup = try PinSet(pattern: HostPattern("a.example"), pins: [try Self.pin(0), try Self.pin(2)])
        #expect(noBackup.evaluate(chain: Self.chain, host: "a.example", now: now).backupMissing)

        let stale = [try SPKIPin(parsing: "sha256/" + Base64.encode([UInt8](repeating: 2, count: 32))), Self.backup]
        // Past the soft date: still enforcing, asking for a refresh.
        let soft = try PinSet(
            pattern: HostPattern("a.example"),
            pins: Set(stale),
            softExpiry: now.addingTimeInterval(-1)
        )
        let softResult = soft.evaluate(chain: Self.chain, host: "a.example", now: now)
        #expect(softResult.decision == .deny && softResult.needsRefresh)
        // Past the hard date, what the configuration says.
        let keep = try PinSet(
            pattern: HostPattern("a.example"),
            pins: Set(stale),
            hardExpiry: (now.addingTimeInterval(-1), .keepEnforcing)
        )
        #expect(keep.evaluate(chain: Self.chain, host: "a.example", now: now).decision == .deny)
        let relax = try PinSet(
            pattern: HostPattern("a.example"),
            pins: Set(stale),
            hardExpiry: (now.addingTimeInterval(-1), .reportOnly)
        )
        #expect(relax.evaluate(chain: Self.chain, host: "a.example", now: now).decision == .allowReported)
        #expect(
            relax.evaluate(chain: Self.chain, host: "a.example", now: now.addingTimeInterval(-10)).decision == .deny
        )
    }
}

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
        let (server, port) = try Self.openSSLServer(in: dir)
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
        let (server, port) = try Self.openSSLServer(in: dir, "-www")
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

    /// `openssl s_server` with `c.pem`/`k.pem` of `dir` on a random port.
    static func openSSLServer(in dir: URL, _ extra: String...) throws -> (Process, Int) {
        let port = Int.random(in: 41_000...48_000)
        let server = Process()
        server.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        server.arguments = ["openssl", "s_server", "-accept", String(port), "-cert", "c.pem", "-key", "k.pem", "-quiet"] + extra
        server.currentDirectoryURL = dir
        server.standardOutput = FileHandle.nullDevice
        server.standardError = FileHandle.nullDevice
        server.standardInput = Pipe.closedOnExec()
        try server.run()
        return (server, port)
    }

    /// SIGKILL: children of Foundation's Process start with signals blocked, SIGTERM included.
    static func stop(_ server: Process) {
        kill(server.processIdentifier, SIGKILL)
        server.waitUntilExit()
    }
}
