// SPDX-License-Identifier: Apache-2.0
import SignetCore
import SignetMiddleware

extension GatewayConfiguration {
    /// The listener where another proxy asks whether to let a request through: forward auth
    /// (nginx `auth_request`, Caddy `forward_auth`, Traefik `forwardAuth`) and Envoy's HTTP
    /// `ext_authz` on `listen`, Envoy's gRPC `ext_authz` on `grpc`. The routes, access modes,
    /// policy and nonce store are the proxy's own (docs/integrations.md).
    ///
    /// It trusts what its callers say about the request (`X-Forwarded-Uri`, the client's address),
    /// so only the proxies may reach it: on loopback, or over TLS.
    public struct AuthorizationListener: Codable, Sendable, Equatable {
        /// Forward auth and Envoy's HTTP service.
        public var listen: Listen
        /// Envoy's gRPC `envoy.service.auth.v3.Authorization` service (HTTP/2), when set.
        public var grpc: Listen?
        /// HTTPS for `listen` (and TLS for `grpc`): its own certificate, or `development: true`.
        public var tls: TLS?
        /// A PEM file of the CA (or CAs) whose client certificates the proxies present: with it,
        /// both listeners refuse in the TLS handshake a peer without such a certificate, so TLS is
        /// access control as well as privacy. Needs `tls`.
        public var clientCAFile: String?

        public init(listen: Listen, grpc: Listen? = nil, tls: TLS? = nil, clientCAFile: String? = nil) {
            self.listen = listen
            self.grpc = grpc
            self.tls = tls
            self.clientCAFile = clientCAFile
        }

        func validate(besides taken: [(String, Listen)], development: Bool) throws {
            var taken = taken
            for (name, address) in [("listen", listen)] + (grpc.map { [("grpc", $0)] } ?? []) {
                let at = "authorizationListener.\(name)"
                // Whoever reaches it can have nonces claimed and tell it which request it judges.
                if tls == nil, !development, !["127.0.0.1", "::1", "localhost"].contains(address.host) {
                    throw ConfigurationError.invalid(at, "\(at) on \(address.host) needs authorizationListener.tls (its callers are trusted to say which request they ask about), or development: true")
                }
                guard (0...65535).contains(address.port) else {
                    throw ConfigurationError.invalid("\(at).port", "\(at).port is 0 to 65535")
                }
                if address.port != 0, let other = taken.first(where: { $0.1.port == address.port && $0.1.host == address.host }) {
                    throw ConfigurationError.invalid(at, "\(at) is the address of \(other.0); give it a port of its own")
                }
                taken.append((at, address))
            }
            // gRPC's transport binds an address, not a name.
            if let grpc, grpc.host != "localhost", IPAddress(grpc.host) == nil {
                throw ConfigurationError.invalid("authorizationListener.grpc.host", "authorizationListener.grpc.host is an IPv4 or IPv6 address, or localhost")
            }
            try tls?.validate(named: "authorizationListener.tls")
            if clientCAFile != nil, tls == nil {
                throw ConfigurationError.invalid("authorizationListener.clientCAFile", "authorizationListener.clientCAFile needs authorizationListener.tls (client certificates are TLS's)")
            }
        }
    }
}
