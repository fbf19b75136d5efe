// SPDX-License-Identifier: Apache-2.0
import Hummingbird
import NIOCore

/// A request context that can carry a verified ``SignetIdentity``. Adopt it in your own context to
/// use ``SignetVerificationMiddleware`` in any Hummingbird app.
public protocol SignetRequestContextProtocol: RequestContext {
    var signetIdentity: SignetIdentity? { get set }
    /// The peer address, for per-source limits (`nil` when unknown).
    var remoteAddress: String? { get }
    /// The connection, for the mutual-TLS client certificate (`source.channel`); `nil` by default.
    var channel: (any Channel)? { get }
}

extension SignetRequestContextProtocol {
    public var channel: (any Channel)? { nil }
}

/// The ready-made context used by the gateway.
public struct SignetRequestContext: SignetRequestContextProtocol {
    public var coreContext: CoreRequestContextStorage
    public var signetIdentity: SignetIdentity?
    public let remoteAddress: String?
    /// The connection, for the mutual-TLS client certificate.
    public let channel: (any Channel)?

    public init(source: ApplicationRequestContextSource) {
        self.coreContext = .init(source: source)
        self.remoteAddress = source.channel.remoteAddress?.ipAddress
        self.channel = source.channel
    }

    /// Bodies are bounded by the middleware's own limit; this only caps Hummingbird's decoders.
    public var maxUploadSize: Int { 1024 * 1024 }
}
