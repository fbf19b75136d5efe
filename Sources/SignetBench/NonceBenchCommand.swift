// SPDX-License-Identifier: Apache-2.0
import ArgumentParser
import Foundation
import Logging
import SignetCore
import SignetPostgres
import SignetSQLite
import SignetStore

/// Nonce claims as the store grows: the cost of the claim every verified request makes, with 10 k
/// to 10 M live claims in the table, on SQLite or PostgreSQL; and, on PostgreSQL, two gateways
/// (two connection pools) claiming at once.
struct NonceBenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "nonces",
        abstract: "Measure nonce claims per second and their latency as the store grows (10 k to 10 M live claims).",
        discussion: """
            Fills the store with live claims (one INSERT … SELECT per million), then at each size makes \
            --claims fresh claims from --concurrency tasks and prints claims/s, p50, p99, the ratio to \
            the first size and the process's resident memory (SQLite holds a digest of each live claim). With --postgres and --two-gateways, also claims from two stores at once. The \
            aim: flat within 20 % from 10 k to 10 M.
            """
    )

    @Option(help: "sqlite (a file in a fresh folder) or postgres (needs --postgres).")
    var store: String = "sqlite"

    @Option(help: "PostgreSQL URL (postgres://user@host:port/db); its nonces table is filled, use a scratch database.")
    var postgres: String?

    @Option(help: "Store sizes, comma-separated, ascending.")
    var sizes: String = "10000,100000,1000000,10000000"

    @Option(help: "Claims measured at each size.")
    var claims: Int = 20_000

    @Option(help: "Tasks claiming at once (a gateway's concurrent requests).")
    var concurrency: Int = 32

    @Flag(help: "PostgreSQL: also measure two stores (two gateways' pools) claiming at once.")
    var twoGateways = false

    struct Run {
        var perSecond: Double
        var p50: Double
        var p99: Double
    }

    func run() async throws {
        var logger = Logger(label: "signet.bench.nonces")
        logger.logLevel = .error
        let sizes = sizes.split(separator: ",").compactMap { Int($0.trimmingCharacters(in: .whitespaces)) }.sorted()
        guard !sizes.isEmpty else { throw ValidationError("--sizes lists no number") }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("signet-nonces-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let opened: any SignetStorage
        let fill: (Int, Int, Date) async throws -> Void
        switch store {
        case "sqlite":
            let sqlite = try await SQLiteStore.open(path: folder.appendingPathComponent("bench.sqlite").path, logger: logger)
            opened = sqlite
            fill = { try await sqlite.fillNoncesForBenchmark(count: $0, first: $1, until: $2) }
        case "postgres":
            guard let postgres else { throw ValidationError("--store postgres needs --postgres URL") }
            let store = try await PostgresStore.connect(url: postgres, logger: logger)
            opened = store
            fill = { try await store.fillNoncesForBenchmark(count: $0, first: $1, until: $2) }
        default:
            throw ValidationError("--store is sqlite or postgres")
        }
        let live = Date().addingTimeInterval(3_600)
        print("nonce claims on \(store), \(claims) claims from \(concurrency) tasks at each size\n")
        print("live claims".padding(14) + "claims/s".padding(12, left: true) + "p50".padding(10, left: true) + "p99".padding(10, left: true) + "   ratio")
        var filled = 0
        var first: Double?
        for size in sizes {
            let started = ContinuousClock.now
            while filled < size {
                let chunk = min(1_000_000, size - filled)
                try await fill(chunk, filled + 1, live)
                filled += chunk
            }
            let fillSeconds = Self.seconds(ContinuousClock.now - started)
            let run = try await Self.measure([opened], claims: claims, concurrency: concurrency, until: live)
            first = first ?? run.perSecond
            print(
                "\(size)".padding(14) + String(format: "%.0f", run.perSecond).padding(12, left: true)
                    + Self.milliseconds(run.p50).padding(10, left: true) + Self.milliseconds(run.p99).padding(10, left: true)
                    + String(format: "   %.2f   (filled in %.0f s", run.perSecond / first!, fillSeconds)
                    + (Self.residentMegabytes().map { String(format: "; resident %.0f MiB)", $0) } ?? ")")
            )
        }
        if twoGateways {
            guard store == "postgres", let postgres else { throw ValidationError("--two-gateways needs --store postgres") }
            let second = try await PostgresStore.connect(url: postgres, logger: logger)
            let one = try await Self.measure([opened], claims: claims, concurrency: concurrency, until: live)
            let two = try await Self.measure([opened, second], claims: claims, concurrency: concurrency, until: live)
            print(
                String(
                    format: "\none gateway: %.0f claims/s; two gateways at once: %.0f claims/s (%.2f×), p99 %@",
                    one.perSecond,
                    two.perSecond,
                    two.perSecond / one.perSecond,
                    Self.milliseconds(two.p99)
                )
            )
            try await second.shutdown()
        }
        try await opened.shutdown()
    }

    /// `claims` fresh claims from `concurrency` tasks per store, spread over `stores` (each a
    /// gateway); every claim must be accepted.
    static func measure(_ stores: [any SignetStorage], claims: Int, concurrency: Int, until expiry: Date) async throws -> Run {
        let tasks = concurrency * stores.count
        let perTask = max(1, claims / tasks)
        let started = ContinuousClock.now
        let latencies = try await withThrowingTaskGroup(of: [Double].self) { group in
            for task in 0..<tasks {
                let store = stores[task % stores.count]
                group.addTask {
                    var latencies: [Double] = []
                    latencies.reserveCapacity(perTask)
                    for _ in 0..<perTask {
                        let began = ContinuousClock.now
                        let now = Date()
                        // Random, as clients make them: numbered nonces go into the index in order
                        // and touch far fewer of its pages.
                        guard try await store.claim(keyID: "bench", nonce: Nonce.random(), until: expiry, now: now) else {
                            throw ValidationError("a fresh nonce was refused as a replay")
                        }
                        latencies.append(seconds(ContinuousClock.now - began))
                    }
                    return latencies
                }
            }
            var all: [Double] = []
            for try await part in group { all += part }
            return all.sorted()
        }
        let elapsed = seconds(ContinuousClock.now - started)
        return Run(
            perSecond: Double(latencies.count) / elapsed,
            p50: latencies[latencies.count / 2],
            p99: latencies[min(latencies.count - 1, latencies.count * 99 / 100)]
        )
    }

    /// This process's resident memory (Linux): SQLite holds its live claims' digests in memory.
    static func residentMegabytes() -> Double? {
        guard let statm = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8),
            let pages = statm.split(separator: " ").dropFirst().first.flatMap({ Double($0) })
        else { return nil }
        return pages * Double(sysconf(Int32(_SC_PAGESIZE))) / 1_048_576
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    static func milliseconds(_ seconds: Double) -> String { String(format: "%.2f ms", seconds * 1000) }
}
