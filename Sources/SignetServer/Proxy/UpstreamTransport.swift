// SPDX-License-Identifier: Apache-2.0
import HTTPTypes
import NIOCore
import ServiceLifecycle

/// What carries proxied requests to the upstream: ``UpstreamClient`` (kept-alive HTTP/1.1
/// connections) in the gateway; a recording upstream (`RecordingUpstream`, SignetTestSupport) in
/// router tests, which then see what was forwarded — the target, the fields left after
/// ``ForwardedFields``, the body — without opening a socket.
package protocol UpstreamTransport: Service {
    /// Where requests go; the proxy writes the request target from it.
    var origin: UpstreamOrigin { get }
    /// `Host` for every request.
    var authority: String { get }
    /// Sends one request — its `path` the request target's bytes, its `authority` the `Host` —
    /// and returns at the response head.
    ///
    /// - Throws: ``UpstreamFailure``.
    func execute(_ request: HTTPRequest, body: ByteBuffer?, timeout: TimeAmount) async throws -> UpstreamResponse
    /// Whether the upstream accepts a new connection now (readiness).
    ///
    /// - Throws: ``UpstreamFailure``.
    func probe(timeout: TimeAmount) async throws
    /// Closes idle connections.
    func closeIdle()
}

extension UpstreamClient: UpstreamTransport {}
