// SPDX-License-Identifier: Apache-2.0
import Foundation

/// One `WWW-Authenticate: Digest …` challenge (RFC 7616 §3.3): what a server offers, and what a
/// client reads back to answer it.
public struct DigestChallenge: Sendable, Hashable {
    public var realm: String
    public var nonce: String
    public var algorithm: DigestAlgorithm
    /// The qualities of protection offered, in the server's order of preference.
    public var qop: [DigestResponse.QualityOfProtection]
    /// The client's credentials were right but the nonce has expired: retry with this challenge's
    /// nonce without asking the user again.
    public var stale: Bool
    /// The server accepts `userhash` in place of the name.
    public var userhash: Bool
    public var opaque: String?

    public init(
        realm: String,
        nonce: String,
        algorithm: DigestAlgorithm,
        qop: [DigestResponse.QualityOfProtection] = [.auth],
        stale: Bool = false,
        userhash: Bool = true,
        opaque: String? = nil
    ) {
        self.realm = realm
        self.nonce = nonce
        self.algorithm = algorithm
        self.qop = qop
        self.stale = stale
        self.userhash = userhash
        self.opaque = opaque
    }

    /// The field value: `Digest realm="…", qop="auth, auth-int", algorithm=SHA-256, nonce="…",
    /// charset=UTF-8, userhash=true` (with `stale=true` when it applies).
    public var fieldValue: String {
        var parameters: [HTTPAuthentication.Parameter] = [
            .init("realm", realm),
            .init("qop", qop.map(\.rawValue).joined(separator: ", ")),
            .init("algorithm", algorithm.rawValue, quoted: false),
            .init("nonce", nonce),
        ]
        if let opaque { parameters.append(.init("opaque", opaque)) }
        parameters.append(.init("charset", "UTF-8", quoted: false))
        if userhash { parameters.append(.init("userhash", "true", quoted: false)) }
        if stale { parameters.append(.init("stale", "true", quoted: false)) }
        return HTTPAuthentication.fieldValue(scheme: "Digest", parameters)
    }

    /// Reads a challenge a server sent.
    ///
    /// - Throws: `malformed_header` without realm or nonce; `alg_unsupported` for an algorithm
    ///   this side does not compute.
    public init(_ authentication: HTTPAuthentication) throws {
        guard authentication.isScheme("Digest"), let realm = authentication["realm"],
            let nonce = authentication["nonce"]
        else { throw SignetError(.malformedHeader, "a Digest challenge needs realm and nonce") }
        guard let algorithm = DigestAlgorithm(parameter: authentication["algorithm"]) else {
            throw SignetError(.algUnsupported, "the Digest algorithm \(authentication["algorithm"] ?? "") is not supported")
        }
        self.realm = realm
        self.nonce = nonce
        self.algorithm = algorithm
        self.qop = FieldList.members(authentication["qop"] ?? "").compactMap {
            DigestResponse.QualityOfProtection(rawValue: $0.lowercased())
        }
        self.stale = authentication["stale"]?.lowercased() == "true"
        self.userhash = authentication["userhash"]?.lowercased() == "true"
        self.opaque = authentication["opaque"]
    }
}
