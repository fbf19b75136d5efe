// SPDX-License-Identifier: Apache-2.0
import HummingbirdTLS
import NIOSSL
import Synchronization

/// The certificate a listener serves to the connections it accepts from now on: a reload puts a
/// renewed one in its place (``NegotiatedHTTPChannel`` asks for it per connection), and a
/// connection keeps the one it was accepted with — as nginx, Envoy's SDS and Kong pick up
/// re-issued files.
final class ServedTLS: Sendable {
    /// A certificate ready to serve: its files' contents and the TLS context made from them.
    struct Prepared: Sendable {
        let tls: GatewayTLS
        fileprivate let context: NIOSSLContext
        fileprivate let verify: TLSChannelConfiguration.CustomVerificationCallback?
    }

    /// Whether the listener asks for client certificates: fixed with its server.
    let clientCertificates: Bool
    /// What it offers in the handshake (ALPN), most preferred first; empty, nothing (HTTP/1.1).
    let applicationProtocols: [String]
    /// The CA a client's certificate must come from, where the handshake checks it.
    let clientCA: [NIOSSLCertificate]?
    private let current: Mutex<Prepared>

    init(_ tls: GatewayTLS, clientCertificates: Bool, applicationProtocols: [String] = [], clientCA: [NIOSSLCertificate]? = nil) throws {
        self.clientCertificates = clientCertificates
        self.applicationProtocols = applicationProtocols
        self.clientCA = clientCA
        current = Mutex(try Self.prepare(tls, clientCertificates: clientCertificates, applicationProtocols: applicationProtocols, clientCA: clientCA))
    }

    /// What is served now.
    var tls: GatewayTLS { current.withLock { $0.tls } }

    /// `tls` made ready to serve, without serving it yet: a reload prepares, then installs only when
    /// everything else of the new configuration is accepted too.
    func prepare(_ tls: GatewayTLS) throws -> Prepared {
        try Self.prepare(tls, clientCertificates: clientCertificates, applicationProtocols: applicationProtocols, clientCA: clientCA)
    }

    private static func prepare(
        _ tls: GatewayTLS,
        clientCertificates: Bool,
        applicationProtocols: [String],
        clientCA: [NIOSSLCertificate]?
    ) throws -> Prepared {
        let configuration = try tls.channelConfiguration(
            clientCertificates: clientCertificates, applicationProtocols: applicationProtocols, clientCA: clientCA)
        return Prepared(
            tls: tls,
            context: try NIOSSLContext(configuration: configuration.tlsConfiguration),
            verify: configuration.customVerificationCallback
        )
    }

    /// Serves `prepared` to the connections accepted from now on.
    func install(_ prepared: Prepared) {
        current.withLock { $0 = prepared }
    }

    /// The TLS handler of a connection accepted now.
    func handler() -> NIOSSLServerHandler {
        let prepared = current.withLock { $0 }
        return NIOSSLServerHandler(context: prepared.context, customVerificationCallback: prepared.verify, configuration: .init())
    }
}
