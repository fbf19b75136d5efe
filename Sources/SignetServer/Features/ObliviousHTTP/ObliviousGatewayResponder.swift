// SPDX-License-Identifier: Apache-2.0
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import SignetCore
import SignetMiddleware

/// `GET /signet/v1/ohttp-keys` and `POST /signet/v1/ohttp` (RFC 9458, sent straight to the gateway),
/// in front of the gateway's own responder.
///
/// An encapsulated request is opened, its encapsulated key claimed once (replays refused), and the
/// Binary HTTP request inside goes through the very responder every plain request goes through —
/// path normalisation, route table, signature, digest, nonce, trust level, proxy, response signing.
/// Its answer, refusals included, travels back encapsulated; only refusals before decapsulation are
/// plain problem+json. The inner responder has no OHTTP endpoint, so requests cannot nest.
struct ObliviousGatewayResponder<Inner: HTTPResponder>: HTTPResponder where Inner.Context: SignetRequestContextProtocol {
    typealias Context = Inner.Context

    let inner: Inner
    /// `nil`: Oblivious HTTP is off, and both paths fall through to the inner responder (404).
    let keys: OHTTPKeySet?
    let replay: any NonceStore
    let replayWindow: TimeInterval
    let failures: SharedSourceLimiter
    /// Every encapsulated request counts: each that opens writes its `enc` to the store.
    let requests: SharedSourceLimiter
    let maximumRequestBytes: Int
    let maximumResponseBytes: Int
    let debug: Bool
    let metrics: SignetMetrics
    let clock: @Sendable () -> Date

    static var keysPath: String { "/signet/v1/ohttp-keys" }
    static var requestPath: String { "/signet/v1/ohttp" }

    func respond(to request: Request, context: Context) async throws -> Response {
        guard let keys else { return try await inner.respond(to: request, context: context) }
        switch (request.method, request.head.path) {
        case (.get, Self.keysPath):
            var headers = HTTPFields()
            headers[.contentType] = "application/ohttp-keys"
            headers[.cacheControl] = "max-age=300"
            let list = OHTTPKeyConfiguration.encodeList(keys.active(at: clock()).map(\.configuration))
            return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: list)))
        case (.post, Self.requestPath):
            do {
                return try await oblivious(request, context: context, keys: keys)
            } catch {
                let refusal = ProblemResponse.signetError(from: error)
                metrics.record(outcome: "rejected", reason: refusal.code.rawValue)
                return ProblemResponse.make(refusal, debug: debug)
            }
        default:
            return try await inner.respond(to: request, context: context)
        }
    }

    private func oblivious(_ request: Request, context: Context, keys: OHTTPKeySet) async throws -> Response {
        let now = clock()
        let source = context.clientAddress
        try await failures.check(source, now: now, refusing: "too many requests from this source failed to decapsulate")
        try await requests.admit(source, now: now, refusing: "too many encapsulated requests from this source")
        guard request.mediaType == "message/ohttp-req" else {
            throw SignetError(.malformedMessage, "an encapsulated request has Content-Type message/ohttp-req")
        }
        var request = request
        let body = try await request.collectBody(upTo: maximumRequestBytes, refusing: "an encapsulated request")
        let opened: ObliviousRequest
        do {
            opened = try ObliviousRequest(decapsulating: Array(buffer: body), keys: keys.active(at: now))
        } catch let error as SignetError where error.code == .decapsulationFailed {
            await failures.record(source, now: now)
            throw error
        }
        // Anyone can encrypt to a public key, so this is not authentication; it stops a captured
        // encapsulation from being played again, also through another instance sharing the store.
        let fresh = try await replay.claim(
            keyID: "ohttp-encapsulation",
            nonce: Base64.urlEncode(opened.encapsulatedKey),
            until: now.addingTimeInterval(replayWindow),
            now: now
        )
        guard fresh else { throw SignetError(.encapsulationReplayed, "this encapsulated request was received before") }

        var answer: Response
        do {
            let message = try BinaryHTTPMessage(decoding: opened.message)
            var innerContext = context
            innerContext.signet = SignetRequestState()
            // The client is who sent the encapsulation: behind trusted proxies, the address they
            // named, never the balancer's (per-source limits, logins, forwarding fields).
            innerContext.signet.clientAddress = context.signet.clientAddress
            answer = try await inner.respond(to: Self.correlated(try Self.request(from: message)), context: innerContext)
        } catch {
            answer = ProblemResponse.make(ProblemResponse.signetError(from: error), debug: debug)
        }
        let binary: BinaryHTTPMessage
        do {
            binary = try await Self.binaryResponse(answer, limit: maximumResponseBytes)
        } catch {
            let refusal = ProblemResponse.signetError(from: error)
            binary = try await Self.binaryResponse(ProblemResponse.make(refusal, debug: debug), limit: maximumResponseBytes)
        }
        var headers = HTTPFields()
        headers[.contentType] = "message/ohttp-res"
        headers[.cacheControl] = "no-store"
        let sealed = try opened.encapsulateResponse(binary.encoded())
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: sealed)))
    }

    /// The inner request with an `X-Request-Id` the upstream can log: the client's own when it put
    /// one inside, else one made here — never the outer request's, which the relay may have set
    /// and which would tie the relay's logs to the content it must not see.
    static func correlated(_ request: Request) -> Request {
        let correlation = RequestCorrelation(request.headers)
        guard correlation.isNew else { return request }
        var head = request.head
        head.headerFields[RequestCorrelation.requestIDField] = correlation.requestID
        return Request(head: head, body: request.body)
    }

    /// The Hummingbird request a Binary HTTP request stands for. The body is exactly the content;
    /// a `Content-Length` that says otherwise, or any `Transfer-Encoding`, is refused rather than
    /// forwarded, and `Host` may only repeat the authority.
    static func request(from message: BinaryHTTPMessage) throws -> Request {
        guard case .request(let methodName, let scheme, var authority, let path) = message.head else {
            throw SignetError(.malformedMessage, "the encapsulated message is not a request")
        }
        guard let method = HTTPRequest.Method(methodName) else {
            throw SignetError(.malformedMessage, "the method is not a token")
        }
        guard scheme == "https" || scheme == "http", path.hasPrefix("/") else {
            throw SignetError(.malformedMessage, "the request needs an http(s) scheme and a path that starts with /")
        }
        var fields = HTTPFields()
        for field in message.fields {
            switch field.name {
            case "host":
                guard authority.isEmpty || authority == field.value else {
                    throw SignetError(.malformedMessage, "Host and the authority disagree")
                }
                authority = field.value
            case "content-length":
                guard field.value == String(message.content.count) else {
                    throw SignetError(.malformedMessage, "Content-Length disagrees with the content")
                }
            case "transfer-encoding":
                throw SignetError(.malformedMessage, "Binary HTTP content has no transfer coding")
            default:
                guard let name = HTTPField.Name(field.name) else {
                    throw SignetError(.malformedMessage, "a field name is not valid")
                }
                fields.append(HTTPField(name: name, value: field.value))
            }
        }
        guard !authority.isEmpty else { throw SignetError(.malformedMessage, "the request names no authority") }
        if !message.content.isEmpty || [.post, .put, .patch].contains(method) {
            fields[.contentLength] = String(message.content.count)
        }
        let head = HTTPRequest(method: method, scheme: scheme, authority: authority, path: path, headerFields: fields)
        return Request(head: head, body: .init(buffer: ByteBuffer(bytes: message.content)))
    }

    /// The Binary HTTP form of an answer: its status, end-to-end fields, whole body (bounded) and
    /// trailers. Framing fields mean nothing inside Binary HTTP and are left out.
    static func binaryResponse(_ response: Response, limit: Int) async throws -> BinaryHTTPMessage {
        let collected = CollectedBody(limit: limit)
        try await response.body.write(CollectingWriter(collected: collected))
        let framing: Set<String> = ["connection", "keep-alive", "transfer-encoding", "content-length", "upgrade", "proxy-connection"]
        return BinaryHTTPMessage(
            head: .response(status: response.status.code),
            fields: response.headers.filter { !framing.contains($0.name.canonicalName) }.map {
                BinaryHTTPMessage.Field($0.name.canonicalName, $0.value)
            },
            content: collected.bytes,
            trailers: (collected.trailers ?? [:]).map { BinaryHTTPMessage.Field($0.name.canonicalName, $0.value) }
        )
    }
}

/// Where ``CollectingWriter`` puts what it is given: the writer itself is consumed by `finish`.
private final class CollectedBody {
    let limit: Int
    var bytes: [UInt8] = []
    var trailers: HTTPFields?

    init(limit: Int) {
        self.limit = limit
    }
}

/// A response body writer that keeps the body in memory, refusing more than the limit.
private struct CollectingWriter: ResponseBodyWriter {
    let collected: CollectedBody

    mutating func write(_ buffer: ByteBuffer) async throws {
        guard collected.bytes.count + buffer.readableBytes <= collected.limit else {
            throw SignetError(.upstreamUnavailable, "the answer exceeds \(collected.limit) bytes, more than can be encapsulated")
        }
        collected.bytes += buffer.readableBytesView
    }

    consuming func finish(_ trailingHeaders: HTTPFields?) async throws {
        collected.trailers = trailingHeaders
    }
}
