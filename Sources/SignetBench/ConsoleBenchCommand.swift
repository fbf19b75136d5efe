// SPDX-License-Identifier: Apache-2.0
import ArgumentParser
import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import SignetCore
import SignetServer
import SignetStore

/// The operator console on a large store: how long each page takes, over real HTTP, with the data a
/// busy deployment keeps (devices, a week of refusals, pin reports, two days of minute counts).
struct ConsoleBenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "console",
        abstract: "Time the operator console's pages on a store with many devices and refusals.",
        discussion: """
            Fills a store through its public API (devices with real Ed25519 keys, users, refusals spread \
            over six days, pin reports, per-minute counts for two days), starts a gateway on loopback with \
            the console, signs in, and requests each page in turn over keep-alive HTTP, printing p50, p95 \
            and the largest time per page. The store is filled once and kept with --keep, so a second run \
            with --reuse times a warm file. `swift run -c release signet-bench console`.
            """
    )

    @Option(help: "Registered devices.")
    var devices: Int = 100_000

    @Option(help: "Refusals kept (the store keeps at most 1,000,000).")
    var refusals: Int = 1_000_000

    @Option(help: "Pin reports.")
    var pinReports: Int = 10_000

    @Option(help: "Requests per page (after 10 unmeasured).")
    var samples: Int = 200

    @Option(help: "Store: sqlite (the embedded default), memory, or a postgres:// URL.")
    var store: String = "sqlite"

    @Option(help: "The SQLite file to fill (or, with --reuse, to read); a temporary one by default.")
    var file: String?

    @Flag(help: "Time an already filled --file instead of filling one.")
    var reuse = false

    @Option(help: "p95 aim in milliseconds: the command fails when a page is slower.")
    var aim: Double = 100

    func run() async throws {
        EventLoopSizing.applyToSharedEventLoops()
        var logger = Logger(label: "signet.bench")
        logger.logLevel = .error
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("signet-console-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }

        var configuration = GatewayConfiguration(upstream: "http://127.0.0.1:9")
        configuration.listen.port = 0
        configuration.adminToken = "bench-admin-token-of-at-least-32-characters"
        configuration.routes = [.init(prefix: "/", access: .verified)]
        switch store {
        case "memory": configuration.store = .memory
        case "sqlite": configuration.store = .sqlite(file ?? folder.appendingPathComponent("console.sqlite").path)
        case let url where url.hasPrefix("postgres"): configuration.store = .postgres(url)
        default: throw ValidationError("--store is sqlite, memory or a postgres:// URL")
        }
        if reuse, file == nil { throw ValidationError("--reuse needs --file") }

        let gateway = try await RunningGateway.start(configuration, logger: logger)
        let plan = FillPlan(devices: devices, refusals: refusals, pinReports: pinReports, now: Date())
        if !reuse {
            let started = ContinuousClock.now
            try await plan.fill(gateway.store)
            print("filled \(store): \(devices) devices, \(refusals) refusals, \(pinReports) pin reports in \(started.duration(to: .now))")
        }

        let client = HTTPClient(
            eventLoopGroupProvider: .singleton,
            configuration: .init(redirectConfiguration: .disallow)
        )
        do {
            let base = "http://127.0.0.1:\(gateway.port)/signet/admin"
            let cookie = try await Self.signIn(client, base: base, token: configuration.adminToken!)
            let sample = try await plan.probe(gateway.store)
            let pages: [(String, String)] = [
                ("overview (charts, last day)", "/overview"),
                ("devices, first page", "/devices"),
                ("devices, page at the middle", "/devices?after=\(sample.middleCursor)"),
                ("devices, search by device id", "/devices?q=\(sample.deviceID)"),
                ("devices, search by key id", "/devices?q=\(sample.keyID)"),
                ("devices, search by user", "/devices?q=\(sample.user)"),
                ("device detail", "/devices/\(sample.deviceID)"),
                ("refusals, latest", "/refusals"),
                ("refusals, page at the middle", "/refusals?before=\(sample.middleRefusal)"),
                ("refusals, rarest reason", "/refusals?reason=\(FillPlan.reasons.last!)"),
                ("pin reports (hosts, latest)", "/pin-reports"),
                ("pin report detail", "/pin-reports/\(sample.pinReportID)"),
                ("keys", "/keys"),
                ("audit log", "/audit"),
            ]
            print("")
            print("| page | p50 | p95 | max | bytes |")
            print("|---|---:|---:|---:|---:|")
            var slow: [String] = []
            for (name, path) in pages {
                let timing = try await Self.time(client, url: base + path, cookie: cookie, samples: samples)
                print(
                    "| \(name) | \(Self.millis(timing.p50)) | \(Self.millis(timing.p95)) | \(Self.millis(timing.max)) | \(timing.bytes) |"
                )
                if timing.p95 * 1_000 > aim { slow.append(name) }
            }
            try await client.shutdown()
            try await gateway.stop()
            if !slow.isEmpty {
                throw ValidationError("p95 above \(Int(aim)) ms: \(slow.joined(separator: ", "))")
            }
        } catch {
            try? await client.shutdown()
            try? await gateway.stop()
            throw error
        }
    }

    static func signIn(_ client: HTTPClient, base: String, token: String) async throws -> String {
        var request = HTTPClientRequest(url: base + "/sign-in")
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
        request.body = .bytes(ByteBuffer(string: "token=\(token)"))
        let response = try await client.execute(request, timeout: .seconds(10))
        guard response.status == .seeOther, let cookie = response.headers.first(name: "Set-Cookie")?.split(separator: ";").first
        else { throw ValidationError("sign-in answered \(response.status)") }
        return String(cookie)
    }

    struct Timing {
        var p50: Double
        var p95: Double
        var max: Double
        var bytes: Int
    }

    static func time(_ client: HTTPClient, url: String, cookie: String, samples: Int) async throws -> Timing {
        var request = HTTPClientRequest(url: url)
        request.headers.add(name: "Cookie", value: cookie)
        var seconds: [Double] = []
        var bytes = 0
        for index in 0..<(samples + 10) {
            let started = ContinuousClock.now
            let response = try await client.execute(request, timeout: .seconds(30))
            let body = try await response.body.collect(upTo: 16 << 20)
            let elapsed = started.duration(to: .now)
            // A page that redirects to sign-in or refuses would time the wrong thing.
            guard response.status == .ok else { throw ValidationError("\(url) answered \(response.status)") }
            bytes = body.readableBytes
            if index >= 10 {
                seconds.append(Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
            }
        }
        seconds.sort()
        let rank = { (quantile: Double) in seconds[min(seconds.count - 1, Int((Double(seconds.count) * quantile).rounded(.up)) - 1)] }
        return Timing(p50: rank(0.5), p95: rank(0.95), max: seconds.last ?? 0, bytes: bytes)
    }

    static func millis(_ seconds: Double) -> String { String(format: "%.2f ms", seconds * 1_000) }
}

/// What the console benchmark writes into a store, and how it finds its sample rows again.
struct FillPlan {
    var devices: Int
    var refusals: Int
    var pinReports: Int
    var now: Date

    static let users = 1_000
    /// Refusal reasons by share: most are missing signatures, a few are replays.
    static let reasons = ["signature_missing", "signature_invalid", "key_unknown", "nonce_replayed"]
    static let reasonShares = [0.6, 0.25, 0.1, 0.05]

    func fill(_ store: any SignetStorage) async throws {
        let hour = Date(timeIntervalSince1970: (now.timeIntervalSince1970 / 3_600).rounded(.down) * 3_600)
        for index in 0..<Self.users {
            _ = try await store.putAccount(
                AccountRecord(
                    name: Self.user(index), realm: "bench", basicHash: nil, digests: [:], createdAt: hour, updatedAt: hour
                )
            )
        }
        // Devices registered one a second over the last `devices` seconds, every tenth with a user.
        var lastSeen: [String: Date] = [:]
        for index in 0..<devices {
            let key = try SigningKey.generate(.ed25519)
            var jwk = key.verificationKey.jwk
            let keyID = try jwk.thumbprint
            jwk.kid = keyID
            let created = now.addingTimeInterval(-Double(devices - index))
            try await store.registerDevice(
                DeviceRecord(
                    deviceID: Self.device(index),
                    keyID: keyID,
                    algorithm: "ed25519",
                    publicKeyJWK: jwk.jsonString,
                    trustLevel: .deviceKey,
                    createdAt: created,
                    attributes: ["environment": "production"],
                    user: index % 10 == 0 ? Self.user(index / 10 % Self.users) : nil
                )
            )
            lastSeen[Self.device(index)] = created.addingTimeInterval(30)
            if lastSeen.count == 10_000 {
                try await store.recordActivity(counts: [], refusals: [], lastSeen: lastSeen)
                lastSeen = [:]
            }
        }
        try await store.recordActivity(counts: [], refusals: [], lastSeen: lastSeen)

        // Refusals over the last six days, oldest first (ids follow time, as they do live).
        let span = 6 * 86_400.0
        var batch: [RefusalRecord] = []
        for index in 0..<refusals {
            let reason = Self.reason(index)
            batch.append(
                RefusalRecord(
                    at: now.addingTimeInterval(-span + span * Double(index) / Double(max(refusals, 1))),
                    reason: reason,
                    status: reason == "nonce_replayed" ? 409 : 401,
                    method: "POST",
                    path: "/scores",
                    keyID: index % 3 == 0 ? nil : "key-\(index % 5_000)",
                    source: "10.0.\(index % 256).\(index / 256 % 256)"
                )
            )
            if batch.count == 10_000 {
                try await store.recordActivity(counts: [], refusals: batch, lastSeen: [:])
                batch = []
            }
        }
        try await store.recordActivity(counts: [], refusals: batch, lastSeen: [:])

        // Two days of minute counts: accepted, and each reason.
        let lastMinute = ActivityCount.minute(of: now)
        var counts: [ActivityCount] = []
        for minute in (lastMinute - 2 * 1_440 + 1)...lastMinute {
            counts.append(ActivityCount(minute: minute, outcome: "accepted", count: 600 + Int(minute % 97)))
            for (offset, reason) in Self.reasons.enumerated() {
                counts.append(ActivityCount(minute: minute, outcome: "rejected", reason: reason, count: 1 + Int((minute + Int64(offset)) % 13)))
            }
        }
        try await store.recordActivity(counts: counts, refusals: [], lastSeen: [:])

        // Groups of pin reports from 50 hosts, one opened a minute.
        for index in 0..<pinReports {
            let host = "api\(index % 50).example.com"
            let seen = now.addingTimeInterval(-Double(pinReports - index) * 60)
            try await store.recordPinReport(
                PinReportRecord(
                    id: Self.pinReport(index),
                    hostname: host,
                    reason: "no-matching-pin",
                    servedPins: "sha256/\(index)",
                    firstSeen: seen,
                    lastSeen: seen,
                    source: "10.1.0.\(index % 256)",
                    json: """
                        {"hostname":"\(host)","port":443,"served-certificate-chain":["-----BEGIN CERTIFICATE-----\\nMIIB\\n-----END CERTIFICATE-----"],"known-pins":["pin-sha256=\\"47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=\\""]}
                        """
                ),
                limit: .max
            )
        }
    }

    struct Sample {
        var deviceID: String
        var keyID: String
        var user: String
        var middleCursor: String
        var middleRefusal: Int64
        var pinReportID: String
    }

    /// Rows to ask for, read back from the store (so a --reuse run finds them too).
    func probe(_ store: any SignetStorage) async throws -> Sample {
        let middle = devices / 2
        guard let device = try await store.device(id: Self.device(middle)) else {
            throw ValidationError("the store has no \(Self.device(middle)): fill it with the same --devices")
        }
        let latest = try await store.refusals(reason: nil, before: nil, limit: 1).first?.id ?? 0
        return Sample(
            deviceID: device.deviceID,
            keyID: device.keyID,
            user: Self.user(middle / 10 % Self.users),
            middleCursor: DeviceListing.Cursor(createdAt: device.createdAt, deviceID: device.deviceID).text,
            middleRefusal: latest - Int64(refusals / 2),
            pinReportID: Self.pinReport(pinReports / 2)
        )
    }

    static func device(_ index: Int) -> String { String(format: "dev_%07d", index) }
    static func user(_ index: Int) -> String { "user\(index)" }
    static func pinReport(_ index: Int) -> String { String(format: "pin_%07d", index) }

    static func reason(_ index: Int) -> String {
        let position = Double(index % 100) / 100
        var total = 0.0
        for (reason, share) in zip(reasons, reasonShares) {
            total += share
            if position < total { return reason }
        }
        return reasons.last!
    }
}
