// SPDX-License-Identifier: Apache-2.0
import Foundation
import Hummingbird
import HTTPTypes
import NIOCore
import NIOHTTP1
import SignetCore
import SignetMiddleware

/// Where the gateway waits for a request to be complete before anything judges it.
///
/// The invariant: **a request is judged, in every respect, at the moment it is complete** — its
/// signature window, nonce claim, counter, token use, and the configuration in force. A request
/// held open (a slow body, a client that stalls it on purpose) therefore cannot carry the moment
/// its head arrived past the window, nor the configuration of that moment past a reload.
///
/// In order:
/// 1. Behind trusted proxies and over HTTP/2, the client's requests in progress are bounded until
///    their answers are written (``ClientRequestLimiter``).
/// 2. The head is screened where a route needs a signature: no signature, an unparseable one, an
///    unknown key or an owner the route does not admit is refused before a byte of body is
///    buffered (`SignetRequestVerifier.screen`). Passing decides nothing.
/// 3. The body is read, bounded (`maxBodyBytes` on proxied routes, 64 KiB on Signet's own
///    endpoints), and within `requestTimeoutSeconds` of the head (``RequestDeadlineHandler``):
///    `408 request_too_slow` after it, `499 client_closed_request` when the client goes away.
/// 4. Only then is the judging stage chosen — the one in force *now*, after any reload — and the
///    complete request handed to it: Oblivious HTTP, path normalisation, the router and each
///    route's gate read the clock after this point. What it asks of the store must be answered
///    within `storeTimeoutMilliseconds` in all (``StoreBudget``), or it is refused
///    `503 store_unavailable` and never forwarded.
struct RequestCompletionResponder: HTTPResponder {
    typealias Context = SignetRequestContext

    /// Oblivious HTTP, path normalisation and the router of the configuration in force.
    let judging: ReloadableResponder
    /// The proxied routes, where the listener serves them (`nil` on the admin listener).
    let routes: RouteTable?
    let verifier: SignetRequestVerifier
    let maximumBodyBytes: Int
    /// The store's time for a request: for the screen of its head, and from its completion.
    let storeTimeout: Duration
    /// Requests in progress per client, when proxies are trusted (`nil` otherwise).
    let clientRequests: (limiter: ClientRequestLimiter, perClient: Int)?
    let debug: Bool
    let metrics: SignetMetrics
    let clock: @Sendable () -> Date

    /// What Signet's own endpoints read at most: the largest registration (Android's chain).
    static let ownEndpointBodyBytes = SignetRegistrationRoutes<SignetRequestContext>.maximumAndroidRegistrationBytes

    func respond(to request: Request, context: Context) async throws -> Response {
        guard let clientRequests else { return try await complete(request, context: context) }
        let slot: ClientRequestLimiter.Slot
        do {
            slot = try clientRequests.limiter.enter(client: context.clientAddress, limit: clientRequests.perClient)
        } catch let error as SignetError {
            return refuse(error, request, context)
        }
        var response = try await complete(request, context: context)
        // Held until the answer is written: a stream whose reader never reads holds its place.
        // On HTTP/2, until the stream closes — its last frame sent, or reset: a body handed to
        // SwiftNIO is not yet written while the client keeps its window shut.
        if let stream = context.channel, stream.isHTTP2Stream {
            stream.closeFuture.whenComplete { _ in slot.release() }
            return response
        }
        response.body = slot.held(by: response.body)
        return response
    }

    private func complete(_ request: Request, context: Context) async throws -> Response {
        var request = request
        var context = context
        do {
            context.signet.routedPath = try await collect(&request, context: context)
        } catch {
            return refuse(Self.refusal(error, channel: context.channel), request, context)
        }
        context.signet.isComplete = true
        return try await StoreBudget.within(storeTimeout) { try await judging.respond(to: request, context: context) }
    }

    /// Screens the head, then reads the body whole; returns the routed path (normalised once,
    /// here, for the judging stage too).
    private func collect(_ request: inout Request, context: Context) async throws -> String? {
        let received = request.head.path ?? "/"
        // A path that does not normalise is refused by the judging stage, body unread.
        guard let routed = try? RoutingPath.normalize(received) else { return nil }
        let limit: Int
        if let first = routed.split(separator: "/").first, RouteTable.reservedSegments.contains(first.lowercased()) {
            limit = routed.lowercased() == ObliviousGatewayResponder<RouterResponder<Context>>.requestPath
                ? maximumBodyBytes : Self.ownEndpointBodyBytes
        } else {
            limit = maximumBodyBytes
            // A request without a body has nothing to hold back: its gate judges it at once.
            if Self.hasBody(request.head, onHTTP2: context.channel?.isHTTP2Stream == true), let routes,
                let requirement = routes.signature(
                    method: request.method.rawValue,
                    path: routed,
                    deliversKey: Self.deliversKey(request.headers)
                )
            {
                try await StoreBudget.within(storeTimeout) {
                    try await verifier.screen(
                        request,
                        receivedTarget: routed == received ? nil : received,
                        requirement: requirement,
                        now: clock()
                    )
                }
            }
        }
        _ = try await request.collectBody(upTo: limit, refusing: "a request body")
        return routed
    }

    /// Whether `head`'s request has a body still to read, whose head is screened while it comes (on
    /// both paths: ``LoopProxyHandler`` too). HTTP/2 frames a body without either field: there the
    /// methods that carry one are taken to have one.
    static func hasBody(_ head: HTTPRequest, onHTTP2: Bool) -> Bool {
        head.headerFields[.contentLength].map { $0 != "0" }
            ?? (head.headerFields.contains(.transferEncoding) || (onHTTP2 && [.post, .put, .patch].contains(head.method)))
    }

    /// The reason code for what ended the reading of a request.
    static func refusal(_ error: any Error, channel: (any Channel)?) -> SignetError {
        switch error {
        case let error as SignetError:
            return error
        case is RequestDeadlineHandler.RequestDeadlineExceeded:
            return SignetError(.requestTooSlow, "the request's body did not arrive within the server's deadline")
        case HTTPParserError.invalidEOFState, ChannelError.eof, ChannelError.ioOnClosedChannel, is CancellationError:
            return SignetError(.clientClosedRequest, "the client closed the connection before its request was complete")
        case let error as HTTPParserError:
            // The head parsed and the body did not (a transfer coding nobody can frame,
            // `xchunked`): the client's request is wrong, as when its head is.
            return SignetError(.requestInvalid, "the HTTP parser refused the request (\(error))")
        default:
            if channel.map({ !$0.isActive }) ?? false {
                return SignetError(.clientClosedRequest, "the client closed the connection before its request was complete")
            }
            return ProblemResponse.signetError(from: error)
        }
    }

    private func refuse(_ error: SignetError, _ request: Request, _ context: Context) -> Response {
        metrics.recordRefusal(error.code, of: request.head, source: context.clientAddress)
        context.signet.accessRecord?.update { $0.reason = error.code.rawValue }
        var response = ProblemResponse.make(error, debug: debug)
        // A body request refused from its head for its signature learns what would have passed.
        if let fields = verifier.acceptSignature(refusing: error, request) { response.headers.append(contentsOf: fields) }
        // An HTTP/1.1 connection is closed after such an answer; an HTTP/2 stream is reset and its
        // connection serves the others (there `Connection` is malformed: SwiftNIO refuses the
        // answer and Hummingbird ends the whole connection, every other stream with it).
        if error.code == .requestTooSlow || error.code == .clientClosedRequest, context.channel?.isHTTP2Stream != true {
            response.headers[.connection] = "close"
        }
        return response
    }

    /// Whether a request delivers its key (`Signature-Key`) or points to it (`Signature-Agent`).
    static func deliversKey(_ fields: HTTPFields) -> Bool {
        fields[signatureKeyField] != nil || fields[signatureAgentField] != nil
    }

    static let signatureKeyField = HTTPField.Name(SignatureKey.fieldName)!
    static let signatureAgentField = HTTPField.Name(SignatureAgent.fieldName)!
}
