// SPDX-License-Identifier: Apache-2.0
import Foundation
import HTTPTypes
import Logging
import SignetCore
import SignetMiddleware

/// One structured line per request, and the metrics that go with it: method, route, status, reason
/// code, who (key id, trust level, device, user), the upstream's status and latency, the total
/// latency, the client's address. Written for requests Hummingbird answers
/// (``AccessLogResponder``) and for those the event-loop data plane answers alike.
///
/// Never the path beyond its route (queries carry legacy MACs and tokens), a field value, a
/// signature, a token, a password or a body: what is logged is named here, field by field.
struct AccessLog: Sendable {
    let logger: Logger
    let metrics: SignetMetrics
    /// The route a routed path belongs to: a configured prefix, or one of Signet's own endpoints.
    let route: @Sendable (_ method: String, _ routedPath: String) -> String

    /// Records the exchange of the request `head`, answered `status`, begun at `started`.
    func write(
        _ head: HTTPRequest,
        status: Int,
        _ fields: AccessRecord.Fields,
        since started: ContinuousClock.Instant,
        client: String?,
        _ correlation: RequestCorrelation
    ) {
        let elapsed = ContinuousClock.now - started
        let method = head.method.rawValue
        // A path nothing answers is one label, however many of them a scanner tries; one that did
        // not normalise was refused before routing (Oblivious HTTP's exact paths are named by theirs).
        let route: String
        if fields.reason == SignetError.Code.notFound.rawValue {
            route = "(none)"
        } else if let routed = fields.routedPath {
            route = self.route(method, routed)
        } else if fields.reason == SignetError.Code.pathAmbiguous.rawValue {
            route = "(refused)"
        } else {
            route = self.route(method, Self.path(of: head))
        }
        metrics.recordExchange(
            route: route,
            status: status,
            reason: fields.reason,
            duration: elapsed,
            upstreamStatus: fields.upstreamStatus,
            upstreamDuration: fields.upstreamSeconds.map { .nanoseconds(Int64($0 * 1e9)) }
        )
        if let verdict = fields.verdict, verdict != "accepted" { metrics.recordWouldRefuse(route: route, reason: verdict) }
        // Nothing of the line is made where it would not be written.
        guard logger.logLevel <= .info else { return }
        // Numbers as numbers (`--log-format json` writes them so), strings as strings.
        var metadata: Logger.Metadata = [
            "method": "\(method)",
            "route": "\(route)",
            "status": .stringConvertible(status),
            "total_ms": .stringConvertible(Milliseconds(elapsed)),
            "request_id": "\(correlation.requestID)",
        ]
        if let trace = RequestCorrelation.traceID(head.headerFields) { metadata["trace_id"] = "\(trace)" }
        if let reason = fields.reason { metadata["reason"] = "\(reason)" }
        if let client { metadata["client"] = "\(client)" }
        if let identity = fields.identity {
            metadata["keyid"] = "\(identity.keyID)"
            metadata["trust"] = "\(identity.trustLevel.rawValue)"
            if let device = identity.deviceID { metadata["device"] = "\(device)" }
            if let user = identity.user { metadata["user"] = "\(user)" }
        }
        if let verdict = fields.verdict { metadata["verdict"] = "\(verdict)" }
        if let upstream = fields.upstreamStatus { metadata["upstream_status"] = .stringConvertible(upstream) }
        if let seconds = fields.upstreamSeconds { metadata["upstream_ms"] = .stringConvertible(Milliseconds(seconds: seconds)) }
        logger.info("request", metadata: metadata)
    }

    /// The request's path without its query, as Hummingbird's `uri.path` reads it.
    static func path(of head: HTTPRequest) -> String {
        let target = head.path ?? "/"
        return String(target.prefix { $0 != "?" })
    }
}
