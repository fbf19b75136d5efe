// SPDX-License-Identifier: Apache-2.0
import AsyncHTTPClient
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import NIOHTTP1
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
    let client: HTTPClient
    let upstream: String
    let responseSigner: MessageSigner?
    let maximumBodyBytes: Int
    let maximumSignedResponseBytes: Int
    /// How long the upstream has to answer; AsyncHTTPClient keeps retrying a refused connection until then.
    let timeout: TimeAmount
    /// `https` when clients reach the gateway over TLS (also behind a TLS-terminating proxy).
    let publicScheme: String
    let publicAuthority: String?

    func forward(_ request: Request, context: some SignetRequestContextProtocol) async throws -> Response {
        var request = request
        let body = try await request.collectBody(upTo: maximumBodyBytes, refusing: "a request body")
        var outbound = HTTPClientRequest(url: upstream + (request.head.path ?? "/"))
        outbound.method = .init(rawValue: request.method.rawValue)
        outbound.headers = ForwardedFields.outbound(
            request.headers,
            identity: context.signet.identity,
            client: context.remoteAddress,
            scheme: publicScheme,
            authority: publicAuthority ?? request.head.authority
        )
        if body.readableBytes > 0 || request.headers[.contentLength] != nil {
            outbound.body = .bytes(body)
        }

        // AsyncHTTPClient logs only at debug and trace, yet tags its logger for every request and
        // connection, and swift-log's StreamLogHandler renders all metadata again on each tag (2 % of
        // the gateway's core under load): below debug, it gets none (its own no-op logger).
        let upstreamLogger = context.logger.logLevel <= .debug ? context.logger : nil
        let upstreamResponse: HTTPClientResponse
        do {
            upstreamResponse = try await client.execute(outbound, timeout: timeout, logger: upstreamLogger)
        } catch {
            throw SignetError(.upstreamUnavailable, "the upstream did not answer: \(error)")
        }
        var headers = ForwardedFields.inbound(upstreamResponse.headers)
        let status = HTTPResponse.Status(code: Int(upstreamResponse.status.code))
        guard let responseSigner, let signedRequest = context.signet.verifiedMessage else {
            if let length = upstreamResponse.headers.first(name: "content-length") { headers[.contentLength] = length }
            return Response(status: status, headers: headers, body: .init(asyncSequence: upstreamResponse.body))
        }
        // A signed response covers its body's digest, so the body is read whole first (bounded).
        let responseBody: ByteBuffer
        do {
            responseBody = try await upstreamResponse.body.collect(upTo: maximumSignedResponseBytes)
        } catch let error as NIOTooManyBytesError {
            throw SignetError(.upstreamUnavailable, "the upstream's answer exceeds what can be signed: \(error)")
        } catch {
            throw SignetError(.upstreamUnavailable, "the upstream's answer broke off: \(error)")
        }
        return try sign(status: status, headers: headers, body: responseBody, request: signedRequest, signer: responseSigner)
    }

    /// Signs the response with the gateway key, bound to the request it answers (`;req`).
    private func sign(
        status: HTTPResponse.Status,
        headers: HTTPTypes.HTTPFields,
        body: ByteBuffer,
        request: HTTPMessage,
        signer: MessageSigner
    ) throws -> Response {
        var fields = MessageFields()
        for field in headers { fields.append(name: field.name.rawName, value: field.value) }
        let message = HTTPMessage.response(status: status.code, fields: fields, body: Array(buffer: body))
        var components: [ComponentIdentifier] = [.status]
        if !message.body.isEmpty { components.append(.contentDigest) }
        if fields.contains("content-type") { components.append("content-type") }
        components += [
            ComponentIdentifier("@method", parameters: SFParameters([("req", .boolean(true))])),
            ComponentIdentifier("@target-uri", parameters: SFParameters([("req", .boolean(true))])),
        ]
        if request.fields.contains("signature") {
            components.append(ComponentIdentifier("signature", parameters: SFParameters([("req", .boolean(true))])))
        }
        let signed = try signer.sign(
            message,
            label: "gateway",
            components: components,
            created: Date(),
            relatedRequest: request
        )
        var out = headers
        for field in signed.fields.lines.dropFirst(fields.lines.count) {
            guard let name = HTTPField.Name(field.name) else { continue }
            out.append(HTTPField(name: name, value: field.value))
        }
        out[.contentLength] = String(body.readableBytes)
        return Response(status: status, headers: out, body: .init(byteBuffer: body))
    }
}
