// SPDX-License-Identifier: Apache-2.0
import HTTPTypes
import SignetMiddleware

/// The heads that cross the gateway, written once for both paths that forward a request — the
/// async proxy (``GatewayProxy/forward(_:context:)``) and the event-loop data plane
/// (`LoopExchange`) — so the two cannot drift apart.
extension GatewayProxy {
    /// The head the upstream receives: the client's fields less those the gateway owns, with its
    /// own forwarding, identity and verdict fields (``ForwardedFields``), the length of the body as
    /// read (never the client's framing), and the routed target under the upstream's origin, for
    /// the upstream's authority.
    ///
    /// - Parameters:
    ///   - method: The request's method.
    ///   - routedTarget: The target as routing normalised it: the upstream acts on these bytes.
    ///   - received: The client's fields, less any the gateway keeps back.
    ///   - framed: The client framed a body (`Content-Length`), even an empty one.
    ///   - bodyBytes: The body as read, whole.
    ///   - publicAuthority: The authority clients address (configured, or the request's own).
    ///   - requestID: `X-Request-Id`, where the gateway made it (the client sent none).
    static func upstreamHead(
        method: HTTPRequest.Method,
        routedTarget: String,
        received: HTTPFields,
        framed: Bool,
        bodyBytes: Int,
        identity: SignetIdentity?,
        verdict: String?,
        client: String?,
        scheme: String,
        publicAuthority: String?,
        requestID: String? = nil,
        upstream: any UpstreamTransport
    ) -> HTTPRequest {
        // The client's own length is removed with the hop-by-hop fields: this one is appended last.
        let writesLength = bodyBytes > 0 || framed || method == .post || method == .put || method == .patch
        let fields = ForwardedFields.outbound(
            received,
            identity: identity,
            verdict: verdict,
            client: client,
            scheme: scheme,
            authority: publicAuthority,
            requestID: requestID,
            contentLength: writesLength ? String(bodyBytes) : nil
        )
        // `Host` is the upstream's authority, written first as the head goes out.
        let target = upstream.origin.requestTarget(routedTarget: routedTarget)
        return HTTPRequest(method: method, scheme: nil, authority: upstream.authority, path: target, headerFields: fields)
    }

    /// The fields a client gets with the upstream's answer: hop-by-hop ones gone
    /// (``ForwardedFields``) and — where this gateway signs answers — any `gateway` signature the
    /// upstream wrote: a client never sees one the gateway did not make, on an unsigned route's
    /// answer either. The length is the caller's to keep or write.
    static func answerFields(_ upstream: HTTPFields, gatewaySigns: Bool) -> HTTPFields {
        var fields = ForwardedFields.inbound(upstream)
        if gatewaySigns { removeSignature(labelled: signatureLabel, from: &fields) }
        return fields
    }
}
