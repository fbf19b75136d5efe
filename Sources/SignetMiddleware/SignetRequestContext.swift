// SPDX-License-Identifier: Apache-2.0
import Hummingbird
import Logging
import NIOCore
import SignetCore

/// What Signet's middlewares learn about one request and hand on to the handler.
public struct SignetRequestState: Sendable {
    /// Who the request came from, once a middleware established it.
    public var identity: SignetIdentity? {
        didSet { accessRecord?.update { [identity] in $0.identity = identity } }
    }
    /// The request whose signature verified, as the server holds it (the gateway binds its
    /// response signature to it); `nil` on routes that verify no signature.
    public var verifiedMessage: ServerMessage?
    /// The request target exactly as the client sent it, when `RoutingPath` normalised it for
    /// routing; the signature is checked against this one.
    public var receivedTarget: String?
    /// The client's address as established behind trusted proxies (`TrustedProxies`); `nil` when
    /// nobody established one, and the peer is the client.
    public var clientAddress: String?
    /// The body was read whole, and the head screened, before routing (the gateway's
    /// `RequestCompletionResponder`): a gate screens no head a second time.
    public var isComplete = false
    /// The `RoutingPath`-normalised target of this request, when a stage before routing made it
    /// already (the gateway's completion stage); path normalisation does not do it again.
    public var routedPath: String?
    /// Where this request's access log line is gathered; `nil` when nobody logs access.
    public var accessRecord: AccessRecord?
    /// On a route that monitors rather than enforces, what enforcing would have done: `accepted`,
    /// or the reason code of its refusal. Sent upstream as `Signet-Verdict`.
    public var verdict: String? {
        didSet { accessRecord?.update { [verdict] in $0.verdict = verdict } }
    }
    /// The request is judged for another proxy, which announced a body and did not send it (whole):
    /// a gate that checks bodies refuses it rather than judge it without (`body_not_forwarded`).
    package var bodyWithheld = false

    public init() {}
}

/// A request context that can carry Signet's ``SignetRequestState``. Adopt it in your own context to
/// use ``SignetVerificationMiddleware`` in any Hummingbird app.
public protocol SignetRequestContextProtocol: RequestContext {
    var signet: SignetRequestState { get set }
    /// The peer address: who opened the connection (`nil` when unknown).
    var remoteAddress: String? { get }
    /// The connection, for the mutual-TLS client certificate (`source.channel`); `nil` by default.
    var channel: (any Channel)? { get }
    /// Whether the client closed the connection the request came on while it was answered:
    /// nothing is forwarded on its behalf any more. `false` by default.
    var clientHasGone: Bool { get }
}

extension SignetRequestContextProtocol {
    public var channel: (any Channel)? { nil }
    public var clientHasGone: Bool { false }

    /// The client's address, for per-source limits, audit entries and forwarding fields: the one
    /// trusted proxies named (``SignetRequestState/clientAddress``), else the peer's.
    public var clientAddress: String? { signet.clientAddress ?? remoteAddress }

    /// The verified client, as ``SignetRequestState/identity``.
    public var signetIdentity: SignetIdentity? {
        get { signet.identity }
        set { signet.identity = newValue }
    }
}

/// The ready-made context used by the gateway.
public struct SignetRequestContext: SignetRequestContextProtocol {
    public var coreContext: CoreRequestContextStorage
    public var signet = SignetRequestState()
    public let remoteAddress: String?
    /// The connection, for the mutual-TLS client certificate.
    public let channel: (any Channel)?

    public init(source: ApplicationRequestContextSource) {
        self.coreContext = .init(source: source)
        self.remoteAddress = source.channel.remoteAddress?.ipAddress
        self.channel = source.channel
    }

    /// A request that reached this server through no HTTP connection of its own — one Envoy's gRPC
    /// `ext_authz` describes — from the client at `remoteAddress`.
    package init(remoteAddress: String?, logger: Logger) {
        self.coreContext = .init(source: DescribedRequestSource(logger: logger))
        self.remoteAddress = remoteAddress
        self.channel = nil
    }

    /// A connection a server accepted (it has the listening socket as its parent, a test's channel
    /// has none) that is closed now — also when it closed before this context was made, its request
    /// and its close having arrived together.
    public var clientHasGone: Bool {
        guard let channel, channel.parent != nil else { return false }
        return !channel.isActive
    }

    /// Bodies are bounded by the middleware's own limit; this only caps Hummingbird's decoders.
    public var maxUploadSize: Int { 1024 * 1024 }
}

/// Where a described request's context comes from: only the logger.
private struct DescribedRequestSource: RequestContextSource {
    let logger: Logger
}
