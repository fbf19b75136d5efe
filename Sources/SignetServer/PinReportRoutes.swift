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
/// each is bounded in size, checked for the HPKP/TrustKit shape, and limited per source.
struct PinReportRoutes<Context: SignetRequestContextProtocol>: Sendable {
    let store: any SignetStorage
    let limiter: SourceRateLimiter
    let admin: AdminAccess
    let metrics: SignetMetrics
    let clock: @Sendable () -> Date

    static var maximumReportBytes: Int { 64 * 1024 }

    func add(to router: Router<Context>) {
        router.post("/signet/v1/pin-reports") { request, context in
            var request = request
            return try await receive(&request, source: context.clientAddress)
        }
        router.get("/signet/v1/pin-reports") { request, context in
            try admin.authorize(request, source: context.clientAddress, now: clock())
            return try await list()
        }
    }

    private func receive(_ request: inout Request, source: String?) async throws -> Response {
        let now = clock()
        try limiter.admit(source, now: now, refusing: "too many pin reports from this source")
        let body = try await request.collectBody(upTo: Self.maximumReportBytes, refusing: "a pin report")
        let bytes = Array(buffer: body)
        guard let object = try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any] else {
            throw SignetError(.malformedMessage, "a pin report is a JSON object")
        }
        // Two kinds: a pin failure (HPKP/TrustKit shape), or a trust document the client refused.
        let refusedTrust = object["type"] as? String == "trust_update_refused"
        // A `type` that is not text is no report of either kind (schemathesis found one accepted).
        guard let hostname = object["hostname"] as? String, !hostname.isEmpty, hostname.utf8.count <= 253,
            object["type"] == nil || object["type"] is String,
            refusedTrust
                ? object["reason"] is String
                : object["known-pins"] is [Any] && object["served-certificate-chain"] is [Any]
        else {
            throw SignetError(
                .malformedMessage,
                "a pin report needs hostname, known-pins and served-certificate-chain (HPKP/TrustKit shape), or type trust_update_refused with hostname and reason"
            )
        }
        let id = "pr_" + Nonce.random()
        try await store.storePinReport(
            PinReportRecord(
                id: id,
                receivedAt: now,
                hostname: hostname,
                source: source,
                json: String(decoding: bytes, as: UTF8.self)
            )
        )
        metrics.record(outcome: "pin_report", reason: nil)
        return try JSONResponse.make(["id": id], status: .created)
    }

    private func list() async throws -> Response {
        let reports = try await store.pinReports(limit: 100)
        let objects: [[String: Any]] = reports.map { report in
            [
                "id": report.id, "receivedAt": JSONResponse.rfc3339(report.receivedAt),
                "hostname": report.hostname, "source": report.source ?? NSNull(),
                "report": (try? JSONSerialization.jsonObject(with: Data(report.json.utf8))) ?? report.json,
            ]
        }
        let data = try JSONSerialization.data(withJSONObject: ["reports": objects], options: [.sortedKeys])
        var headers = HTTPTypes.HTTPFields()
        headers[.contentType] = "application/json"
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }
}
