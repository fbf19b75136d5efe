// SPDX-License-Identifier: Apache-2.0
import ArgumentParser
import AsyncHTTPClient
import NIOHTTP1
import ExampleScores
import Foundation
import Logging
import SignetCore
import SignetMiddleware
import SignetServer
import SignetStore
import NIOCore
import NIOPosix

#if canImport(Glibc)
    import Glibc
#endif

struct GatewayBenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "gateway",
        abstract: "Load-test the gateway with wrk: verified requests versus the same gateway passing through.",
        discussion: """
            Starts the example backend and two gateways on loopback (SQLite store): one verifying every \
            request, one with every route open. wrk sends pre-signed POSTs (Ed25519, Content-Digest, a fresh \
            nonce each, so no request is a replay) to each in turn, and the command prints throughput, p50 \
            and p99 latency, the ratio and the added p99. Needs wrk (apt-get install wrk). Build with \
            -c release: `swift run -c release signet-bench gateway`. With `--compare nginx`, nginx as a \
            reverse proxy (one worker) over the same upstream takes the same requests in the same rounds, \
            and each gateway's rate is printed as a share of nginx's and of nginx's bound; run the bench \
            under `taskset -c 0` with `--wrk-cpus 1` so nginx's worker shares the gateway's core.
            """
    )

    @Option(help: "Seconds per run.")
    var duration: Int = 10

    @Option(help: "Open connections.")
    var connections: Int = 32

    @Option(help: "wrk threads.")
    var threads: Int = 1

    @Option(help: "Store of the gateways: sqlite (the embedded default) or memory.")
    var store: String = "sqlite"

    @Option(
        help: """
            Client key: ed25519 or ecdsa-p256-sha256 (registered devices), hmac-sha256 (a shared secret), \
            app-token (a device's ES256 app token on an app-token route, its gate on the event loop); \
            several, comma-separated, or all (the three signatures): each verified in the same rounds.
            """
    )
    var alg: String = "ed25519"

    @Option(help: "An upstream of your own (http://host:port) instead of the in-process example backend.")
    var upstream: String?

    @Option(help: "Run wrk under `taskset -c` with these CPUs, e.g. 1 (with the gateway under `taskset -c 0`).")
    var wrkCpus: String?

    @Flag(help: "The verifying gateway signs its responses (Ed25519).")
    var signResponses = false

    @Option(
        help: """
            Pass-through and verified runs this many times each, in pairs whose order alternates (a \
            shared VM drifts by more than the difference measured); prints every pair and the medians.
            """
    )
    var rounds: Int = 1

    @Option(help: "A peer measured in the same rounds over the same upstream: nginx (a reverse proxy, one worker).")
    var compare: String?

    @Flag(
        help: """
            Run every task on NIO's event loops (Swift's global executor replaced): one thread per core, \
            no hand-off between a loop and Swift's pool. An experiment; `signet serve` does not do it.
            """
    )
    var loopExecutor = false

    /// The client keys `--alg` names, in its order.
    var algs: [String] {
        alg == "all" ? ["hmac-sha256", "ed25519", "ecdsa-p256-sha256"] : alg.split(separator: ",").map { String($0) }
    }

    func validate() throws {
        guard rounds >= 1 else { throw ValidationError("--rounds must be at least 1") }
        let known: Set<String> = ["hmac-sha256", "ed25519", "ecdsa-p256-sha256", Self.appToken]
        guard !algs.isEmpty, algs.allSatisfy(known.contains), Set(algs).count == algs.count else {
            throw ValidationError("--alg is ed25519, ecdsa-p256-sha256, hmac-sha256, app-token, several of them (comma-separated, once each) or all")
        }
        guard compare == nil || compare == "nginx" else { throw ValidationError("--compare takes nginx") }
    }

    func run() async throws {
        EventLoopSizing.applyToSharedEventLoops()
        if loopExecutor, !NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor() {
            throw ValidationError("--loop-executor: NIO's event loops cannot be Swift's global executor on this platform")
        }
        // Logs as `signet serve` writes them by default.
        LoggingSystem.bootstrap(DeferredMetadataLogHandler.standardError)
        var logger = Logger(label: "signet.bench")
        logger.logLevel = .error
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("signet-bench-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }

        let backend = ScoresBackend()
        let backendServer: BackgroundServer? =
            upstream == nil
            ? try await BackgroundServer.start(logger: logger) { backend.application(logger: logger, onServerRunning: $0) }
            : nil
        let upstreamURL = upstream ?? "http://127.0.0.1:\(backendServer?.port ?? 0)"
        let responseKeyFile = folder.appendingPathComponent("response.key.pem").path
        try Data((try SigningKey.generate(.ed25519)).pemRepresentation!.utf8).write(to: URL(fileURLWithPath: responseKeyFile))
        func gateway(open: Bool, name: String) async throws -> RunningGateway {
            var configuration = GatewayConfiguration(upstream: upstreamURL)
            if signResponses, !open { configuration.responseSigning = .init(keyFile: responseKeyFile, keyId: "gateway") }
            configuration.listen.port = 0
            configuration.publicAuthority = "bench.example.com"
            configuration.store =
                self.store == "memory"
                ? .memory : .sqlite(folder.appendingPathComponent("\(name).sqlite").path)
            configuration.routes = [.init(prefix: "/", access: open ? .open : .verified)]
            configuration.sharedSecrets = [.init(keyId: "bench-hmac", secretBase64: Base64.encode(Self.benchSecret))]
            return try await RunningGateway.start(configuration, logger: logger)
        }
        let verifying = try await gateway(open: false, name: "verifying")
        let passing = try await gateway(open: true, name: "passing")
        // App tokens are judged on a gateway of their own: every route there takes a token.
        let tokens: RunningGateway? =
            algs.contains(Self.appToken)
            ? try await RunningGateway.start(
                {
                    var configuration = GatewayConfiguration(upstream: upstreamURL)
                    configuration.listen.port = 0
                    configuration.publicAuthority = "bench.example.com"
                    configuration.store = self.store == "memory" ? .memory : .sqlite(folder.appendingPathComponent("tokens.sqlite").path)
                    configuration.tokens = .init(
                        issuer: "https://bench.example.com", audience: ["bench"], keyFile: folder.appendingPathComponent("tokens.pem").path)
                    configuration.routes = [.init(prefix: "/", access: .appToken)]
                    return configuration
                }(),
                logger: logger
            )
            : nil
        let nginx = compare == nil ? nil : try await NginxReverseProxy(upstream: upstreamURL, folder: folder)
        defer { nginx?.stop() }

        // A registered device (or a configured shared secret) per client key, and one pre-signed
        // request per send; for app tokens, a device's token, the same on every request.
        var signers: [BenchClient] = []
        for (index, alg) in algs.enumerated() {
            if alg == Self.appToken, let tokens {
                signers.append(.token(try await Self.appToken(from: tokens)))
                continue
            }
            let algorithm = try SignatureAlgorithms.standard.require(alg)
            switch alg {
            case "hmac-sha256":
                signers.append(.signer(MessageSigner(key: try SigningKey(secret: Self.benchSecret), keyID: "bench-hmac", algorithm: algorithm)))
            case "ed25519", "ecdsa-p256-sha256":
                let key = try SigningKey.generate(algorithm.keyType)
                let keyID = try await Self.register(key, algorithm: alg, as: "dev_bench_\(index)", in: verifying)
                signers.append(.signer(MessageSigner(key: key, keyID: keyID, algorithm: algorithm)))
            default:
                throw ValidationError("--alg is ed25519, ecdsa-p256-sha256, hmac-sha256, several of them or all")
            }
        }
        let now = Date()
        // One file of pre-signed requests per run that claims nonces, so no request is a replay.
        // Random nonces, as the client SDK makes them: the store's index takes each in a place of
        // its own, where numbered ones went in order and claimed far fewer of SQLite's pages.
        func presign(_ count: Int, prefix: String, signer client: BenchClient) throws -> String {
            var lines: [String] = []
            lines.reserveCapacity(count)
            for index in 0..<count {
                let body = "{\"name\":\"player\(index % 1000)\",\"score\":\(index)}"
                let request = try HTTPMessage.request(
                    method: "POST",
                    uri: "http://bench.example.com/scores",
                    fields: [("Content-Type", "application/json")],
                    body: Array(body.utf8)
                )
                let fields: MessageFields
                switch client {
                case .signer(let signer): fields = try signer.sign(request, created: now, nonce: Nonce.random()).fields
                case .token(let token):
                    var carried = request.fields
                    carried.append(name: "Signet-Token", value: token)
                    fields = carried
                }
                lines.append(([body] + fields.lines.map { "\($0.name): \($0.value)" }).joined(separator: "\t"))
            }
            let file = folder.appendingPathComponent("requests-\(prefix).tsv").path
            try Data(lines.joined(separator: "\n").utf8).write(to: URL(fileURLWithPath: file))
            return file
        }
        let count = min(duration * 15_000, 400_000)
        print("signing \(count) requests per client key for each of \(rounds) round(s), just before it…")
        let warmUpFiles = try signers.enumerated().map { try presign(30_000, prefix: "w\($0.offset)n", signer: $0.element) }
        let script = folder.appendingPathComponent("signed.lua").path
        try Data(Self.luaScript.utf8).write(to: URL(fileURLWithPath: script))

        print(
            "wrk -t\(threads) -c\(connections) -d\(duration)s\(wrkCpus.map { " on CPUs \($0)" } ?? ""), POST /scores signed with \(algs.joined(separator: ", "))"
                + "\(signResponses ? ", responses signed" : ""), same requests for both\n"
        )
        // wrk's run is waited for on NIO's thread pool: it would hold a thread of Swift's pool (or,
        // with `--loop-executor`, an event loop the gateways need) for the whole run.
        func wrk(_ port: Int, seconds: Int, requests: String) async throws -> WrkRun {
            try await NIOThreadPool.singleton.runIfActive {
                try WrkRun(
                    port: port,
                    duration: seconds,
                    connections: connections,
                    threads: threads,
                    script: script,
                    requests: requests,
                    cpus: wrkCpus
                )
            }
        }
        // Warm each up (connections to the upstream, pools, caches, each key) so none pays for it in its run.
        for port in [passing.port] + (nginx.map { [$0.port] } ?? []) {
            _ = try await wrk(port, seconds: 2, requests: warmUpFiles[0])
        }
        // The gateway that judges each client key's requests.
        func judging(_ index: Int) -> Int { algs[index] == Self.appToken ? tokens?.port ?? verifying.port : verifying.port }
        for (index, file) in warmUpFiles.enumerated() { _ = try await wrk(judging(index), seconds: 2, requests: file) }
        print(
            "gateway".padding(32) + "req/s".padding(12, left: true) + "p50".padding(12, left: true)
                + "p99".padding(12, left: true) + "   non-2xx"
        )
        // Per client key: verified / pass-through, the verified rates, the added p99s, refusals.
        var ratios = Array(repeating: [Double](), count: algs.count)
        var verifiedRates = Array(repeating: [Double](), count: algs.count)
        var addedP99s = Array(repeating: [Double](), count: algs.count)
        var refused = Array(repeating: 0, count: algs.count)
        var passThroughRates: [Double] = []
        var nginxRates: [Double] = []
        // Which run: -1 pass-through, -2 nginx, 0… the verified runs, one per client key.
        let runsOfARound = [-1] + Array(algs.indices) + (nginx == nil ? [] : [-2])
        for round in 0..<rounds {
            // Nonces of its own (the verifying gateway accepts each once), and signed just before
            // the round, so no round outlives its signatures' window.
            let requests = try signers.enumerated().map { try presign(count, prefix: "r\(round)a\($0.offset)n", signer: $0.element) }
            // Rotate which goes first, so a drift over the minutes weighs on each alike.
            var open: WrkRun?
            var verified: [Int: WrkRun] = [:]
            var peer: WrkRun?
            var order = runsOfARound
            for _ in 0..<(round % order.count) { order.append(order.removeFirst()) }
            for which in order {
                switch which {
                case -1: open = try await wrk(passing.port, seconds: duration, requests: requests[0])
                case -2: if let nginx { peer = try await wrk(nginx.port, seconds: duration, requests: requests[0]) }
                default: verified[which] = try await wrk(judging(which), seconds: duration, requests: requests[which])
                }
            }
            guard let open, verified.count == algs.count else { continue }
            let label = rounds > 1 ? " \(round + 1)" : ""
            var runs = [("pass-through (open)" + label, open)]
            for index in algs.indices {
                runs.append(("verified" + (algs.count > 1 ? " \(algs[index])" : "") + label, verified[index]!))
            }
            if let peer {
                runs.insert(("nginx (proxy, 1 worker)" + label, peer), at: 0)
                nginxRates.append(peer.requestsPerSecond)
            }
            for (name, run) in runs {
                print(
                    name.padding(32) + String(format: "%.0f", run.requestsPerSecond).padding(12, left: true)
                        + WrkRun.format(run.p50).padding(12, left: true) + WrkRun.format(run.p99).padding(12, left: true)
                        + "   \(run.non2xx)"
                )
            }
            passThroughRates.append(open.requestsPerSecond)
            for (index, run) in verified {
                ratios[index].append(run.requestsPerSecond / open.requestsPerSecond)
                verifiedRates[index].append(run.requestsPerSecond)
                addedP99s[index].append(run.p99 - open.p99)
                refused[index] += run.non2xx
            }
        }
        func median(_ values: [Double]) -> Double {
            let sorted = values.sorted()
            return sorted.count % 2 == 1
                ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
        }
        for (index, alg) in algs.enumerated() where !ratios[index].isEmpty {
            if algs.count > 1 { print("\n\(alg):") }
            if rounds > 1 {
                print((algs.count > 1 ? "" : "\n") + "ratios by round: " + ratios[index].map { String(format: "%.2f", $0) }.joined(separator: ", "))
            }
            print(
                String(
                    format: "\(algs.count > 1 && rounds > 1 ? "" : "\n")verified / pass-through throughput: %.2f; added p99: %@\(rounds > 1 ? " (medians)" : "")",
                    median(ratios[index]),
                    WrkRun.format(median(addedP99s[index]))
                )
            )
            if refused[index] > 0 {
                print("warning: \(refused[index]) verified requests were not accepted (more requests than pre-signed?)")
            }
            let reference = printBound(alg: alg, ratios: ratios[index], passThrough: passThroughRates, median: median)
            if !nginxRates.isEmpty {
                printComparison(
                    nginx: nginxRates, passThrough: passThroughRates, verified: verifiedRates[index], reference: reference, median: median
                )
            }
        }

        try await verifying.stop()
        try await passing.stop()
        try await tokens?.stop()
        await backendServer?.stop()
    }

    /// The physical bound of a verifying gateway on this core: its own proxying plus one verify at
    /// openssl's rate, `1 / (1/pass-through + 1/primitive)`, measured here, in the same minutes and
    /// on the same CPUs as the runs (openssl inherits this process's affinity). Prints each round's
    /// verified throughput as a share of that bound.
    @discardableResult
    func printBound(alg: String, ratios: [Double], passThrough: [Double], median: ([Double]) -> Double) -> OpenSSLSpeed.Reference? {
        // An app token's verify is one ES256 signature (its SHA-256 over a few hundred bytes aside).
        let primitive = alg == Self.appToken ? "ecdsa-p256-sha256" : alg
        guard !ratios.isEmpty, let reference = OpenSSLSpeed().reference(for: primitive, seconds: 3) else {
            print("no openssl reference for \(alg): no bound printed")
            return nil
        }
        // verified / bound = (verified / pass-through) × (1 + pass-through / primitive)
        let shares = zip(ratios, passThrough).map { ratio, open in ratio * (1 + open / reference.rate) }
        let bound = 1 / (1 + median(passThrough) / reference.rate)
        let aim = alg == "hmac-sha256" ? "≥ 0.92 of pass-through" : "≥ 0.95 of the bound"
        print(
            String(
                format: "openssl %@: %.0f/s, so the bound is %.2f of pass-through; verified / bound: %@ (median %.2f; aim %@)",
                reference.work,
                reference.rate,
                bound,
                shares.map { String(format: "%.2f", $0) }.joined(separator: ", "),
                median(shares),
                aim
            )
        )
        return reference
    }

    /// Each round's gateway rates as a share of nginx's in the same round, and the verified rate as
    /// a share of nginx's bound, `1 / (1/nginx + 1/primitive)`: what a perfect proxy verifying at
    /// openssl's speed would do on this core.
    func printComparison(
        nginx: [Double],
        passThrough: [Double],
        verified: [Double],
        reference: OpenSSLSpeed.Reference?,
        median: ([Double]) -> Double
    ) {
        func shares(_ values: [Double], of peer: [Double]) -> String {
            let each = zip(values, peer).map { $0 / $1 }
            return each.map { String(format: "%.2f", $0) }.joined(separator: ", ") + String(format: " (median %.2f)", median(each))
        }
        print("pass-through / nginx: " + shares(passThrough, of: nginx) + "; aim ≥ 0.30")
        print("verified / nginx: " + shares(verified, of: nginx))
        if let reference {
            let bounds = nginx.map { 1 / (1 / $0 + 1 / reference.rate) }
            print(String(format: "nginx's bound with %@: %.0f/s (median); verified / nginx's bound: ", reference.work, median(bounds)) + shares(verified, of: bounds))
        }
    }

    static let benchSecret = Array("signet-bench-shared-secret-32byt".utf8)
    static let appToken = "app-token"

    /// What sends the bench's requests: a signer, or an app token carried as it is.
    enum BenchClient {
        case signer(MessageSigner)
        case token(String)
    }

    /// `key` registered in `gateway`'s store as a device key of `deviceID`, under its thumbprint,
    /// which it returns.
    static func register(_ key: SigningKey, algorithm: String, as deviceID: String, in gateway: RunningGateway) async throws -> String {
        var jwk = key.verificationKey.jwk
        let keyID = try jwk.thumbprint
        jwk.kid = keyID
        try await gateway.store.registerDevice(
            DeviceRecord(
                deviceID: deviceID,
                keyID: keyID,
                algorithm: algorithm,
                publicKeyJWK: jwk.jsonString,
                trustLevel: .deviceKey,
                createdAt: Date()
            )
        )
        return keyID
    }

    /// An app token from `gateway`, asked for as an app does: a device registered in its store
    /// signs `POST /signet/v1/tokens`.
    static func appToken(from gateway: RunningGateway) async throws -> String {
        let key = try SigningKey.generate(.p256)
        let keyID = try await register(key, algorithm: "ecdsa-p256-sha256", as: "dev_bench_token", in: gateway)
        let signer = MessageSigner(key: key, keyID: keyID, algorithm: try SignatureAlgorithms.standard.require("ecdsa-p256-sha256"))
        let signed = try signer.sign(
            try HTTPMessage.request(method: "POST", uri: "http://bench.example.com/signet/v1/tokens"), created: Date(), nonce: Nonce.random())
        var request = HTTPClientRequest(url: "http://127.0.0.1:\(gateway.port)/signet/v1/tokens")
        request.method = .POST
        request.headers.add(name: "Host", value: "bench.example.com")
        for field in signed.fields.lines { request.headers.add(name: field.name, value: field.value) }
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(10))
        let body = try await response.body.collect(upTo: 64 * 1024)
        guard response.status == .created,
            let object = try? JSONSerialization.jsonObject(with: Data(body.readableBytesView)) as? [String: Any],
            let token = object["token"] as? String
        else {
            throw ValidationError("no app token from the bench's gateway: \(response.status) \(String(buffer: body))")
        }
        return token
    }

    /// Each wrk thread takes every n-th pre-signed request, so no two threads send the same nonce.
    static let luaScript = """
        local counter = 0
        function setup(thread)
          thread:set("id", counter)
          counter = counter + 1
        end
        function init(args)
          local threads = tonumber(args[1])
          requests = {}
          local index = 0
          for line in io.lines(args[2]) do
            if index % threads == id then table.insert(requests, line) end
            index = index + 1
          end
          position = 0
        end
        function request()
          position = position + 1
          if position > #requests then position = 1 end
          local fields = {}
          for field in string.gmatch(requests[position], "[^\\t]+") do table.insert(fields, field) end
          local headers = {}
          for k = 2, #fields do
            local name, value = string.match(fields[k], "^([^:]+): (.*)$")
            headers[name] = value
          end
          return wrk.format("POST", "/scores", headers, fields[1])
        end
        """
}

/// One wrk run and the figures read from its output.
struct WrkRun {
    var requestsPerSecond: Double
    var p50: Double
    var p99: Double
    var non2xx: Int

    init(port: Int, duration: Int, connections: Int, threads: Int, script: String, requests: String, cpus: String?) throws {
        let output = try Self.run(cpus: cpus, [
            "-t\(threads)", "-c\(connections)", "-d\(duration)s", "--latency", "-s", script,
            "http://127.0.0.1:\(port)/scores", "--", String(threads), requests,
        ])
        func value(after prefix: String) -> Substring? {
            output.split(separator: "\n").first { $0.trimmingCharacters(in: .whitespaces).hasPrefix(prefix) }?
                .trimmingCharacters(in: .whitespaces).dropFirst(prefix.count).drop(while: { $0 == " " })
        }
        guard let rps = value(after: "Requests/sec:").flatMap({ Double($0) }) else {
            throw ValidationError("unexpected wrk output:\n\(output)")
        }
        requestsPerSecond = rps
        p50 = value(after: "50%").map { Self.seconds(String($0)) } ?? .nan
        p99 = value(after: "99%").map { Self.seconds(String($0)) } ?? .nan
        non2xx = value(after: "Non-2xx or 3xx responses:").flatMap { Int($0) } ?? 0
    }

    static func seconds(_ text: String) -> Double {
        let number = Double(text.prefix { $0.isNumber || $0 == "." }) ?? .nan
        if text.hasSuffix("us") { return number / 1e6 }
        if text.hasSuffix("ms") { return number / 1e3 }
        if text.hasSuffix("m") { return number * 60 }
        return number
    }

    static func format(_ seconds: Double) -> String {
        abs(seconds) < 1e-3 ? String(format: "%.0f µs", seconds * 1e6) : String(format: "%.2f ms", seconds * 1e3)
    }

    private static func run(cpus: String?, _ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = (cpus.map { ["taskset", "-c", $0] } ?? []) + ["wrk"] + arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw ValidationError(
                "wrk failed (is it installed? apt-get install wrk):\n\(String(decoding: data, as: UTF8.self))"
            )
        }
        return String(decoding: data, as: UTF8.self)
    }
}
