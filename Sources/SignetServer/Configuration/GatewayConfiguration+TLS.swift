// SPDX-License-Identifier: Apache-2.0
import Foundation
import SignetCore
import SignetMiddleware

extension GatewayConfiguration {
    /// HTTPS for the gateway itself, and mutual TLS.
    public struct TLS: Codable, Sendable, Equatable {
        /// PEM certificate chain, leaf first.
        public var certificateFile: String?
        /// PEM private key of the leaf.
        public var keyFile: String?
        /// Generate a development CA and server certificate (for `developmentHosts`) when the files
        /// are absent — written to them when paths are given, kept in memory otherwise. The gateway
        /// prints the pins at start. Never in production.
        public var development: Bool?
        public var developmentHosts: [String]?
        /// Ask clients for a certificate from the device CA (mutual TLS). Optional at the TLS layer;
        /// routes with access `client-certificate` refuse requests without one.
        public var clientCertificates: Bool?
        /// Offer HTTP/2 in the handshake (ALPN `h2`, then `http/1.1`). On by default for the apps'
        /// listener, off for the admin listener (the console and the admin API speak HTTP/1.1).
        public var http2: Bool?
        public init(
            certificateFile: String? = nil,
            keyFile: String? = nil,
            development: Bool? = nil,
            developmentHosts: [String]? = nil,
            clientCertificates: Bool? = nil,
            http2: Bool? = nil
        ) {
            self.certificateFile = certificateFile
            self.keyFile = keyFile
            self.development = development
            self.developmentHosts = developmentHosts
            self.clientCertificates = clientCertificates
            self.http2 = http2
        }
    }
}

extension GatewayConfiguration.TLS {
    /// Both files or neither, and files unless `development`; `name` is where it sits
    /// (`tls`, `adminListener.tls`).
    func validate(named name: String) throws {
        guard (certificateFile == nil) == (keyFile == nil) else {
            throw ConfigurationError.invalid("\(name)", "\(name) needs both certificateFile and keyFile")
        }
        guard certificateFile != nil || development == true else {
            throw ConfigurationError.invalid("\(name)", "\(name) needs certificateFile and keyFile, or development: true")
        }
    }
}

extension GatewayConfiguration {
    /// Whether the apps' listener offers HTTP/2: over TLS, unless `tls.http2` is `false`.
    var appsOfferHTTP2: Bool { tls.map { $0.http2 ?? true } ?? false }
    /// Whether the admin listener offers HTTP/2: only with `adminListener.tls.http2`.
    var adminOffersHTTP2: Bool { adminListener?.tls?.http2 == true }
    /// Whether either listener does.
    var offersHTTP2: Bool { appsOfferHTTP2 || adminOffersHTTP2 }
}
