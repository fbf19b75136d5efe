// SPDX-License-Identifier: Apache-2.0
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import SignetCore
import SignetMiddleware
import SignetStore

/// `POST /signet/v1/pin-reports` (clients report pin failures, and trust documents they refused, to
/// the app's own server, never to a third party) and `GET /signet/v1/pin-reports` (admin token) to read them.
///
/// Reports arrive unauthenticated — the client could not trust the connection it failed on — so
/// each is bounded in size, checked for its shape (``PinReport``) and limited per source; identical
/// reports are counted in one group (host, reason, served pins), a group keeps at most 8 KiB of the
/// report that opened it, and at most `maxPinReportGroups` groups are kept, the least recently seen
/// dropped first. A flood of reports grows a count, not the store.
struct PinReportRoutes<Context: SignetRequestContextProtocol>: Sendable {
    let store: any SignetStorage
    let limiter: SharedSourceLimiter
    let admin: AdminAccess
    let metrics: SignetMetrics
    /// The most groups kept.
    let maximumGroups: Int
    let clock: @Sendable () -> Date

    static var maximumReportBytes: Int { 64 * 1024 }

    /// Receiving reports is for apps; listing them, for operators.
    func add(to router: Router<Context>, surfaces: RouteSurfaces = .all) {
        if surfaces.contains(.client) {
            router.post("/signet/v1/pin-reports") { request, context in
                var request = request
                return try await receive(&request, source: context.clientAddress)
            }
        }
        guard surfaces.contains(.operator) else { return }
        router.get("/signet/v1/pin-reports") { request, context in
            try await admin.authorize(request, source: context.clientAddress, now: clock())
            return try await list()
        }
    }

    private func receive(_ request: inout Request, source: String?) async throws -> Response {
        let now = clock()
        try await limiter.admit(source, now: now, refusing: "too many pin reports from this source")
        let body = try await request.collectBody(upTo: Self.maximumReportBytes, refusing: "a pin report")
        let report = try PinReport(json: Array(buffer: body))
        try await store.recordPinReport(report.record(source: source, at: now), limit: maximumGroups)
        metrics.record(outcome: "pin_report", reason: nil)
        return try JSONResponse.make(["id": report.groupID], status: .created)
    }

    private func list() async throws -> Response {
        let groups = try await store.pinReports(limit: 100)
        let objects: [[String: Any]] = groups.map { group in
            [
                "id": group.id, "hostname": group.hostname, "reason": group.reason,
                "servedPins": group.servedPins.split(separator: " ").map(String.init), "count": group.count,
                "firstSeen": JSONResponse.rfc3339(group.firstSeen), "lastSeen": JSONResponse.rfc3339(group.lastSeen),
                "source": group.source ?? NSNull(),
                "report": (try? JSONSerialization.jsonObject(with: Data(group.json.utf8))) ?? group.json,
            ]
        }
        return try JSONResponse.make(object: ["reports": objects], status: .ok)
    }
}
