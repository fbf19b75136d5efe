// SPDX-License-Identifier: Apache-2.0
import Foundation
import SignetClient
import SignetCore
import SignetServer
import SignetStore
import SignetTestSupport
import SwiftASN1
import X509
import Testing

/// Password login over loopback TLS with clients we did not write (curl, python-requests), and the
/// banking app's flow through the SDK: log in, register the device with a CSR, then mutual TLS
/// without the password — until the user is deleted.
@Suite(.awaitsCleanups) struct PasswordLoginFlowTests {
    /// The development CA the gateway's chain ends in, as a file for curl and Python.
    static func caFile(_ harness: GatewayHarness) throws -> String {
        let path = harness.folder.appendingPathComponent("ca.pem").path
        let ca = try #require(harness.gateway.tls?.chain.last)
        try Data(try ca.serializeAsPEM().pemString.utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    static func curl(_ arguments: [String]) async throws -> (status: String, body: String) {
        let result = try await SignetProcess.run("curl", ["-s", "-w", "\n%{http_code}"] + arguments)
        let lines = result.stdout.split(separator: "\n", omittingEmptySubsequences: false)
        return (String(lines.last ?? ""), lines.dropLast().joined(separator: "\n"))
    }

    static func python(_ arguments: [String]) async throws -> [[String: Any]] {
        try await PythonPeer.run("password_client.py", arguments).split(separator: "\n").map {
            try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
    }

    @Test func curlLogsInWithDigestAndBasicAndReachesTheUpstreamAsTheUser() async throws {
        let harness = try await GatewayHarness.startWithPasswords(tls: GatewayHarness.developmentTLS)
        Cleanup.after { try await harness.stop() }
        let ca = try Self.caFile(harness)
        let created = try await Self.curl([
            "--cacert", ca, "-X", "PUT", "-H", "Authorization: Bearer \(GatewayHarness.adminToken)",
            "--json", #"{"password":"Circle of Life"}"#, harness.base + "/signet/v1/users/Mufasa",
        ])
        #expect(created.status == "201", "\(created.body)")
        for scheme in ["--digest", "--basic"] {
            let answer = try await Self.curl(["--cacert", ca, scheme, "-u", "Mufasa:Circle of Life", harness.base + "/echo/password/me"])
            #expect(answer.status == "200", "\(scheme): \(answer.body)")
            let echo = try #require(try JSONSerialization.jsonObject(with: Data(answer.body.utf8)) as? [String: Any])
            let headers = try #require(echo["headers"] as? [String: String])
            #expect(headers["signet-user"] == "Mufasa" && headers["signet-trust-level"] == "password", "\(scheme)")
            #expect(headers["authorization"] == nil, "\(scheme)")
            let wrong = try await Self.curl(["--cacert", ca, scheme, "-u", "Mufasa:Circle Of Life", harness.base + "/echo/password/me"])
            #expect(wrong.status == "401" && wrong.body.contains("credentials_invalid"), "\(scheme): \(wrong.body)")
        }
    }

    @Test func pythonRequestsLogsInWithDigestAndBasicAndRetriesAStaleNonceByItself() async throws {
        guard PythonPeer.available("requests") else { return }
        // python-requests answers the last Digest challenge only, and has no SHA-512-256.
        let harness = try await GatewayHarness.startWithPasswords(tls: GatewayHarness.developmentTLS) {
            // Long enough that a fresh nonce is not stale on arrival while the suite loads both cores.
            $0.passwords?.nonceLifetimeSeconds = 4
            $0.passwords?.digestAlgorithms = [.sha256, .md5]
        }
        Cleanup.after { try await harness.stop() }
        let ca = try Self.caFile(harness)
        #expect(try await harness.putUserOverTLS("Mufasa", password: "Circle of Life") == 201)
        let url = harness.base + "/echo/password/me"
        // Three requests in one session, 4.5 s apart: the reused nonce goes stale each time and
        // requests answers the stale=true challenge without being told to.
        let digest = try await Self.python([
            url, "--user", "Mufasa", "--password", "Circle of Life", "--auth", "digest", "--cacert", ca, "--requests", "3",
            "--pause", "4.5",
        ])
        #expect(digest.map { $0["status"] as? Int } == [200, 200, 200])
        #expect(digest.allSatisfy { $0["user"] as? String == "Mufasa" && $0["authorization"] is NSNull })
        #expect(digest.map { $0["history"] as? [String] } == [["credentials_missing"], ["digest_nonce_stale"], ["digest_nonce_stale"]])

        let basic = try await Self.python([url, "--user", "Mufasa", "--password", "Circle of Life", "--auth", "basic", "--cacert", ca])
        #expect(basic.first?["status"] as? Int == 200 && basic.first?["user"] as? String == "Mufasa")
        for mode in ["digest", "basic"] {
            let wrong = try await Self.python([url, "--user", "Mufasa", "--password", "nope", "--auth", mode, "--cacert", ca])
            #expect(wrong.first?["status"] as? Int == 401 && wrong.first?["reason"] as? String == "credentials_invalid", "\(mode)")
        }
    }

    @Test func md5IsUsedByRealClientsOnlyWhereARouteOptsIn() async throws {
        guard PythonPeer.available("requests") else { return }
        // Only MD5 values are stored: routes without digestMD5 offer Basic alone.
        let harness = try await GatewayHarness.startWithPasswords(tls: GatewayHarness.developmentTLS) {
            $0.passwords?.digestAlgorithms = [.md5]
            $0.routes.removeAll { $0.prefix == "/echo/int" }
        }
        Cleanup.after { try await harness.stop() }
        let ca = try Self.caFile(harness)
        try await harness.putUserOverTLS("Mufasa", password: "Circle of Life")
        for (path, status) in [("/echo/md5/x", 200), ("/echo/password/x", 401)] {
            let answer = try await Self.python([
                harness.base + path, "--user", "Mufasa", "--password", "Circle of Life", "--auth", "digest", "--cacert", ca,
            ])
            #expect(answer.first?["status"] as? Int == status, "python \(path): \(answer)")
            let curl = try await Self.curl(["--cacert", ca, "--digest", "-u", "Mufasa:Circle of Life", harness.base + path])
            #expect(curl.status == String(status), "curl \(path): \(curl.body)")
        }
    }

    @Test func logInRegisterWithACSRThenMutualTLSWithoutThePasswordUntilTheUserIsDeleted() async throws {
        let harness = try await GatewayHarness.startWithPasswords(tls: GatewayHarness.developmentTLS) {
            $0.passwords?.requireForRegistration = true
        }
        Cleanup.after { try await harness.stop() }
        try await harness.putUserOverTLS("Mufasa", password: "Circle of Life")

        // Without a login, no device.
        let anonymous = try harness.client()
        let refused = await #expect(throws: SignetError.self) { try await anonymous.register(using: SoftwareKeyProvider()) }
        #expect(refused?.code == .credentialsMissing)
        let wrong = try harness.client()
        await wrong.usePassword(PasswordCredentials(user: "Mufasa", password: "wrong"))
        let wrongError = await #expect(throws: SignetError.self) { try await wrong.register(using: SoftwareKeyProvider()) }
        #expect(wrongError?.code == .credentialsInvalid)

        // The app logs in with Digest and registers its key with a CSR in the same request.
        let client = try harness.client()
        await client.usePassword(PasswordCredentials(user: "Mufasa", password: "Circle of Life"))
        let provider = SoftwareKeyProvider(requestCertificate: true)
        let device = try await client.register(using: provider)
        #expect(device.user == "Mufasa")
        #expect(try await harness.store.device(id: device.deviceID)?.user == "Mufasa")
        let chainPEM = try #require(device.certificateChainPEM)

        // Then it forgets the password: mutual TLS alone reaches the client-certificate route.
        await client.usePassword(nil)
        try await client.useClientIdentity(ClientIdentity(certificateChainPEM: chainPEM, privateKeyPEM: provider.privateKeyPEM))
        let mtls = try await client.send("GET", harness.base + "/echo/headers", sign: false)
        #expect(mtls.status == 200, "\(mtls.text)")
        let headers = try #require(mtls.json as? [String: String])
        #expect(headers["signet-user"] == "Mufasa" && headers["signet-trust-level"] == "client-certificate")
        #expect(headers["signet-device"] == device.deviceID)
        // Its signed requests carry the user too (password-or-device takes the signature).
        let signed = try await client.send("GET", harness.base + "/echo/either/balance")
        #expect(signed.status == 200, "\(signed.text)")
        #expect((signed.json?["headers"] as? [String: String])?["signet-user"] == "Mufasa")

        // Deleting the user revokes the device: the certificate and the key are both refused.
        let deleted = try await client.send(
            "DELETE",
            harness.base + "/signet/v1/users/Mufasa",
            fields: [("Authorization", "Bearer \(GatewayHarness.adminToken)")],
            sign: false
        )
        #expect(deleted.status == 204)
        let afterCertificate = try await client.send("GET", harness.base + "/echo/headers", sign: false)
        #expect(afterCertificate.status == 401 && afterCertificate.reason == "key_revoked")
        let afterSignature = try await client.send("GET", harness.base + "/echo/either/balance")
        #expect(afterSignature.status == 401 && afterSignature.reason == "key_revoked")
        // And the password no longer logs in.
        await client.usePassword(PasswordCredentials(user: "Mufasa", password: "Circle of Life"))
        let login = try await client.send("GET", harness.base + "/echo/password/me", sign: false)
        #expect(login.status == 401 && login.reason == "credentials_invalid")
    }

    @Test func theSDKKeepsItsNonceAnswersStaleChallengesAndUsesBasicOnlyOverTLS() async throws {
        let harness = try await GatewayHarness.startWithPasswords(tls: GatewayHarness.developmentTLS) {
            // Long enough that a fresh nonce is never stale by the time its answer arrives, even
            // when the whole suite loads both cores (2 s was not, in CI).
            $0.passwords?.nonceLifetimeSeconds = 5
        }
        Cleanup.after { try await harness.stop() }
        try await harness.putUserOverTLS("Jäsøn Doe", password: "Secret, or not?")
        let client = try harness.client()
        await client.usePassword(PasswordCredentials(user: "Jäsøn Doe", password: "Secret, or not?"))
        for _ in 0..<3 {
            let answer = try await client.send("GET", harness.base + "/echo/password/me", sign: false)
            #expect(answer.status == 200, "\(answer.text)")
            #expect((answer.json?["headers"] as? [String: String])?["signet-user"] == "J%C3%A4s%C3%B8n Doe")
        }
        try await Task.sleep(for: .milliseconds(5200))
        #expect(try await client.send("GET", harness.base + "/echo/password/me", sign: false).status == 200)
        // A route whose only offer is auth-int: the SDK covers the body.
        let body = Array(#"{"amount":"1.00"}"#.utf8)
        let authInt = try await client.send("POST", harness.base + "/echo/int/transfer", body: body, sign: false)
        #expect(authInt.status == 200 && authInt.json?["bodyBytes"] as? Int == body.count, "\(authInt.text)")
    }
}

extension GatewayHarness {
    /// `PUT /signet/v1/users/{name}` over the harness's TLS, with curl trusting its CA.
    @discardableResult
    func putUserOverTLS(_ name: String, password: String) async throws -> Int {
        let ca = try PasswordLoginFlowTests.caFile(self)
        let body = String(decoding: try JSONSerialization.data(withJSONObject: ["password": password]), as: UTF8.self)
        let answer = try await PasswordLoginFlowTests.curl([
            "--cacert", ca, "-X", "PUT", "-H", "Authorization: Bearer \(Self.adminToken)", "--json", body,
            base + "/signet/v1/users/" + Self.pathSegment(name),
        ])
        return Int(answer.status) ?? 0
    }
}
