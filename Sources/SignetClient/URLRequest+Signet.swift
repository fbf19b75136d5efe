// SPDX-License-Identifier: Apache-2.0
import Foundation
import SignetCore

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Signing the requests an app already makes with `URLSession`, and checking the gateway's signed
/// answers, without ``SignetClient``'s own connection:
///
/// ```swift
/// var request = URLRequest(url: URL(string: "https://api.example.com/scores")!)
/// request.httpMethod = "POST"
/// request.setValue("application/json", forHTTPHeaderField: "Content-Type")
/// request.httpBody = body
/// let signed = try await signer.sign(request)              // any RequestSigning
/// let (data, response) = try await session.data(for: signed)
/// try await ResponseSignatureVerifier(keys: gatewayKeys).verify(response, body: data, for: signed)
/// ```
extension RequestSigning {
    /// `request` with an RFC 9421 signature (`@method`, `@target-uri`, and for a body
    /// `content-digest` and `content-type`), `Content-Digest`, `created` and a fresh nonce.
    ///
    /// - Important: The body must be in memory (`httpBody`): a streamed body (`httpBodyStream`) is
    ///   refused, since its digest would need the whole stream before it is sent. A request with a
    ///   body must say its `Content-Type`: `URLSession` would otherwise add one after signing, and
    ///   the gateway refuses a body whose type the signature does not cover.
    /// - Throws: `malformed_message` for a request that cannot be signed as it is.
    public func sign(_ request: URLRequest, now: Date = Date()) async throws -> URLRequest {
        let signed = try await sign(try HTTPMessage(request), now: now)
        var out = request
        for line in signed.fields.lines { out.setValue(line.value, forHTTPHeaderField: line.name) }
        return out
    }
}

extension HTTPMessage {
    /// The request `URLSession` will send for `request`: method, URL, header fields, in-memory body.
    ///
    /// - Throws: `malformed_message` for a relative URL, a streamed body, or a body without a
    ///   `Content-Type`.
    public init(_ request: URLRequest) throws {
        guard let url = request.url, let scheme = url.scheme?.lowercased(), ["http", "https"].contains(scheme) else {
            throw SignetError(.malformedMessage, "a request to sign needs an absolute http(s) URL")
        }
        guard request.httpBodyStream == nil else {
            throw SignetError(
                .malformedMessage,
                "a streamed body (httpBodyStream) cannot be signed: its Content-Digest needs the whole body; set httpBody"
            )
        }
        let body = request.httpBody.map { Array($0) } ?? []
        // Sorted: a dictionary has no order, and a fixed one keeps the signature base reproducible.
        let headers = (request.allHTTPHeaderFields ?? [:]).sorted { $0.key.lowercased() < $1.key.lowercased() }
        if !body.isEmpty, !headers.contains(where: { $0.key.lowercased() == "content-type" }) {
            throw SignetError(
                .malformedMessage,
                "a request with a body needs a Content-Type: URLSession would add one after signing, uncovered"
            )
        }
        self = try HTTPMessage.request(
            method: request.httpMethod ?? "GET",
            uri: url.absoluteString,
            fields: MessageFields(headers.map { MessageFields.Field(name: $0.key, value: $0.value) }),
            body: body
        )
    }

    /// An answer `URLSession` received, as the gateway signed it.
    public init(_ response: HTTPURLResponse, body: Data) {
        var fields = MessageFields()
        for (name, value) in response.allHeaderFields {
            guard let name = name as? String, let value = value as? String else { continue }
            fields.append(name: name, value: value)
        }
        self = HTTPMessage.response(status: response.statusCode, fields: fields, body: Array(body))
    }
}

extension ResponseSignatureVerifier {
    /// Verifies an answer `URLSession` received for `request` (as signed and sent).
    ///
    /// - Throws: `response_signature_invalid`, saying why (a response that is not HTTP included).
    @discardableResult
    @concurrent public func verify(_ response: URLResponse, body: Data, for request: URLRequest, now: Date = Date()) async throws
        -> VerifiedSignature
    {
        guard let http = response as? HTTPURLResponse else {
            throw SignetError(.responseSignatureInvalid, "the response is not an HTTP response")
        }
        return try await verify(HTTPMessage(http, body: body), for: try HTTPMessage(request), now: now)
    }
}
