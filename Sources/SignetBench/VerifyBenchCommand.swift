// SPDX-License-Identifier: Apache-2.0
import ArgumentParser
import Foundation
import SignetCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

struct VerifyBenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Measure verification of a typical signed POST per algorithm, next to `openssl speed`.",
        discussion: """
            Each iteration is the whole server-side path: parse Signature-Input and Signature, select, check \
            the window, look the key up, build the signature base, check Content-Digest over a 1 KiB JSON \
            body, verify the signature and claim the nonce. openssl runs right after each measurement, on \
            the same core count (one thread), and the ratio is Signet's rate over openssl's for the same \
            primitives. Build with -c release: `swift run -c release signet-bench verify`.
            """
    )

    @Option(help: "Seconds per measurement.")
    var seconds: Double = 2

    @Option(help: "Algorithms to measure (repeatable; default: all six).")
    var alg: [String] = []

    @Flag(help: "Skip the openssl comparison.")
    var noOpenssl = false

    @Flag(help: "Also measure App Attest assertion and attestation verification (simulated device).")
    var appattest = false

    @Flag(help: "Also measure the client's per-connection trust check (chain, hostname, pins).")
    var pinning = false

    @Flag(help: "Also measure app token verification (ES256 JWT, claims, device lookup) next to openssl's P-256 verify.")
    var tokens = false

    @Flag(help: "Also measure an Android key attestation check (the chain's signatures, record and policy) next to openssl's verify of the same signatures.")
    var keyAttestation = false

    @Option(help: "The key attestation chain to measure (run from the repository root for the default).")
    var keyAttestationChain = "Tests/Vectors/android/ec-tee-chain.pem"

    @Flag(
        help: "Measure each algorithm's verify from the request the server holds (Hummingbird's head and body buffer) next to SignetCore's verify of a ready message."
    )
    var serverRequest = false

    @Flag(help: "Also measure an Oblivious HTTP request (decapsulate, decode, verify, encapsulate) against the same in the clear.")
    var ohttp = false

    func run() async throws {
        let names =
            alg.isEmpty
            ? ["hmac-sha256", "ecdsa-p256-sha256", "ed25519", "ecdsa-p384-sha384", "rsa-pss-sha512", "rsa-v1_5-sha256"]
            : alg
        let openssl = noOpenssl ? nil : OpenSSLSpeed()
        print("Signet verify of a signed POST (1 KiB JSON, Content-Digest, nonce), one thread, \(seconds) s each")
        print(String(repeating: "-", count: 100))
        print(
            "algorithm".padding(18) + "signet/s".padding(12, left: true) + "openssl/s".padding(14, left: true)
                + "ratio".padding(9, left: true) + "   openssl work"
        )
        if pinning {
            let p256 = openssl?.reference(for: "ecdsa-p256-sha256", seconds: max(1, Int(seconds.rounded())))
            let rate = try await PinningBench.measure(seconds: seconds)
            print(
                "server trust (P-256 chain + pins)".padding(30) + String(format: "%.0f", rate).padding(12, left: true)
                    + (p256.map { String(format: "%.0f", $0.rate) } ?? "-").padding(14, left: true)
                    + (p256.map { String(format: "%.2f", rate / $0.rate) } ?? "-").padding(9, left: true)
                    + "   ecdsap256 verify"
            )
            if alg.isEmpty && !appattest { return }
        }
        if tokens {
            let p256 = openssl?.reference(for: "ecdsa-p256-sha256", seconds: max(1, Int(seconds.rounded())))
            let rate = try await TokenBench.measure(seconds: seconds)
            print(
                "app token (ES256 JWT)".padding(30) + String(format: "%.0f", rate).padding(12, left: true)
                    + (p256.map { String(format: "%.0f", $0.rate) } ?? "-").padding(14, left: true)
                    + (p256.map { String(format: "%.2f", rate / $0.rate) } ?? "-").padding(9, left: true)
                    + "   ecdsap256 verify"
            )
            if alg.isEmpty && !appattest && !ohttp { return }
        }
        if ohttp {
            let rates = try await ObliviousBench.measure(seconds: seconds)
            let x25519 = openssl?.ecdhRate("ecdhx25519", seconds: max(1, Int(seconds.rounded())))
            print("hmac-sha256 in the clear".padding(30) + String(format: "%.0f", rates.plain).padding(12, left: true))
            print(
                "hmac-sha256 over OHTTP".padding(30) + String(format: "%.0f", rates.oblivious).padding(12, left: true)
                    + (x25519.map { String(format: "%.0f", $0) } ?? "-").padding(14, left: true)
                    + (x25519.map { String(format: "%.2f", rates.oblivious / $0) } ?? "-").padding(9, left: true)
                    + "   x25519 derive; "
                    + String(format: "%.2f of the clear path", rates.oblivious / rates.plain)
            )
            if alg.isEmpty && !appattest { return }
        }
        if keyAttestation {
            let measured = try KeyAttestationBench.measure(chainFile: keyAttestationChain, seconds: seconds)
            // openssl's time for the same signatures, one after another.
            let rates = openssl.map { speed in
                Set(measured.signatures).reduce(into: [String: Double]()) { rates, name in
                    rates[name] = speed.signatureVerifyRate(name, seconds: max(1, Int(seconds.rounded())))
                }
            }
            let reference = rates.flatMap { rates -> Double? in
                let times = measured.signatures.compactMap { rates[$0].map { 1 / $0 } }
                return times.count == measured.signatures.count ? 1 / times.reduce(0, +) : nil
            }
            let openslRate: String = reference.map { String(format: "%.0f", $0) } ?? "-"
            let ratio: String = reference.map { String(format: "%.2f", measured.rate / $0) } ?? "-"
            let work: String = measured.signatures.joined(separator: " + ") + " verify"
            var line = "android key attestation".padding(30)
            line += String(format: "%.0f", measured.rate).padding(12, left: true)
            line += openslRate.padding(14, left: true) + ratio.padding(9, left: true) + "   " + work
            print(line)
            if alg.isEmpty && !appattest { return }
        }
        if appattest {
            let p256 = openssl?.reference(for: "ecdsa-p256-sha256", seconds: max(1, Int(seconds.rounded())))
            for (name, rate) in try await AppAttestBench.measure(seconds: seconds) {
                let ratio = p256.map { String(format: "%.2f", rate / $0.rate) } ?? "-"
                print(
                    name.padding(30) + String(format: "%.0f", rate).padding(12, left: true)
                        + (p256.map { String(format: "%.0f", $0.rate) } ?? "-").padding(14, left: true)
                        + ratio.padding(9, left: true)
                        + "   ecdsap256 verify"
                )
            }
            if alg.isEmpty { return }
        }
        if serverRequest {
            let columns = ["algorithm".padding(18), "core/s".padding(12, left: true), "server/s".padding(12, left: true), "ratio".padding(9, left: true)]
            print(columns.joined() + "   µs outside".padding(16) + "on a loop/s".padding(14, left: true) + "   µs the loop adds")
            for name in names {
                let rates = try await ServerRequestBench.measure(try SignatureAlgorithms.standard.require(name), seconds: seconds)
                let cells: [String] = [
                    name.padding(18), String(format: "%.0f", rates.core).padding(12, left: true),
                    String(format: "%.0f", rates.serverRequest).padding(12, left: true),
                    String(format: "%.2f", rates.serverRequest / rates.core).padding(9, left: true),
                    String(format: "   %.1f", 1e6 / rates.serverRequest - 1e6 / rates.core).padding(16),
                    String(format: "%.0f", rates.onLoop).padding(14, left: true),
                    String(format: "   %.1f", 1e6 / rates.onLoop - 1e6 / rates.serverRequest),
                ]
                print(cells.joined())
            }
            return
        }
        for name in names {
            let algorithm = try SignatureAlgorithms.standard.require(name)
            let rate = try await Self.measure(algorithm, seconds: seconds)
            if let openssl, let reference = openssl.reference(for: name, seconds: max(1, Int(seconds.rounded()))) {
                let ratio = rate / reference.rate
                print(
                    name.padding(18) + String(format: "%.0f", rate).padding(12, left: true)
                        + String(format: "%.0f", reference.rate).padding(14, left: true)
                        + String(format: "%.2f", ratio).padding(9, left: true) + "   " + reference.work
                )
            } else {
                print(
                    name.padding(18) + String(format: "%.0f", rate).padding(12, left: true)
                        + "-".padding(14, left: true)
                )
            }
        }
    }

    /// Verifications per second over pre-signed requests, each with its own nonce.
    static func measure(_ algorithm: any SignatureAlgorithm, seconds: Double) async throws -> Double {
        let key = try SigningKey.generate(algorithm.keyType)
        let ring = KeyRing([KeyRecord(keyID: "bench", algorithm: algorithm.name, key: key.verificationKey)])
        let signer = MessageSigner(key: key, keyID: "bench", algorithm: algorithm)
        let body = Array(Self.jsonBody.utf8)
        let now = Date(timeIntervalSince1970: 1_700_000_000)
        let request = try HTTPMessage.request(
            method: "POST",
            uri: "https://api.example.com/v1/scores?game=42",
            fields: [("Content-Type", "application/json"), ("Content-Length", String(body.count))],
            body: body
        )
        let count = algorithm.keyType == .rsa ? 256 : 2048
        var messages: [HTTPMessage] = []
        for index in 0..<count {
            messages.append(
                try signer.sign(
                    request,
                    components: [.method, .targetURI, .contentDigest, "content-type"],
                    created: now,
                    nonce: "nonce-\(index)"
                )
            )
        }
        var verifier = MessageVerifier(keys: ring, nonces: MemoryNonceStore())
        let clock = ContinuousClock()
        let start = clock.now
        var done = 0
        while clock.now - start < .milliseconds(Int(seconds * 1000)) {
            // A fresh store each pass over the messages: every nonce is new to it.
            verifier.nonces = MemoryNonceStore()
            for message in messages {
                _ = try await verifier.verify(message, now: now)
            }
            done += messages.count
        }
        let elapsed = clock.now - start
        return Double(done) / (Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
    }

    static let jsonBody: String = {
        var entries: [String] = []
        var index = 0
        while entries.joined(separator: ",").utf8.count < 990 {
            entries.append("\"field\(index)\":\"value-\(index)\"")
            index += 1
        }
        return "{" + entries.joined(separator: ",") + "}"
    }()
}

/// Runs `openssl speed` for the primitives behind each algorithm.
struct OpenSSLSpeed {
    struct Reference {
        var rate: Double
        var work: String
    }

    func reference(for algorithm: String, seconds: Int) -> Reference? {
        switch algorithm {
        case "hmac-sha256":
            // The same work: SHA-256 of the 1 KiB body plus HMAC of a ~250-byte signature base.
            guard let sha = hashRate(["-evp", "sha256"], bytes: 1024, seconds: seconds),
                let hmac = hashRate(["-hmac", "sha256"], bytes: 256, seconds: seconds)
            else { return nil }
            return Reference(rate: 1 / (1 / sha + 1 / hmac), work: "sha256(1 KiB) + hmac-sha256(256 B)")
        case "ecdsa-p256-sha256":
            return verifyRate("ecdsap256", prefix: "+F4:", seconds: seconds).map {
                Reference(rate: $0, work: "ecdsap256 verify")
            }
        case "ecdsa-p384-sha384":
            return verifyRate("ecdsap384", prefix: "+F4:", seconds: seconds).map {
                Reference(rate: $0, work: "ecdsap384 verify")
            }
        case "ed25519":
            return verifyRate("ed25519", prefix: "+F6:", seconds: seconds).map {
                Reference(rate: $0, work: "ed25519 verify")
            }
        case "rsa-pss-sha512", "rsa-v1_5-sha256":
            return verifyRate("rsa2048", prefix: "+F2:", seconds: seconds).map {
                Reference(rate: $0, work: "rsa2048 verify")
            }
        default: return nil
        }
    }

    /// Verifications per second of `ecdsap256`, `rsa2048` or `rsa4096` (`+F2`/`+F4` lines).
    func signatureVerifyRate(_ name: String, seconds: Int) -> Double? {
        verifyRate(name, prefix: name.hasPrefix("rsa") ? "+F2:" : "+F4:", seconds: seconds)
    }

    /// Key agreements per second (`+F5` lines: the fourth field).
    func ecdhRate(_ name: String, seconds: Int) -> Double? {
        let output = run(["speed", "-mr", "-seconds", String(seconds), name])
        guard let line = output.split(separator: "\n").first(where: { $0.hasPrefix("+F5:") }) else { return nil }
        let fields = line.split(separator: ":")
        return fields.count > 3 ? Double(fields[3]) : nil
    }

    /// Operations per second for `bytes`-long inputs.
    private func hashRate(_ arguments: [String], bytes: Int, seconds: Int) -> Double? {
        let output = run(["speed", "-mr", "-seconds", String(seconds), "-bytes", String(bytes)] + arguments)
        guard let line = output.split(separator: "\n").first(where: { $0.hasPrefix("+F:") }),
            let bytesPerSecond = line.split(separator: ":").last.flatMap({ Double($0) })
        else { return nil }
        return bytesPerSecond / Double(bytes)
    }

    /// The verify rate from a `+F2/+F4/+F6` line: the last field is verifications per second.
    private func verifyRate(_ name: String, prefix: String, seconds: Int) -> Double? {
        let output = run(["speed", "-mr", "-seconds", String(seconds), name])
        guard let line = output.split(separator: "\n").first(where: { $0.hasPrefix(prefix) }) else { return nil }
        return line.split(separator: ":").last.flatMap { Double($0) }
    }

    /// Runs openssl with default signal handling: `openssl speed -seconds` stops on SIGALRM, which
    /// Foundation's `Process` leaves blocked in the child (the run would never end).
    private func run(_ arguments: [String]) -> String {
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { return "" }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        posix_spawn_file_actions_adddup2(&actions, fds[1], 1)
        posix_spawn_file_actions_addclose(&actions, fds[0])
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        var empty = sigset_t()
        sigemptyset(&empty)
        var all = sigset_t()
        sigfillset(&all)
        posix_spawnattr_setsigmask(&attributes, &empty)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        defer {
            posix_spawn_file_actions_destroy(&actions)
            posix_spawnattr_destroy(&attributes)
        }
        let argv = (["openssl"] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let status = posix_spawnp(&pid, "openssl", &actions, &attributes, argv, environ)
        close(fds[1])
        defer { close(fds[0]) }
        guard status == 0 else { return "" }
        var output: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = read(fds[0], &buffer, buffer.count)
            if count <= 0 { break }
            output += buffer[0..<count]
        }
        var exitStatus: Int32 = 0
        waitpid(pid, &exitStatus, 0)
        return String(decoding: output, as: UTF8.self)
    }
}

extension String {
    func padding(_ width: Int, left: Bool = false) -> String {
        let pad = String(repeating: " ", count: max(0, width - count))
        return left ? pad + self : self + pad
    }
}
