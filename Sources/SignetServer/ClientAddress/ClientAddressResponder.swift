// SPDX-License-Identifier: Apache-2.0
import Hummingbird
import NIOCore
import SignetMiddleware

/// Outermost: establishes the client's address behind trusted proxies (``TrustedProxies``) before
/// anything counts a request against a source — Oblivious HTTP, registration, logins, the admin
/// surfaces, pin reports — and before the forwarding fields for the upstream are written.
struct ClientAddressResponder<Inner: HTTPResponder>: HTTPResponder where Inner.Context: SignetRequestContextProtocol {
    typealias Context = Inner.Context
    let inner: Inner
    /// `nil`: no proxies are trusted, and the peer is the client.
    let trusted: TrustedProxies?

    func respond(to request: Request, context: Context) async throws -> Response {
        guard let trusted else { return try await inner.respond(to: request, context: context) }
        var context = context
        let peer = context.remoteAddress
        if trusted.source == .proxyProtocol {
            context.signet.clientAddress = await Self.proxyProtocolSource(context.channel) ?? peer
        } else {
            context.signet.clientAddress = trusted.client(peer: peer, fields: request.headers)
        }
        return try await inner.respond(to: request, context: context)
    }

    /// What the connection's PROXY header named (read on its event loop, where the handler lives).
    static func proxyProtocolSource(_ channel: (any Channel)?) async -> String? {
        guard let connection = channel?.connection else { return nil }
        return try? await connection.eventLoop.submit {
            try connection.pipeline.syncOperations.handler(type: ProxyProtocolHandler.self).source
        }.get()
    }
}
