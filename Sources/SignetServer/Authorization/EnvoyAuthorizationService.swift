// SPDX-License-Identifier: Apache-2.0
import GRPCCore
import GRPCNIOTransportHTTP2
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import ServiceLifecycle
import SignetCore
import SignetMiddleware

/// Envoy's gRPC `envoy.service.auth.v3.Authorization/Check` (and Istio's `CUSTOM` action): each
/// check is read as the request it describes (``EnvoyCheck``) and judged by the authorization
/// listener's stages — the access log, the wait for a complete request, the routes' gates — as
/// forward auth is; the answer is Envoy's (`OkHttpResponse` or `DeniedHttpResponse`).
struct EnvoyAuthorizationService: Envoy_Service_Auth_V3_Authorization.SimpleServiceProtocol {
    /// The stages after the question is read (a reload replaces what they judge by).
    let responder: ReloadableResponder
    let debug: Bool
    let metrics: SignetMetrics
    let logger: Logger

    func check(request: Envoy_Service_Auth_V3_CheckRequest, context: ServerContext) async throws -> Envoy_Service_Auth_V3_CheckResponse {
        let asked: EnvoyCheck
        do {
            asked = try EnvoyCheck(request)
        } catch let error as SignetError {
            let refusal = ExternalAuthorization.unreadable(
                error, method: request.attributes.request.http.method, source: nil, debug: debug, metrics: metrics)
            return EnvoyCheck.answer(refusal, body: try await Self.collect(refusal), sentNames: [])
        }
        var requestContext = SignetRequestContext(remoteAddress: asked.client, logger: logger)
        requestContext.signet.clientAddress = asked.client
        requestContext.signet.bodyWithheld = asked.bodyWithheld
        let response = try await responder.respond(to: Request(head: asked.head, body: .init(buffer: asked.body)), context: requestContext)
        return EnvoyCheck.answer(response, body: try await Self.collect(response), sentNames: asked.sentNames)
    }

    /// A response's body, read whole (a verdict's: a problem document or nothing).
    static func collect(_ response: Response) async throws -> ByteBuffer {
        let collected = CollectedBody()
        try await response.body.write(CollectingWriter(into: collected))
        return collected.buffer
    }
}

/// Where ``CollectingWriter`` puts what it is given.
private final class CollectedBody: @unchecked Sendable {  // written by one writer, read after it finished
    var buffer = ByteBuffer()
}

private struct CollectingWriter: ResponseBodyWriter {
    let into: CollectedBody

    mutating func write(_ buffer: ByteBuffer) async throws {
        var buffer = buffer
        // A verdict is small; a bound keeps a mistake from holding an upstream's worth.
        guard into.buffer.readableBytes + buffer.readableBytes <= 64 << 10 else {
            throw SignetError(.internalError, "a verdict's body is over 64 KiB")
        }
        into.buffer.writeBuffer(&buffer)
    }

    consuming func finish(_ trailingHeaders: HTTPFields?) async throws {}
}
