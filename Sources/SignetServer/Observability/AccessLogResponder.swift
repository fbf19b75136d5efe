// SPDX-License-Identifier: Apache-2.0
import Foundation
import Hummingbird
import Logging
import SignetCore
import SignetMiddleware

/// One structured line per request, and the metrics that go with it: method, route, status, reason
/// code, who (key id, trust level, device, user), the upstream's status and latency, the total
/// latency, the client's address.
///
/// Never the path beyond its route (queries carry legacy MACs and tokens), a field value, a
/// signature, a token, a password or a body: what is logged is named here, field by field.
/// Sits just inside ``ClientAddressResponder`` (which names the client) and outside everything
/// that can refuse a request, so refusals are logged as accepted requests are.
struct AccessLogResponder<Inner: HTTPResponder>: HTTPResponder where Inner.Context: SignetRequestContextProtocol {
    typealias Context = Inner.Context
    let inner: Inner
    let logger: Logger
    let metrics: SignetMetrics
    /// The route a routed path belongs to: a configured prefix, or one of Signet's own endpoints.
    let route: @Sendable (_ method: String, _ routedPath: String) -> String

    func respond(to request: Request, context: Context) async throws -> Response {
        var context = context
        var request = request
        let record = AccessRecord()
        context.signet.accessRecord = record
        let correlation = RequestCorrelation(request.headers)
        // Made here, it goes upstream with the request (a new field: no signature covers it).
        if correlation.isNew {
            var head = request.head
            head.headerFields[RequestCorrelation.requestIDField] = correlation.requestID
            request = Request(head: head, body: request.body)
        }
        let started = ContinuousClock.now
        let response: Response
        do {
            response = try await inner.respond(to: request, context: context)
        } catch {
            // Below, errors become problem answers; one that escapes is Hummingbird's to render.
            log(request, status: (error as? any HTTPResponseError)?.status.code ?? 500, record, started, context, correlation)
            throw error
        }
        log(request, status: response.status.code, record, started, context, correlation)
        return response
    }

    private func log(
        _ request: Request,
        status: Int,
        _ record: AccessRecord,
        _ started: ContinuousClock.Instant,
        _ context: Context,
        _ correlation: RequestCorrelation
    ) {
        let elapsed = ContinuousClock.now - started
        let fields = record.snapshot
        // A path nothing answers is one label, however many of them a scanner tries; one that did
        // not normalise was refused before routing (Oblivious HTTP's exact paths are named by theirs).
        let route: String
        if fields.reason == SignetError.Code.notFound.rawValue {
            route = "(none)"
        } else if let routed = fields.routedPath {
            route = self.route(request.method.rawValue, routed)
        } else if fields.reason == SignetError.Code.pathAmbiguous.rawValue {
            route = "(refused)"
        } else {
            route = self.route(request.method.rawValue, request.uri.path)
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
        guard logger.logLevel <= .info else { return }
        // Numbers as numbers (`--log-format json` writes them so), strings as strings.
        var metadata: Logger.Metadata = [
            "method": "\(request.method.rawValue)",
            "route": "\(route)",
            "status": .stringConvertible(status),
            "total_ms": .stringConvertible(Milliseconds(elapsed)),
            "request_id": "\(correlation.requestID)",
        ]
        if let trace = RequestCorrelation.traceID(request.headers) { metadata["trace_id"] = "\(trace)" }
        if let reason = fields.reason { metadata["reason"] = "\(reason)" }
        if let client = context.clientAddress { metadata["client"] = "\(client)" }
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
}

/// A latency in milliseconds with three decimals (enough to tell a store round trip from a
/// verify): the text is the same in either log format, and JSON writes it as a number.
struct Milliseconds: CustomStringConvertible, JSONLogNumber, Sendable {
    let value: Double

    init(_ duration: Duration) {
        self.init(seconds: Double(SignetMetrics.nanoseconds(duration)) / 1e9)
    }

    init(seconds: Double) {
        value = (seconds * 1_000_000).rounded() / 1000
    }

    var description: String { String(format: "%.3f", value) }
    var jsonNumber: Double { value }
}
