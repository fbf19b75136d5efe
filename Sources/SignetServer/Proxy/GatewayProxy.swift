// SPDX-License-Identifier: Apache-2.0
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import SignetCore
import SignetMiddleware

/// Forwards a request to the upstream and streams the answer back.
///
/// The request body is read whole (bounded) before anything goes upstream, as nginx does by default
/// (`proxy_request_buffering on`): the handler owns the body and is done with it before it returns,
/// so an upstream that answers early, resets or stalls can never leave a second reader on the
/// connection's inbound stream (Hummingbird drains it after the handler), and a slow client costs
/// the upstream nothing. The client's identity and forwarding fields never reach the upstream
/// (``ForwardedFields``); the gateway sets its own.
struct GatewayProxy: Sendable {
    let upstream: any UpstreamTransport
    let responseSigner: MessageSigner?
    let maximumBodyBytes: Int
    let maximumSignedResponseBytes: Int
    /// How long the upstream has to accept the connection, to answer, and between two parts of its body.
    let timeout: TimeAmount
    /// `https` when clients reach the gateway over TLS (also behind a TLS-terminating proxy).
    let publicScheme: String
    let publicAuthority: String?
    /// The time responses are signed at: the gateway's clock.
    let clock: @Sendable () -> Date

    static func seconds(_ duration: Duration) -> Double {
        Double(SignetMetrics.nanoseconds(duration)) / 1e9
    }

    func forward(_ request: Request, context: some SignetRequestContextProtocol) async throws -> Response {
        var request = request
        let body = try await request.collectBody(upTo: maximumBodyBytes, refusing: "a request body")
        let upstreamRequest = Self.upstreamHead(
            method: request.method,
            // The routed target as `PathNormalizingResponder` left it.
            routedTarget: request.head.path ?? "/",
            received: request.headers,
            framed: request.headers[.contentLength] != nil,
            bodyBytes: body.readableBytes,
            identity: context.signet.identity,
            verdict: context.signet.verdict,
            client: context.clientAddress,
            scheme: publicScheme,
            publicAuthority: publicAuthority ?? request.head.authority,
            upstream: upstream
        )
        // The last moment to refuse: nothing goes upstream for a client that has gone — it has
        // retried with a fresh nonce or given up, and either way would not learn the outcome.
        if context.clientHasGone {
            throw SignetError(.clientClosedRequest, "the client closed the connection before its request was forwarded")
        }
        let upstreamResponse: UpstreamResponse
        let started = ContinuousClock.now
        do {
            upstreamResponse = try await upstream.execute(upstreamRequest, body: body, timeout: timeout)
        } catch let failure as UpstreamFailure {
            let elapsed = ContinuousClock.now - started
            context.signet.accessRecord?.update { $0.upstreamSeconds = Self.seconds(elapsed) }
            throw Self.error(failure)
        }
        let elapsed = ContinuousClock.now - started
        context.signet.accessRecord?.update {
            $0.upstreamStatus = upstreamResponse.head.status.code
            $0.upstreamSeconds = Self.seconds(elapsed)
        }
        var answer = Self.answerFields(upstreamResponse.head.headerFields, gatewaySigns: responseSigner != nil)
        // The code's own reason phrase: the upstream's text (`403 internal: user 17 lacks role
        // admin`) stays on its hop, and no response signature covers it.
        let status = HTTPResponse.Status(code: upstreamResponse.head.status.code)
        guard let responseSigner, let signedRequest = context.signet.verifiedMessage else {
            if let length = upstreamResponse.head.headerFields[.contentLength] { answer[.contentLength] = length }
            switch upstreamResponse.body {
            case .stream(let stream): return Response(status: status, headers: answer, body: .init(asyncSequence: stream))
            case .buffered(let whole):
                // A `HEAD` answer keeps the upstream's length, or has none: a body buffer would have
                // Hummingbird write `Content-Length: 0` for a resource that is not empty.
                guard request.method != .head else {
                    return Response(status: status, headers: answer, body: ResponseBody { try await $0.finish(nil) })
                }
                // Whole: head and body leave in one write (SwiftNIO writes no length for a `204`).
                return Response(status: status, headers: answer, body: .init(byteBuffer: whole))
            }
        }
        // A signed response covers its body's digest, so the body is read whole first (bounded).
        var responseBody = ByteBuffer()
        do {
            switch upstreamResponse.body {
            case .stream(let stream):
                for try await part in stream { try append(part, to: &responseBody) }
            case .buffered(let whole):
                try append(whole, to: &responseBody)
            }
        } catch let failure as UpstreamFailure {
            throw Self.error(failure)
        }
        let (signedFields, content) = try Self.signed(
            status: status,
            method: request.method,
            headers: answer,
            upstreamLength: upstreamResponse.head.headerFields[.contentLength],
            body: responseBody,
            request: signedRequest,
            signer: responseSigner,
            created: clock()
        )
        // Hummingbird writes the length of a body it is given where no field says one: none at all
        // for an answer without content (a closure body of no stated length writes nothing).
        return Response(status: status, headers: signedFields, body: content.map { ResponseBody(byteBuffer: $0) } ?? ResponseBody { try await $0.finish(nil) })
    }

    /// Adds `part` to a response body held for signing, within ``maximumSignedResponseBytes``.
    private func append(_ part: ByteBuffer, to body: inout ByteBuffer) throws {
        guard body.readableBytes + part.readableBytes <= maximumSignedResponseBytes else {
            throw SignetError(.upstreamUnavailable, "the upstream's answer exceeds the \(maximumSignedResponseBytes) bytes that can be signed")
        }
        body.writeImmutableBuffer(part)
    }

    /// The public face of a failed exchange: a reason code and a sentence, never a system error's text.
    static func error(_ failure: UpstreamFailure) -> SignetError {
        switch failure {
        case .unreachable: SignetError(.upstreamUnreachable, "the upstream refused the connection or cannot be reached")
        case .closedBeforeAnswer: SignetError(.upstreamUnavailable, "the upstream closed the connection before answering")
        case .timedOut: SignetError(.upstreamUnavailable, "the upstream did not answer in time")
        case .brokeOff: SignetError(.upstreamUnavailable, "the upstream's answer broke off")
        case .saturated: SignetError(.upstreamUnavailable, "the gateway has as many upstream connections open as it may")
        }
    }

    /// The label of the gateway's response signature.
    static let signatureLabel = "gateway"

    /// Signs the response with the gateway key, bound to the request it answers (`;req`).
    ///
    /// The signature vouches only for what the gateway checked: the upstream's own `gateway`
    /// signature is gone already (``forward(_:context:)``); an upstream's `Content-Digest` that
    /// does not match the body is replaced by the gateway's own. Framing
    /// follows the status: a `HEAD` or `304` answer keeps the upstream's `Content-Length` (of the
    /// content it would have sent), a `204` has none.
    ///
    /// - Returns: The answer's fields, its signature's among them, and its content (`nil` where it
    ///   has none: `HEAD`, `204`, `304`, `1xx`). Both the data plane and this proxy write these.
    static func signed(
        status: HTTPResponse.Status,
        method: HTTPRequest.Method,
        headers upstreamFields: HTTPTypes.HTTPFields,
        upstreamLength: String?,
        body: ByteBuffer,
        request: ServerMessage,
        signer: MessageSigner,
        created: Date
    ) throws -> (HTTPFields, ByteBuffer?) {
        var headers = upstreamFields
        let hasContent = method != .head && status != .notModified && status != .noContent && status.kind != .informational
        if hasContent, let digest = headers[.contentDigest], !Self.checks(digest, body) {
            headers[.contentDigest] = nil
        }
        if hasContent {
            headers[.contentLength] = String(body.readableBytes)
        } else if method == .head || status == .notModified {
            headers[.contentLength] = upstreamLength
        }
        let message = ServerMessage(status: status.code, fields: headers, body: body)
        var components: [ComponentIdentifier] = [.status]
        if body.readableBytes > 0 { components.append(.contentDigest) }
        if headers[.contentType] != nil { components.append("content-type") }
        components += [
            ComponentIdentifier("@method", parameters: SFParameters([("req", .boolean(true))])),
            ComponentIdentifier("@target-uri", parameters: SFParameters([("req", .boolean(true))])),
        ]
        if request.containsField("signature") {
            components.append(ComponentIdentifier("signature", parameters: SFParameters([("req", .boolean(true))])))
        }
        var out = headers
        for field in try signer.signatureFields(
            for: message,
            label: Self.signatureLabel,
            components: components,
            created: created,
            relatedRequest: request
        ) {
            guard let name = HTTPField.Name(field.name) else { continue }
            out.append(HTTPField(name: name, value: field.value))
        }
        return (out, hasContent ? body : nil)
    }

    /// Whether `digest` is one the gateway checked whole: every member an algorithm it computes,
    /// each matching the body. A member it cannot check (`md5`, `crc32c`) would be signed unchecked.
    static func checks(_ digest: String, _ body: ByteBuffer) -> Bool {
        guard let members = try? StructuredFieldParser.parseDictionary(digest).keys,
            members.allSatisfy({ ContentDigest.Algorithm(rawValue: $0) != nil })
        else { return false }
        return (try? body.withUnsafeReadableBytes { try ContentDigest.verify(digest, bodyBytes: $0) }) != nil
    }

    /// Removes the member `label` from `Signature` and `Signature-Input`, keeping the others byte
    /// for byte as written (a verifier builds the signature base from `Signature-Input`'s raw
    /// member text, so a canonical rewrite would break the upstream's own signatures); both fields
    /// go when either does not parse (a client could not read them either).
    static func removeSignature(labelled label: String, from fields: inout HTTPTypes.HTTPFields) {
        let names: [HTTPField.Name] = [.signature, .signatureInput]
        guard names.contains(where: { fields[$0] != nil }) else { return }
        var rewritten: [(HTTPField.Name, String?)] = []
        for name in names {
            guard let value = fields[name] else { continue }
            guard let dictionary = try? StructuredFieldParser.parseDictionary(value) else {
                for name in names { fields[name] = nil }
                return
            }
            guard dictionary[label] != nil else { continue }
            // A parsed member keeps its raw text; a bare one (true) is its key and parameters, no `=`.
            let kept = dictionary.entries.filter { $0.key != label }.map { entry in
                let raw = entry.rawValue ?? ""
                return raw.isEmpty || raw.hasPrefix(";") ? entry.key + raw : entry.key + "=" + raw
            }
            rewritten.append((name, kept.isEmpty ? nil : kept.joined(separator: ", ")))
        }
        for (name, value) in rewritten { fields[name] = value }
    }
}
