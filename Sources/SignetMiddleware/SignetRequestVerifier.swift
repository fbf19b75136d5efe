// SPDX-License-Identifier: Apache-2.0
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import SignetCore

/// Turns a Hummingbird request into a verified ``SignetIdentity``, or a `SignetError`.
///
/// Reads the exact body bytes (bounded), rebuilds the message as the client signed it — with the
/// public scheme and authority from configuration when Signet sits behind a TLS-terminating proxy —
/// and verifies it with the route's requirement checked as soon as the key is known. Both replay
/// guards (nonce, signed counter) are the `MessageVerifier`'s. Used by
/// ``SignetVerificationMiddleware``, in the gateway as in any Hummingbird app.
public struct SignetRequestVerifier: Sendable {
    public var verifier: MessageVerifier
    /// `https` when clients reach Signet over TLS, even if a proxy terminates it.
    public var publicScheme: String
    /// The authority clients address; `nil` takes the request's own `Host`.
    public var publicAuthority: String?
    public var maximumBodyBytes: Int
    /// Refuses (or only flags) App Attest devices whose risk metric is above a limit.
    public var riskLimit: RiskLimit?

    public init(
        verifier: MessageVerifier,
        publicScheme: String,
        publicAuthority: String? = nil,
        maximumBodyBytes: Int = 1 << 20,
        riskLimit: RiskLimit? = nil
    ) {
        self.riskLimit = riskLimit
        self.verifier = verifier
        self.publicScheme = publicScheme
        self.publicAuthority = publicAuthority
        self.maximumBodyBytes = maximumBodyBytes
    }

    /// Verifies `request`, leaving its body collected in it for whoever handles it next.
    ///
    /// - Parameters:
    ///   - request: The request; its body is read (bounded) and left in it.
    ///   - receivedTarget: The target as the client sent it, when routing normalised it
    ///     (``SignetRequestState/receivedTarget``): the signature covers what the client sent.
    ///   - requirement: What the route asks of the key, checked before any cryptography.
    ///   - now: The verifier's time.
    public func verify(
        _ request: inout Request,
        receivedTarget: String? = nil,
        requirement: AccessRequirement = .verified,
        now: Date
    ) async throws -> (identity: SignetIdentity, message: HTTPMessage) {
        let message = try await message(for: &request, receivedTarget: receivedTarget)
        return (try await verify(message: message, requirement: requirement, now: now), message)
    }

    /// Verifies a message; a key whose owner does not meet `requirement` is refused before any
    /// cryptography and before a nonce is claimed or a counter advanced.
    public func verify(
        message: HTTPMessage,
        requirement: AccessRequirement = .verified,
        now: Date
    ) async throws -> SignetIdentity {
        do {
            return SignetIdentity(
                try await verifier.verify(message, now: now) { record in
                    try requirement.authorize(record.owner)
                    try riskLimit?.check(record.owner)
                }
            )
        } catch let error as SignetError where error.code == .signatureInvalid {
            throw Self.namingTheURL(error, of: message)
        }
    }

    /// `signature_invalid` saying which URL the gateway verified: public facts about the gateway, and
    /// the usual cause — a client that signed `http://127.0.0.1:8080` while the gateway checks
    /// `https://api.example.com` (`publicScheme`, `publicAuthority`) fails here, and nothing else said so.
    static func namingTheURL(_ error: SignetError, of message: HTTPMessage) -> SignetError {
        guard let target = message.target else { return error }
        var named = SignetError(
            error.code,
            "\(error.reason); the gateway verified @scheme \(target.scheme), @authority \(target.authority), @target-uri \(target.targetURI)",
            signatureBase: error.signatureBase
        )
        named.challenges = error.challenges
        named.retryAfterSeconds = error.retryAfterSeconds
        return named
    }

    /// The SignetCore view of `request`, body included.
    public func message(for request: inout Request, receivedTarget: String? = nil) async throws -> HTTPMessage {
        let body = try await request.collectBody(upTo: maximumBodyBytes, refusing: "a request body")
        var head = request.head
        if let receivedTarget { head.path = receivedTarget }
        return try Self.message(head, body: body, scheme: publicScheme, authority: publicAuthority)
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
