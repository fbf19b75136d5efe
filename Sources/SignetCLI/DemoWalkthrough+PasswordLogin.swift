// SPDX-License-Identifier: Apache-2.0
import Foundation
import SignetClient
import SignetCore

/// The banking app of `signet demo`: a user logs in with HTTP Digest, the device registers with a
/// CSR in the same login, then reaches its account over mutual TLS with no password at all.
extension DemoWalkthrough {
    static let bankUser = "mufasa"
    static let bankPassword = "Circle of Life"

    func runBankingApp(from first: Int, adminToken: String, nonceLifetime: Int) async throws {
        let app = try makeClient()
        var number = first

        step(number, "the bank creates a user (admin API, on the admin listener); only a PBKDF2 hash and the Digest HA1 are stored")
        let created = try await app.send(
            "PUT",
            adminBase + "/signet/v1/users/" + Self.bankUser,
            fields: [("Authorization", "Bearer \(adminToken)"), ("Content-Type", "application/json")],
            body: Array(#"{"password":"\#(Self.bankPassword)"}"#.utf8),
            sign: false
        )
        try expect(created, status: 201)
        print("   201 user \(Self.bankUser)")

        number += 1
        step(number, "log in with a wrong password")
        await app.usePassword(PasswordCredentials(user: Self.bankUser, password: "Circle Of Life"))
        try report(try await app.send("GET", base + "/echo/login", sign: false), expecting: "credentials_invalid")

        number += 1
        step(number, "log in with HTTP Digest (SHA-256): the password never crosses, the gateway proves it knows it too")
        await app.usePassword(PasswordCredentials(user: Self.bankUser, password: Self.bankPassword))
        let login = try await app.send("GET", base + "/echo/login", sign: false)
        try expect(login, status: 200)
        let seen = (login.json?["headers"] as? [String: String]) ?? [:]
        print("   200 the backend saw Signet-User: \(seen["signet-user"] ?? "-"), Signet-Trust-Level: \(seen["signet-trust-level"] ?? "-")")
        print("   Authorization reached the backend: \(seen["authorization"] == nil ? "no" : "yes")")
        print("   Authentication-Info: \(login.fields["authentication-info"].map { String($0.prefix(60)) + "…" } ?? "-") (rspauth checked)")

        number += 1
        step(number, "a captured Digest answer sent again (same nonce, same nc)")
        let challengeAnswer = try await app.transmit(try HTTPMessage.request(method: "GET", uri: base + "/echo/login"))
        let challenge = try DigestChallenge(
            try requireValue(HTTPAuthentication.challenges(challengeAnswer.fields.values("www-authenticate")).first { $0.isScheme("Digest") })
        )
        let captured = Self.answer(challenge, count: 1)
        let original = try HTTPMessage.request(method: "GET", uri: base + "/echo/login", fields: [("Authorization", captured)])
        try expect(try await app.transmit(original), status: 200)
        print("   the first time: 200")
        try report(try await app.transmit(original), expecting: "nonce_replayed")

        number += 1
        step(number, "the nonce grows stale (\(nonceLifetime) s): the right answer is refused stale, the SDK retries by itself")
        try await Task.sleep(for: .milliseconds(nonceLifetime * 1000 + 300))
        let late = Self.answer(challenge, count: 2)
        let stale = try await app.transmit(try HTTPMessage.request(method: "GET", uri: base + "/echo/login", fields: [("Authorization", late)]))
        try report(stale, expecting: "digest_nonce_stale")
        print("   challenge says stale=true: \(stale.fields.values("www-authenticate").contains { $0.contains("stale=true") })")
        try expect(try await app.send("GET", base + "/echo/login", sign: false), status: 200)
        print("   the SDK's next request: 200 (it answered the stale challenge without asking the user)")

        number += 1
        step(number, "register the device while logged in: a P-256 key, its proof and a CSR, bound to the user")
        let provider = SoftwareKeyProvider(requestCertificate: true)
        let device = try await app.register(using: provider)
        guard let owner = device.user else { throw DemoError("the device was not bound to the user") }
        print("   201 device \(device.deviceID) of \(owner), client certificate issued")

        number += 1
        step(number, "later logins: mutual TLS with the device certificate, no password")
        await app.usePassword(nil)
        try await app.useClientIdentity(
            ClientIdentity(certificateChainPEM: device.certificateChainPEM!, privateKeyPEM: provider.privateKeyPEM)
        )
        let account = try await app.send("GET", base + "/echo/account", sign: false)
        try expect(account, status: 200)
        let viaTLS = (account.json?["headers"] as? [String: String]) ?? [:]
        print(
            "   200 the backend saw Signet-User: \(viaTLS["signet-user"] ?? "-"), Signet-Trust-Level: \(viaTLS["signet-trust-level"] ?? "-"), Signet-Device: \(viaTLS["signet-device"] ?? "-")"
        )
    }
}

extension DemoWalkthrough {
    /// The bank user's Digest answer to `challenge` for `GET /echo/login`, as a client computes it.
    static func answer(_ challenge: DigestChallenge, count: UInt32) -> String {
        DigestCredentials(
            answering: challenge,
            username: bankUser,
            password: bankPassword,
            method: "GET",
            uri: "/echo/login",
            qop: .auth,
            count: count,
            cnonce: Nonce.random()
        ).fieldValue
    }
}

/// `#require` for the demo: the value, or a `DemoError`.
func requireValue<T>(_ value: T?, _ what: String = "a value") throws -> T {
    guard let value else { throw DemoError("missing \(what)") }
    return value
}
