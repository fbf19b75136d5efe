// SPDX-License-Identifier: Apache-2.0
import AsyncHTTPClient
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import NIOHTTP1
import SignetCore
import SignetStore

/// Forwards a request to the upstream and streams the answer back.
///
/// The client's own `Signet-*` fields never reach the upstream: they are stripped, and the gateway
/// adds the identity it verified. Hop-by-hop fields stay on their hop.
struct GatewayProxy: Sendable {
    let client: HTTPClient
    let upstream: String
    let responseSigner: MessageSigner?
    let maximumSignedResponseBytes: Int
    /// How long the upstream has to answer; AsyncHTTPClient keeps retrying a refused connection until then.
    let timeout: TimeAmount

    static let identityPrefix = "signet-"
    static let hopByHop: Set<String> = [
        "connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "te", "trailer",
        "transfer-encoding", "upgrade", "host", "content-length",
    ]

    func forward(
        _ request: Request,
        identity: SignetIdentity?,
        signedRequest: HTTPMessage?,
        logger: Logger
    ) async throws -> Response {
        var outbound = HTTPClientRequest(url: upstream + (request.head.path ?? "/"))
        outbound.method = .init(rawValue: request.method.rawValue)
        for field in request.headers {
            let name = field.name.canonicalName
            if name.hasPrefix(Self.identityPrefix) || Self.hopByHop.contains(name) { continue }
            outbound.headers.add(name: field.name.rawName, value: field.value)
        }
        if let identity {
            outbound.headers.add(name: "Signet-Key-Id", value: identity.keyID)
            outbound.headers.add(name: "Signet-Trust-Level", value: identity.trustLevel.rawValue)
            if let device = identity.deviceID { outbound.headers.add(name: "Signet-Device", value: device) }
        }
        if let authority = request.head.authority { outbound.headers.add(name: "X-Forwarded-Host", value: authority) }
        if let length = request.headers[.contentLength].flatMap(Int64.init) {
            outbound.body = .stream(request.body, length: .known(length))
        } else if request.method == .get || request.method == .head {
            outbound.body = nil
        } else {
            outbound.body = .stream(request.body, length: .unknown)
        }

        let upstreamResponse: HTTPClientResponse
        do {
            upstreamResponse = try await client.execute(outbound, timeout: timeout, logger: logger)
        } catch {
            throw SignetError(.upstreamUnavailable, "the upstream did not answer: \(error)")
        }
        var headers = HTTPTypes.HTTPFields()
        for header in upstreamResponse.headers where !Self.hopByHop.contains(header.name.lowercased()) {
            guard let name = HTTPField.Name(header.name) else { continue }
            headers.append(HTTPField(name: name, value: header.value))
        }
        let status = HTTPResponse.Status(code: Int(upstreamResponse.status.code))
        guard let responseSigner, let signedRequest else {
            if let length = upstreamResponse.headers.first(name: "content-length") { headers[.contentLength] = length }
            return Response(status: status, headers: headers, body: .init(asyncSequence: upstreamResponse.body))
        }
        // A signed response covers its body's digest, so the body is read whole first (bounded).
        let body = try await upstreamResponse.body.collect(upTo: maximumSignedResponseBytes)
        return try sign(status: status, headers: headers, body: body, request: signedRequest, signer: responseSigner)
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
