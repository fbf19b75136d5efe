// SPDX-License-Identifier: Apache-2.0
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import SignetMiddleware
import SignetStore
import Synchronization

/// `GET /readyz`: whether this instance can serve — its store answers and its upstream accepts a
/// connection — for a load balancer or an orchestrator to route by; `/healthz` says only that the
/// process is up.
///
/// Answered from a result at most a second old, and probes that arrive while a check runs wait for
/// it: a flood of probes costs the store and the upstream one check a second, not one each.
final class Readiness: Sendable {
    struct Report: Sendable {
        var store: Bool
        var upstream: Bool
        var at: ContinuousClock.Instant
        var ready: Bool { store && upstream }
    }

    private let store: any SignetStorage
    private let upstream: any UpstreamTransport
    private let checks = Mutex<(latest: Report?, running: Task<Report, Never>?)>((nil, nil))
    static let freshFor: Duration = .seconds(1)
    /// How long the store and the upstream each have to answer a probe.
    static let probeTimeout: Duration = .seconds(2)

    init(store: any SignetStorage, upstream: any UpstreamTransport) {
        self.store = store
        self.upstream = upstream
    }

    func report() async -> Report {
        let task = checks.withLock { checks -> Task<Report, Never> in
            if let running = checks.running { return running }
            if let latest = checks.latest, ContinuousClock.now - latest.at < Self.freshFor {
                return Task { latest }
            }
            let check = Task { [store, upstream] in
                // Bounded as a request's operations are: a probe answers within probeTimeout.
                async let storeAnswers = (try? await StoreBudget.within(Self.probeTimeout) { try await store.ping() }) != nil
                async let upstreamAnswers = (try? await upstream.probe(timeout: TimeAmount(Self.probeTimeout))) != nil
                return Report(store: await storeAnswers, upstream: await upstreamAnswers, at: ContinuousClock.now)
            }
            checks.running = check
            return check
        }
        let report = await task.value
        checks.withLock { checks in
            if checks.running == task {
                checks.running = nil
                checks.latest = report
            }
        }
        return report
    }

    func response() async throws -> Response {
        let report = await report()
        return try JSONResponse.make(
            [
                "status": report.ready ? "ready" : "unavailable",
                "store": report.store ? "ok" : "unavailable",
                "upstream": report.upstream ? "ok" : "unreachable",
            ],
            status: report.ready ? .ok : .serviceUnavailable
        )
    }
}
