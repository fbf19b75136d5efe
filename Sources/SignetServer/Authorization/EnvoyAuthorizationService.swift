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
            metrics.recordRefusal(error.code, method: request.attributes.request.http.method, path: "(ext_authz)", keyID: nil, source: nil)
            var refusal = ProblemResponse.make(error, debug: debug)
            refusal.headers[.signetReason] = error.code.rawValue
            return EnvoyCheck.answer(refusal, body: try await Self.collect(refusal), asked: HTTPFields())
        }
        var requestContext = SignetRequestContext(remoteAddress: asked.client, logger: logger)
        requestContext.signet.clientAddress = asked.client
        requestContext.signet.bodyWithheld = asked.bodyWithheld
        let response = try await responder.respond(to: Request(head: asked.head, body: .init(buffer: asked.body)), context: requestContext)
        return EnvoyCheck.answer(response, body: try await Self.collect(response), asked: asked.head.headerFields)
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
        guard into.buffer.readableBytes + buffer.readableBytes <= 64 << 10 else { return }
        into.buffer.writeBuffer(&buffer)
    }

    consuming func finish(_ trailingHeaders: HTTPFields?) async throws {}
}

/// The gRPC server of `authorizationListener.grpc`, as a service of the gateway's group: it stops
/// accepting and finishes the checks in progress on a graceful shutdown.
struct EnvoyAuthorizationServer: Service {
    let server: GRPCServer<HTTP2ServerTransport.Posix>
    let onServerRunning: @Sendable (Int) async -> Void

    init(
        listen: GatewayConfiguration.Listen,
        tls: GatewayTLS?,
        service: EnvoyAuthorizationService,
        onServerRunning: @escaping @Sendable (Int) async -> Void
    ) {
        let security: HTTP2ServerTransport.Posix.TransportSecurity = tls.map {
            .tls(certificateChain: [.bytes(Array($0.chainPEM.utf8), format: .pem)], privateKey: .bytes(Array($0.keyPEM.utf8), format: .pem))
        } ?? .plaintext
        // The host as validation allows it: an IPv4 or IPv6 literal, or `localhost` (its IPv4 loopback).
        let address: GRPCNIOTransportHTTP2.SocketAddress =
            listen.host.contains(":") ? .ipv6(host: listen.host, port: listen.port)
            : .ipv4(host: listen.host == "localhost" ? "127.0.0.1" : listen.host, port: listen.port)
        server = GRPCServer(
            transport: .http2NIOPosix(address: address, transportSecurity: security),
            services: [service]
        )
        self.onServerRunning = onServerRunning
    }

    func run() async throws {
        try await withGracefulShutdownHandler {
            try await withThrowingDiscardingTaskGroup { group in
                group.addTask { try await server.serve() }
                let address = try await server.listeningAddress
                if let port = address?.ipv4?.port ?? address?.ipv6?.port { await onServerRunning(port) }
            }
        } onGracefulShutdown: {
            server.beginGracefulShutdown()
        }
    }
}
