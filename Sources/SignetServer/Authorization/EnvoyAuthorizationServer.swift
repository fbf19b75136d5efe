// SPDX-License-Identifier: Apache-2.0
import GRPCCore
import GRPCNIOTransportHTTP2
import NIOSSL
import ServiceLifecycle

/// The gRPC server of `authorizationListener.grpc` — Envoy's authorization service and the gRPC
/// health service — as a service of the gateway's group: it stops accepting and finishes the
/// checks in progress on a graceful shutdown.
struct EnvoyAuthorizationServer: Service {
    let server: GRPCServer<HTTP2ServerTransport.Posix>
    let onServerRunning: @Sendable (Int) async -> Void

    init(
        listen: GatewayConfiguration.Listen,
        tls served: ServedTLS?,
        service: EnvoyAuthorizationService,
        health: AuthorizationHealthService,
        onServerRunning: @escaping @Sendable (Int) async -> Void
    ) {
        var security = HTTP2ServerTransport.Posix.TransportSecurity.plaintext
        if let served {
            // The served certificate at each handshake; the one of this moment if that cannot be had.
            let tls = served.tls
            // The proxies' client certificates, checked in the handshake as on the HTTP listener.
            let clientCA = served.clientCA
            let configure: (inout HTTP2ServerTransport.Posix.TransportSecurity.TLS) -> Void = { config in
                guard let clientCA else { return }
                config.clientCertificateVerification = .noHostnameVerification
                config.trustRoots = .certificates(clientCA.compactMap { try? .bytes($0.toDERBytes(), format: .der) })
            }
            security =
                (try? .tls(certificateReloader: ServedCertificateReloader(served), configure: configure))
                ?? .tls(
                    certificateChain: [.bytes(Array(tls.chainPEM.utf8), format: .pem)],
                    privateKey: .bytes(Array(tls.keyPEM.utf8), format: .pem),
                    configure: configure)
        }
        // The host as validation allows it (an IPv4 or IPv6 address, or `localhost`, bound as its
        // IPv4 loopback).
        let address: GRPCNIOTransportHTTP2.SocketAddress =
            listen.host.contains(":") ? .ipv6(host: listen.host, port: listen.port)
            : .ipv4(host: listen.host == "localhost" ? "127.0.0.1" : listen.host, port: listen.port)
        server = GRPCServer(
            transport: .http2NIOPosix(address: address, transportSecurity: security),
            services: [service, health]
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
