// SPDX-License-Identifier: Apache-2.0
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import SignetAppAttest
import SignetCore
import SignetStore

/// RFC 9457 `application/problem+json` answers carrying Signet's reason code.
public enum ProblemResponse {
    /// The HTTP status for a reason code.
    public static func status(for code: SignetError.Code) -> HTTPResponse.Status {
        switch code {
        case .malformedHeader, .malformedMessage, .componentUnsupported, .malformedCBOR: .badRequest
        case .headerTooLarge: .requestHeaderFieldsTooLarge
        case .bodyTooLarge: .contentTooLarge
        case .rateLimited: .tooManyRequests
        case .deviceExists: .conflict
        case .trustLevelInsufficient: .forbidden
        case .notFound: .notFound
        case .storeUnavailable, .nonceStoreFull, .upstreamUnavailable: .serviceUnavailable
        default: .unauthorized
        }
    }

    /// The problem document for `error`; with `debug`, also the signature base the verifier built.
    public static func make(_ error: SignetError, debug: Bool) -> Response {
        let status = status(for: error.code)
        var document: [String: Any] = [
            "type": "urn:signet:reason:\(error.code.rawValue)",
            "title": title(error.code),
            "status": status.code,
            "reason": error.code.rawValue,
            "detail": error.reason,
        ]
        if debug, let base = error.signatureBase { document["signatureBase"] = base }
        let json = (try? JSONSerialization.data(withJSONObject: document, options: [.sortedKeys])) ?? Data("{}".utf8)
        var headers = HTTPFields()
        headers[.contentType] = "application/problem+json"
        if status == .unauthorized { headers[.wwwAuthenticate] = "Signature" }
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: json)))
    }

    static func title(_ code: SignetError.Code) -> String {
        switch status(for: code) {
        case .badRequest: "Malformed request"
        case .unauthorized: "Request not authenticated"
        case .forbidden: "Not allowed for this client"
        case .tooManyRequests: "Too many requests"
        case .serviceUnavailable: "Service unavailable"
        case .contentTooLarge: "Body too large"
        case .conflict: "Already registered"
        case .notFound: "Not found"
        default: "Request rejected"
        }
    }
}

extension SignetError.Code {
    /// The route requires a higher trust level than the client's key has.
    public static let trustLevelInsufficient = Self("trust_level_insufficient")
    /// No such device or route.
    public static let notFound = Self("not_found")
    /// The upstream could not be reached.
    public static let upstreamUnavailable = Self("upstream_unavailable")
}
