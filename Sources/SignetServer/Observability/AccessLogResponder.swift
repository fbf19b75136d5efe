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
    let log: AccessLog

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
            let status = (error as? any HTTPResponseError)?.status.code ?? 500
            log.write(request.head, status: status, record.snapshot, since: started, client: context.clientAddress, correlation)
            throw error
        }
        log.write(request.head, status: response.status.code, record.snapshot, since: started, client: context.clientAddress, correlation)
        return response
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
