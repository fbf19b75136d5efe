// SPDX-License-Identifier: Apache-2.0
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import SignetCore

/// RFC 9457 `application/problem+json` answers carrying Signet's reason code.
///
/// The status comes from the code's entry in the catalogue (`SignetError/Code/httpStatus`).
public enum ProblemResponse {
    /// The HTTP status for a reason code.
    public static func status(for code: SignetError.Code) -> HTTPResponse.Status {
        HTTPResponse.Status(code: code.httpStatus)
    }

    /// The problem document for `error`; with `debug`, also the signature base the verifier built.
    ///
    /// - Parameters:
    ///   - error: The refusal, with its stable code.
    ///   - debug: Add the signature base the verifier built (never in production).
    ///   - challenges: `WWW-Authenticate` values (``ChallengedRefusal``); a `401` without them asks
    ///     for a signature (`Bearer` for the admin API).
    public static func make(_ error: SignetError, debug: Bool, challenges: [String] = []) -> Response {
        let (status, headers, json) = parts(error, debug: debug, challenges: challenges)
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: json)))
    }

    /// Status, header fields and JSON body of the answer, for writers below Hummingbird's `Response`.
    package static func parts(_ error: SignetError, debug: Bool, challenges: [String] = []) -> (HTTPResponse.Status, HTTPFields, [UInt8]) {
        let status = status(for: error.code)
        var document: [String: Any] = [
            // RFC 9458 §5.3 names its own problem type, which Oblivious HTTP clients look for.
            "type": error.code == .ohttpKeyUnknown
                ? "https://iana.org/assignments/http-problem-types#ohttp-key"
                : "urn:signet:reason:\(error.code.rawValue)",
            "title": title(status),
            "status": status.code,
            "reason": error.code.rawValue,
            "detail": error.reason,
        ]
        // OAuth clients read a client attestation refusal's code from `error` (RFC 6749 §5.2).
        if let oauth = ClientAttestationVerifier.oauthError(for: error.code) { document["error"] = oauth }
        if debug, let base = error.signatureBase { document["signatureBase"] = base }
        let json = (try? JSONSerialization.data(withJSONObject: document, options: [.sortedKeys])) ?? Data("{}".utf8)
        var headers = HTTPFields()
        headers[.contentType] = "application/problem+json"
        if !challenges.isEmpty {
            for challenge in challenges { headers.append(HTTPField(name: .wwwAuthenticate, value: challenge)) }
        } else if status == .unauthorized {
            headers[.wwwAuthenticate] = error.code == .adminUnauthorized ? "Bearer" : "Signature"
        }
        if let seconds = error.retryAfterSeconds { headers[.retryAfter] = String(max(1, seconds)) }
        return (status, headers, Array(json))
    }

    /// Any error as a `SignetError`: Hummingbird's own errors by their status, anything else
    /// `internal_error` with nothing of the original in the answer.
    public static func signetError(from error: any Error) -> SignetError {
        if let error = error as? SignetError { return error }
        if let refusal = error as? ChallengedRefusal { return refusal.error }
        if let refusal = error as? MethodNotAllowed { return refusal.error }
        if let error = error as? any HTTPResponseError {
            switch error.status {
            case .notFound: return SignetError(.notFound, "no such route")
            case .methodNotAllowed: return SignetError(.methodNotAllowed, "the method is not allowed here")
            case .contentTooLarge: return SignetError(.bodyTooLarge, "the body is too large")
            case .requestHeaderFieldsTooLarge: return SignetError(.headerTooLarge, "the header section is too large")
            case .badRequest: return SignetError(.malformedMessage, "the request is malformed")
            default: break
            }
        }
        return SignetError(.internalError, "the server failed to handle the request")
    }

    /// The `WWW-Authenticate` values a thrown error asks the answer to carry.
    public static func challenges(of error: any Error) -> [String] {
        (error as? ChallengedRefusal)?.challenges ?? []
    }

    static func title(_ status: HTTPResponse.Status) -> String {
        switch status {
        case .badRequest: "Malformed request"
        case .unauthorized: "Request not authenticated"
        case .forbidden: "Not allowed for this client"
        case .tooManyRequests: "Too many requests"
        case .serviceUnavailable: "Service unavailable"
        case .contentTooLarge: "Body too large"
        case .unsupportedMediaType: "Unsupported media type"
        case .requestHeaderFieldsTooLarge: "Header section too large"
        case .conflict: "Already registered"
        case .notFound: "Not found"
        case .methodNotAllowed: "Method not allowed"
        case .badGateway, .gatewayTimeout: "Upstream failed"
        case .internalServerError: "Internal error"
        default: "Request rejected"
        }
    }
}

/// A thrown ``SignetError`` renders as problem+json even where no ``ProblemMiddleware`` is installed
/// (without the debug signature base).
extension SignetError: HTTPResponseError {
    public var status: HTTPResponse.Status { ProblemResponse.status(for: code) }

    public func response(from request: Request, context: some RequestContext) throws -> Response {
        ProblemResponse.make(self, debug: false)
    }
}
