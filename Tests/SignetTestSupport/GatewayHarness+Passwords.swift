// SPDX-License-Identifier: Apache-2.0
import Foundation
import NIOHTTP1
import SignetCore
import SignetMiddleware
import SignetServer

/// Gateways with password login, and the client half of a Digest exchange written with SignetCore.
extension GatewayHarness {
    public static let realm = "signet-bank"

    /// The harness with `passwords` (SHA-256, SHA-512-256 and MD5 stored; PBKDF2 at its floor so
    /// tests stay quick) and password routes in front of the backend's `/echo/…`:
    /// `/echo/password` (password), `/echo/md5` (MD5 allowed), `/echo/int` (auth-int only),
    /// `/echo/keep` (Authorization kept), `/echo/either` (password or a device signature).
    public static func startWithPasswords(
        store: StoreKind = .sqlite,
        instances: Int = 1,
        tls: GatewayConfiguration.TLS? = nil,
        transport: Transport = .sockets,
        clock: ManualClock? = nil,
        adjust: (inout GatewayConfiguration) -> Void = { _ in }
    ) async throws -> GatewayHarness {
        try await start(store: store, instances: instances, tls: tls, transport: transport, clock: clock) { configuration in
            var passwords = GatewayConfiguration.Passwords(realm: realm, digestAlgorithms: [.sha256, .sha512_256, .md5])
            passwords.basicIterations = PasswordHash.minimumIterations
            configuration.passwords = passwords
            let md5 = GatewayConfiguration.Route(prefix: "/echo/md5", access: .password(.init(allowMD5: true)))
            let authInt = GatewayConfiguration.Route(prefix: "/echo/int", access: .password(.init(requireAuthInt: true)))
            let keep = GatewayConfiguration.Route(prefix: "/echo/keep", access: .password(.init(keepAuthorization: true)))
            configuration.routes.insert(
                contentsOf: [
                    .init(prefix: "/echo/password", access: .password), md5, authInt, keep,
                    .init(prefix: "/echo/either", access: .passwordOrDevice),
                ],
                at: 0
            )
            adjust(&configuration)
        }
    }

    /// Creates (or changes) a user through the admin API; the status it answered.
    @discardableResult
    public func putUser(_ name: String, password: String, gateway: Int = 0, token: String? = adminToken) async throws -> Int {
        var headers: [(String, String)] = [("Content-Type", "application/json")]
        if let token { headers.append(("Authorization", "Bearer \(token)")) }
        let body = try JSONSerialization.data(withJSONObject: ["password": password])
        return try await Self.send(
            method: "PUT",
            url: url(gateway) + "/signet/v1/users/" + Self.pathSegment(name),
            headers: headers,
            body: Array(body)
        ).status
    }

    /// `name` percent-encoded as one path segment.
    public static func pathSegment(_ name: String) -> String {
        name.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? name
    }

    /// The Digest challenges of a `401`, in order.
    public static func digestChallenges(_ answer: Answer) throws -> [DigestChallenge] {
        try HTTPAuthentication.challenges(answer.headers["WWW-Authenticate"]).filter { $0.isScheme("Digest") }.map(DigestChallenge.init)
    }

    /// Asks `path` for a challenge (a request without credentials) and returns the one for `algorithm`.
    public func challenge(_ path: String, algorithm: DigestAlgorithm = .sha256, method: String = "GET", gateway: Int = 0) async throws
        -> DigestChallenge
    {
        let answer = try await Self.send(method: method, url: url(gateway) + path)
        guard answer.status == 401, let challenge = try Self.digestChallenges(answer).first(where: { $0.algorithm == algorithm })
        else { throw HarnessError("no \(algorithm.rawValue) challenge: \(answer.status) \(answer.text)") }
        return challenge
    }

    /// A Digest `Authorization` value for a request.
    public static func digest(
        _ challenge: DigestChallenge,
        user: String,
        password: String,
        method: String = "GET",
        uri: String,
        body: [UInt8] = [],
        qop: DigestResponse.QualityOfProtection = .auth,
        count: UInt32 = 1,
        useUserhash: Bool = false
    ) -> DigestCredentials {
        DigestCredentials(
            answering: challenge,
            username: user,
            password: password,
            method: method,
            uri: uri,
            body: body,
            qop: qop,
            count: count,
            cnonce: Nonce.random(),
            useUserhash: useUserhash
        )
    }
}
