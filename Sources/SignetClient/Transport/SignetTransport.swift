// SPDX-License-Identifier: Apache-2.0
import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Which transport a ``SignetClient`` sends its requests over. Signing, redirects within the
/// configured origins, response signatures, tokens and trust updates are the client's and work the
/// same over both.
public struct SignetTransport: Sendable {
    enum Kind: Sendable {
        #if os(macOS) || !canImport(Darwin)
        /// ``nio(eventLoopGroup:)``, declared with the NIO transport (Linux only).
        case nio(NIOEventLoops)
        #endif
        case urlSession(@Sendable () -> URLSessionConfiguration)
    }

    let kind: Kind

    /// The system's `URLSession`: what Apple advises on its platforms (cellular bring-up, on-demand
    /// VPN, proxies, HTTP/2). Each TLS chain is still decided by the client's
    /// ``ServerTrustEvaluator`` (`SecTrust`, then the pins in force), and a client identity is
    /// presented as a `URLCredential`.
    ///
    /// On Linux, FoundationNetworking (libcurl) never asks about server trust: it checks chains
    /// against the system's CA files only, so pins could not apply. The client refuses this
    /// transport there for https origins; plain http (loopback tests) works.
    ///
    /// - Parameter configuration: Makes the session's configuration (`.ephemeral` by default: no
    ///   cookies or cache shared with the app's other sessions).
    public static func urlSession(
        _ configuration: @escaping @Sendable () -> URLSessionConfiguration = { .ephemeral }
    ) -> SignetTransport {
        SignetTransport(kind: .urlSession(configuration))
    }

    /// `URLSession` on Apple platforms, SwiftNIO elsewhere.
    public static var platformDefault: SignetTransport {
        #if canImport(Security) && canImport(Darwin)
        .urlSession()
        #else
        .nio()
        #endif
    }
}
