// SPDX-License-Identifier: Apache-2.0
import SignetCore

extension GatewayConfiguration {
    /// The operator plane's listener: address, port and TLS of its own.
    ///
    /// The console's session cookie is `SameSite=Strict` and every change is checked for its origin
    /// and form token, which stops other sites — not a script on the console's own origin. On the
    /// apps' listener, any HTML the upstream serves through an open route is on that origin; on a
    /// listener of its own, the console is not.
    public struct AdminListener: Codable, Sendable, Equatable {
        public var listen: Listen
        /// HTTPS for the admin listener (its own certificate, or `development: true`). Client
        /// certificates are asked for when `adminCertificates` is set or `clientCertificates` says so.
        public var tls: TLS?

        public init(listen: Listen, tls: TLS? = nil) {
            self.listen = listen
            self.tls = tls
        }

        func validate(besides client: Listen, development: Bool) throws {
            // The admin token and the console's cookie must not cross a network in clear.
            if tls == nil, !development, !["127.0.0.1", "::1", "localhost"].contains(listen.host) {
                throw ConfigurationError.invalid("adminListener", "adminListener on \(listen.host) needs tls (the admin token and the console's session would cross the network in clear), or development: true")
            }
            if listen.port != 0, listen.port == client.port, listen.host == client.host {
                throw ConfigurationError.invalid("adminListener.listen", "adminListener.listen is the address of listen; give it a port of its own")
            }
            guard (0...65535).contains(listen.port) else {
                throw ConfigurationError.invalid("adminListener.listen.port", "adminListener.listen.port is 0 to 65535")
            }
            try tls?.validate(named: "adminListener.tls")
        }
    }

    /// Whether the admin listener's TLS asks clients for a certificate (fixed when its server is made).
    var adminListenerAsksForCertificates: Bool {
        guard let listener = adminListener, listener.tls != nil else { return false }
        return listener.tls?.clientCertificates == true || !(adminCertificates ?? []).isEmpty
    }
}
