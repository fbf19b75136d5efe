// SPDX-License-Identifier: Apache-2.0
import SignetCore

/// Password login: a request answered `401` with Digest (or Basic) challenges is sent again once
/// with the answer; later requests to the origin answer the same nonce at once with the next `nc`,
/// and a `stale=true` challenge is answered without asking anyone. The server's `rspauth` is
/// checked when it sends one.
extension SignetClient {
    /// A Digest nonce in use with an origin, and how many requests answered it.
    struct DigestSession: Sendable {
        var challenge: DigestChallenge
        var count: UInt32
        /// The protection space seen so far: the directories of the paths that were challenged
        /// (RFC 7617 §2.2's rule), where the nonce is sent before being asked.
        var space: Set<String>
    }

    /// Registration endpoints, where a login binds the device to the user.
    static let loginCapablePaths: Set<String> = ["/signet/v1/devices", "/signet/v1/devices/attest"]

    /// `/a/b/c` → `/a/b/`: what RFC 7617 §2.2 lets a client assume shares the protection space.
    static func directory(of target: RequestTarget) -> String {
        let path = target.path.isEmpty ? "/" : target.path
        return String(path[...(path.lastIndex(of: "/") ?? path.startIndex)])
    }

    /// Logs in with `credentials` wherever a server asks for a password; `nil` stops.
    public func usePassword(_ credentials: PasswordCredentials?) {
        password = credentials
        digestSessions = [:]
    }

    /// The `Authorization` value to send with `message` before any challenge: the next count of
    /// the origin's Digest nonce, only within the protection space seen challenged (and on the
    /// registration endpoints), and never on a request that is signed: the password's material
    /// goes only where a password is asked for.
    func preemptiveAuthorization(for message: HTTPMessage, signed: Bool) throws -> (String, DigestCredentials?)? {
        guard !signed, let password, let target = message.target, let origin = try? Origin(target: target),
            var session = digestSessions[origin],
            Self.loginCapablePaths.contains(target.path) || session.space.contains(where: { target.path.hasPrefix($0) })
        else { return nil }
        session.count += 1
        digestSessions[origin] = session
        return try answer(session.challenge, count: session.count, credentials: password, message: message)
    }

    /// The `Authorization` value answering the challenges of a `401`, or `nil` when none can be.
    func authorization(answering response: ClientResponse, for message: HTTPMessage) throws -> (String, DigestCredentials?)? {
        guard let password, let target = message.target, let origin = try? Origin(target: target) else { return nil }
        let challenges = (try? HTTPAuthentication.challenges(response.fields.values("www-authenticate"))) ?? []
        let digests = challenges.filter { $0.isScheme("Digest") }.compactMap { try? DigestChallenge($0) }
        // The server's order is its preference; MD5 only when nothing else is offered and allowed.
        if let challenge = digests.first(where: { $0.algorithm != .md5 }) ?? (password.allowMD5 ? digests.first : nil) {
            var space = digestSessions[origin]?.space ?? []
            space.insert(Self.directory(of: target))
            digestSessions[origin] = DigestSession(challenge: challenge, count: 1, space: space)
            return try answer(challenge, count: 1, credentials: password, message: message)
        }
        if password.allowBasic, origin.isTLS, challenges.contains(where: { $0.isScheme("Basic") }) {
            return (BasicCredentials(username: password.user, password: password.password).fieldValue, nil)
        }
        return nil
    }

    private func answer(
        _ challenge: DigestChallenge,
        count: UInt32,
        credentials: PasswordCredentials,
        message: HTTPMessage
    ) throws -> (String, DigestCredentials?) {
        guard let target = message.target, let method = message.method else {
            throw SignetError(.malformedMessage, "not a request")
        }
        // auth unless the server asks for the body to be covered too.
        let qop: DigestResponse.QualityOfProtection = challenge.qop.contains(.auth) ? .auth : .authInt
        let digest = DigestCredentials(
            answering: challenge,
            username: credentials.user,
            password: credentials.password,
            method: method,
            uri: Self.originForm(target),
            body: message.body,
            qop: qop,
            count: count,
            cnonce: Nonce.random(),
            useUserhash: credentials.useUserhash
        )
        return (digest.fieldValue, digest)
    }

    /// Whether a `401` says the password was right but the nonce expired (`stale=true`).
    static func isStale(_ response: ClientResponse) -> Bool {
        let challenges = (try? HTTPAuthentication.challenges(response.fields.values("www-authenticate"))) ?? []
        return challenges.contains { $0.isScheme("Digest") && $0["stale"]?.lowercased() == "true" }
    }

    /// Checks `rspauth` in the answer's `Authentication-Info`, when there is one: a server that
    /// does not know the password cannot make it.
    /// With ``PasswordCredentials/requireServerProof``, a successful answer without one is refused.
    func checkServerProof(_ response: ClientResponse, digest: DigestCredentials?) throws {
        guard let digest, let password else { return }
        guard let info = response.fields["authentication-info"],
            let rspauth = try HTTPAuthentication(credentials: "Digest " + info)["rspauth"]
        else {
            if password.requireServerProof, (200..<300).contains(response.status) {
                throw SignetError(.responseSignatureInvalid, "the answer carries no rspauth proving the server knows the password")
            }
            return
        }
        let ha1 = DigestResponse.ha1(username: password.user, realm: digest.realm, password: password.password, algorithm: digest.algorithm)
        let expected = DigestResponse.rspauth(
            ha1: ha1,
            nonce: digest.nonce,
            nc: digest.nc,
            cnonce: digest.cnonce,
            qop: digest.qop,
            uri: digest.uri,
            responseBody: response.body,
            algorithm: digest.algorithm
        )
        guard ConstantTime.equals(Array(expected.utf8), Array(rspauth.lowercased().utf8)) else {
            throw SignetError(.responseSignatureInvalid, "the server's rspauth does not prove it knows the password")
        }
    }
}
