// SPDX-License-Identifier: Apache-2.0
import Foundation
import SignetCore

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `URLSession`'s `data(for:)` and `upload(for:from:)`, through a ``SignetClient``: an app swaps
/// its session for this one where it calls its API, and every request is signed (anew for each
/// try and each same-origin redirect), its answer's signature checked, the clock corrected from
/// the gateway's, failures retried where that is safe (``RequestRetry``), the key registered again
/// when it is gone (``SignetClient/start(with:origin:)``), and a refusal by the gateway thrown with its
/// reason code.
///
/// ```swift
/// let client = try SignetClient(configuration: .init(origins: [try Origin("https://api.example.com")]))
/// try await client.start(with: attest)                      // an AppAttestLifecycle
/// let session = SignetURLSession(client: client)
/// let (data, response) = try await session.data(for: request)  // as with URLSession
/// ```
///
/// Requests go only to the client's configured origins (anything else is refused before it is
/// sent), with an in-memory body (a streamed body cannot be digested before it is sent).
public struct SignetURLSession: Sendable {
    public let client: SignetClient
    /// Throw the gateway's refusals as `SignetError` (its reason code and detail) rather than
    /// return them as answers: `true` by default, so an app branches on `error.code`.
    public var throwsRefusals: Bool

    public init(client: SignetClient, throwsRefusals: Bool = true) {
        self.client = client
        self.throwsRefusals = throwsRefusals
    }

    /// Sends `request` as the client does and answers as `URLSession` does.
    ///
    /// - Throws: `SignetError`: `malformed_message` for a request that cannot be signed as it is,
    ///   `origin_not_allowed` for a URL off the configured origins, the transport's failures, and
    ///   with ``throwsRefusals`` the gateway's refusal.
    public func data(for request: URLRequest) async throws -> (Data, HTTPURLResponse) {
        let message = try HTTPMessage(request)
        let answer = try await client.send(
            message.method ?? "GET",
            message.target?.targetURI ?? "",
            fields: MessageFields(message.fields.lines.filter { $0.name.lowercased() != "host" }),
            body: message.body
        )
        if throwsRefusals, let refusal = Self.refusal(in: answer) { throw refusal }
        return (Data(answer.body), try Self.urlResponse(answer, for: request))
    }

    /// `request` with `body` as its body, as `URLSession.upload(for:from:)`.
    public func upload(for request: URLRequest, from body: Data) async throws -> (Data, HTTPURLResponse) {
        var request = request
        request.httpBody = body
        return try await data(for: request)
    }

    /// The gateway's refusal in `answer` (``ClientResponse/gatewayRefusal``), as the error to throw.
    static func refusal(in answer: ClientResponse) -> SignetError? {
        guard let code = answer.gatewayRefusal else { return nil }
        var error = SignetError(code, answer.json?["detail"] as? String ?? "refused by the gateway (\(answer.status))")
        error.retryAfterSeconds = answer.fields["retry-after"].flatMap(RequestRetry.retryAfterSeconds)
        return error
    }

    static func urlResponse(_ answer: ClientResponse, for request: URLRequest) throws -> HTTPURLResponse {
        // URLSession's shape: one value per name, repeated fields joined as RFC 9110 §5.3 allows.
        var fields: [String: String] = [:]
        for line in answer.fields.lines {
            fields[line.name] = fields[line.name].map { $0 + ", " + line.value } ?? line.value
        }
        guard let url = request.url,
            let response = HTTPURLResponse(url: url, statusCode: answer.status, httpVersion: "HTTP/1.1", headerFields: fields)
        else { throw SignetError(.malformedMessage, "the answer cannot be made an HTTPURLResponse") }
        return response
    }
}
