// SPDX-License-Identifier: Apache-2.0
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import SignetCore
import SignetStore

/// Turns a Hummingbird request into a verified ``SignetIdentity``, or a ``SignetError``.
///
/// Reads the exact body bytes (bounded), rebuilds the message as the client signed it — with the
/// public scheme and authority from configuration when Signet sits behind a TLS-terminating proxy —
/// and verifies it. Shared by ``SignetVerificationMiddleware`` and the gateway.
public struct SignetRequestVerifier: Sendable {
    public var verifier: MessageVerifier
    /// `https` when clients reach Signet over TLS, even if a proxy terminates it.
    public var publicScheme: String
    /// The authority clients address; `nil` takes the request's own `Host`.
    public var publicAuthority: String?
    public var maximumBodyBytes: Int
    /// Where signed counters (App Attest) are advanced, atomically; `nil` when no algorithm has one.
    public var counters: (any DeviceStore)?
    /// Counters below the highest still accepted once each (``CounterWindow``); 0 is strict.
    public var counterWindow: Int

    public init(
        verifier: MessageVerifier,
        publicScheme: String,
        publicAuthority: String? = nil,
        maximumBodyBytes: Int = 1 << 20,
        counters: (any DeviceStore)? = nil,
        counterWindow: Int = 0
    ) {
        self.counterWindow = counterWindow
        self.verifier = verifier
        self.publicScheme = publicScheme
        self.publicAuthority = publicAuthority
        self.maximumBodyBytes = maximumBodyBytes
        self.counters = counters
    }

    /// Verifies `request`, leaving its body collected in it for whoever handles it next.
    public func verify(_ request: inout Request, now: Date) async throws -> SignetIdentity {
        try await verify(message: try await message(for: &request), now: now)
    }

    /// Verifies a message and, when its signature carries a counter, advances the device's stored
    /// counter atomically in the store: a counter already used, or not above the highest (beyond the
    /// configured window), is rejected.
    public func verify(message: HTTPMessage, now: Date) async throws -> SignetIdentity {
        let verified = try await verifier.verify(message, now: now)
        let identity = SignetIdentity(verified)
        if let counter = verified.evidence.counter {
            guard let counters, let deviceID = identity.deviceID else {
                throw SignetError(.counterNotIncreasing, "no store to advance the signed counter in")
            }
            guard try await counters.advanceCounter(deviceID: deviceID, to: counter, window: counterWindow) else {
                throw SignetError(
                    .counterNotIncreasing,
                    counterWindow == 0
                        ? "counter \(counter) is not above the stored one"
                        : "counter \(counter) was used already or is older than the \(counterWindow)-counter window"
                )
            }
        }
        return identity
    }

    /// The SignetCore view of `request`, body included.
    public func message(for request: inout Request) async throws -> HTTPMessage {
        let body: ByteBuffer
        do {
            body = try await request.collectBody(upTo: maximumBodyBytes)
        } catch let error as any HTTPResponseError where error.status == .contentTooLarge {
            throw SignetError(.bodyTooLarge, "the body exceeds \(maximumBodyBytes) bytes")
        }
        return try Self.message(request.head, body: body, scheme: publicScheme, authority: publicAuthority)
    }

    static func message(_ head: HTTPRequest, body: ByteBuffer, scheme: String, authority: String?) throws -> HTTPMessage
    {
        guard let host = authority ?? head.authority else {
            throw SignetError(.malformedMessage, "the request has no Host")
        }
        let path = head.path ?? "/"
        let target: RequestTarget
        if path == "*" {
            target = RequestTarget(scheme: scheme, authority: host, path: "", query: nil, form: .asterisk)
        } else {
            let mark = path.firstIndex(of: "?")
            target = RequestTarget(
                scheme: scheme,
                authority: host,
                path: String(path[..<(mark ?? path.endIndex)]),
                query: mark.map { String(path[path.index(after: $0)...]) },
                form: .origin
            )
        }
        var fields = MessageFields()
        // HTTP/1.1 carries the authority as a Host field; HTTPTypes moves it into the head. Put it
        // back so a signature covering "host" sees what was on the wire.
        if let wireHost = head.authority { fields.append(name: "Host", value: wireHost) }
        for field in head.headerFields { fields.append(name: field.name.rawName, value: field.value) }
        return HTTPMessage(
            head: .request(method: head.method.rawValue, target: target),
            fields: fields,
            body: Array(buffer: body)
        )
    }
}
