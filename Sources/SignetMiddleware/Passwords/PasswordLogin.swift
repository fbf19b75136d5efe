// SPDX-License-Identifier: Apache-2.0
import SignetCore

/// A password login that succeeded: who, how, and what the answer tells the client back.
public struct PasswordLogin: Sendable {
    public enum Scheme: String, Sendable {
        case basic = "Basic"
        case digest = "Digest"
    }

    public var user: String
    public var scheme: Scheme
    /// The Digest exchange, for `Authentication-Info`.
    var digest: (credentials: DigestCredentials, ha1: String)?

    /// The identity a route hands on: the user at trust level `password`, no key.
    public var identity: SignetIdentity {
        SignetIdentity(
            deviceID: nil,
            keyID: "",
            trustLevel: .password,
            algorithm: digest.map { "digest-" + $0.credentials.algorithm.rawValue.lowercased() } ?? "basic",
            user: user
        )
    }

    /// Whether ``authenticationInfo(responseBody:)`` needs the response body (`qop=auth-int`).
    public var needsResponseBody: Bool { digest?.credentials.qop == .authInt }

    /// The `Authentication-Info` value of a Digest login (RFC 7616 §3.5): `rspauth` proves to the
    /// client that the server knows its password too. `nil` for Basic.
    public func authenticationInfo(responseBody: [UInt8] = []) -> String? {
        guard let (credentials, ha1) = digest else { return nil }
        let rspauth = DigestResponse.rspauth(
            ha1: ha1,
            nonce: credentials.nonce,
            nc: credentials.nc,
            cnonce: credentials.cnonce,
            qop: credentials.qop,
            uri: credentials.uri,
            responseBody: responseBody,
            algorithm: credentials.algorithm
        )
        return HTTPAuthentication.list([
            .init("qop", credentials.qop.rawValue, quoted: false),
            .init("rspauth", rspauth),
            .init("cnonce", credentials.cnonce),
            .init("nc", credentials.nc, quoted: false),
        ])
    }
}
