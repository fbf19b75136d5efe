// SPDX-License-Identifier: Apache-2.0

/// The values of an RFC 7616 exchange, computed as §3.4 writes them, with `H` the algorithm's
/// lowercase hex digest:
///
/// - `HA1 = H(username ":" realm ":" password)` — what the server stores instead of the password;
/// - `response = H(HA1 ":" nonce ":" nc ":" cnonce ":" qop ":" H(A2))`, with
///   `A2 = method ":" uri` for `qop=auth` and `method ":" uri ":" H(body)` for `auth-int`;
/// - `rspauth`, the server's proof in `Authentication-Info`, the same with an empty method (§3.5);
/// - `userhash = H(username ":" realm)` (§3.4.4).
public enum DigestResponse {
    /// The quality of protection: the request line (`auth`) or also the body (`auth-int`).
    public enum QualityOfProtection: String, Sendable, CaseIterable {
        case auth
        case authInt = "auth-int"
    }

    /// `H(username ":" realm ":" password)`.
    public static func ha1(username: String, realm: String, password: String, algorithm: DigestAlgorithm) -> String {
        algorithm.hex(username + ":" + realm + ":" + password)
    }

    /// `H(username ":" realm)`, sent in place of the name when `userhash=true`.
    public static func userhash(username: String, realm: String, algorithm: DigestAlgorithm) -> String {
        algorithm.hex(username + ":" + realm)
    }

    /// The client's `response` for a request.
    ///
    /// - Parameters:
    ///   - ha1: ``ha1(username:realm:password:algorithm:)`` of the user.
    ///   - nonce: The server's nonce, as the challenge gave it.
    ///   - nc: The nonce count as sent: eight hex digits.
    ///   - cnonce: The client's nonce.
    ///   - qop: What the response covers.
    ///   - method: The request method.
    ///   - uri: The request target, as sent.
    ///   - body: The request body; used only for `auth-int`.
    ///   - algorithm: The hash.
    public static func response(
        ha1: String,
        nonce: String,
        nc: String,
        cnonce: String,
        qop: QualityOfProtection,
        method: String,
        uri: String,
        body: [UInt8] = [],
        algorithm: DigestAlgorithm
    ) -> String {
        let ha2 = algorithm.hex(a2(method: method, uri: uri, qop: qop, body: body, algorithm: algorithm))
        return algorithm.hex(ha1 + ":" + nonce + ":" + nc + ":" + cnonce + ":" + qop.rawValue + ":" + ha2)
    }

    /// The server's `rspauth` for its answer: as ``response(ha1:nonce:nc:cnonce:qop:method:uri:body:algorithm:)``
    /// with an empty method, and for `auth-int` the digest of the response body.
    public static func rspauth(
        ha1: String,
        nonce: String,
        nc: String,
        cnonce: String,
        qop: QualityOfProtection,
        uri: String,
        responseBody: [UInt8] = [],
        algorithm: DigestAlgorithm
    ) -> String {
        response(
            ha1: ha1,
            nonce: nonce,
            nc: nc,
            cnonce: cnonce,
            qop: qop,
            method: "",
            uri: uri,
            body: responseBody,
            algorithm: algorithm
        )
    }

    static func a2(method: String, uri: String, qop: QualityOfProtection, body: [UInt8], algorithm: DigestAlgorithm)
        -> String
    {
        switch qop {
        case .auth: method + ":" + uri
        case .authInt: method + ":" + uri + ":" + algorithm.hex(body)
        }
    }
}
