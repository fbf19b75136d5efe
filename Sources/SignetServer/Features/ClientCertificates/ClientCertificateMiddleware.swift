// SPDX-License-Identifier: Apache-2.0
import Foundation
import Hummingbird
import Logging
import NIOCore
import NIOSSL
import SignetCore
import SignetMiddleware

/// Requires a device certificate over mutual TLS on every request under it, and puts the device's
/// `SignetIdentity` into the context: the `client-certificate` route policy for any Hummingbird app.
///
/// The server must ask for client certificates without rejecting unknown ones in the handshake
/// (``GatewayTLS/channelConfiguration(clientCertificates:applicationProtocols:clientCA:)``), so refusals carry a reason code.
///
/// ```swift
/// router.group("accounts").add(middleware: ClientCertificateMiddleware(verifier: verifier))
/// ```
public struct ClientCertificateMiddleware<Context: SignetRequestContextProtocol>: RouterMiddleware, RequestAuthenticator {
    /// `nil` when the server takes no client certificates: every request is refused.
    public let verifier: ClientCertificateVerifier?
    public let metrics: SignetMetrics?
    private let clock: @Sendable () -> Date

    public init(
        verifier: ClientCertificateVerifier?,
        metrics: SignetMetrics? = nil,
        clock: @escaping @Sendable () -> Date = Date.init
    ) {
        self.verifier = verifier
        self.metrics = metrics
        self.clock = clock
    }

    public func authenticate(_ request: inout Request, context: inout Context) async throws -> Admission {
        guard let verifier else {
            throw SignetError(.clientCertificateRequired, "this server does not take client certificates")
        }
        return Admission(try await verifier.identity(presented: try? await context.peerCertificateDER(), now: clock()))
    }
}

extension SignetRequestContextProtocol {
    /// The mutual-TLS peer certificate (DER), `nil` without TLS or without a certificate.
    func peerCertificateDER() async throws -> [UInt8]? {
        guard let channel else { return nil }
        return try await channel.connection.nioSSL_peerCertificate().get()?.toDERBytes()
    }
}
