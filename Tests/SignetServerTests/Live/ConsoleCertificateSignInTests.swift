// SPDX-License-Identifier: Apache-2.0
import Crypto
import Foundation
import SignetCore
import SignetServer
import SignetTestSupport
import SwiftASN1
import Testing
import X509

/// Operators signing in to the console with a client certificate over mutual TLS, with curl as the
/// browser and certificates made by openssl: only a pinned key, only in its validity period, and a
/// session that holds only while the same certificate is presented.
@Suite(.awaitsCleanups) struct ConsoleCertificateSignInTests {
    /// A key and self-signed certificate made by openssl, and its pin as openssl computes it.
    struct OperatorCertificate {
        let certificate: String
        let key: String
        let pin: String

        static func make(_ name: String, in folder: URL) async throws -> OperatorCertificate {
            let certificate = folder.appendingPathComponent("\(name).pem").path
            let key = folder.appendingPathComponent("\(name).key").path
            let made = try await SignetProcess.run(
                "openssl",
                [
                    "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", key,
                    "-out", certificate, "-subj", "/CN=\(name)", "-days", "30",
                ]
            )
            guard made.status == 0 else { throw HarnessError("openssl req: \(made.stderr)") }
            let pin = try await SignetProcess.run(
                "sh",
                [
                    "-c",
                    "openssl x509 -in '\(certificate)' -pubkey -noout | openssl pkey -pubin -outform DER"
                        + " | openssl dgst -sha256 -binary | base64",
                ]
            )
            return OperatorCertificate(
                certificate: certificate,
                key: key,
                pin: "sha256/" + pin.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
            )
        }
    }

    struct Curl {
        let base: String
        let caFile: String

        /// Status, the `Set-Cookie` session and the body of one request.
        func send(
            _ path: String,
            form: String? = nil,
            certificate: OperatorCertificate?,
            cookie: String? = nil
        ) async throws -> (status: Int, session: String?, body: String) {
            var arguments = ["-s", "--cacert", caFile, "-D", "-", "-o", "-", base + path]
            if let certificate { arguments += ["--cert", certificate.certificate, "--key", certificate.key] }
            if let form { arguments += ["--data", form] }
            if let cookie { arguments += ["-H", "Cookie: signet_console=\(cookie)"] }
            let command = arguments
            let result = try await SignetProcess.run("curl", command)
            let lines = result.stdout.components(separatedBy: "\r\n")
            let status = lines.first.flatMap { Int($0.split(separator: " ").dropFirst().first ?? "") } ?? 0
            let session = lines.first { $0.lowercased().hasPrefix("set-cookie: signet_console=") }.map {
                String($0.dropFirst("set-cookie: signet_console=".count).prefix { $0 != ";" })
            }
            return (status, session?.isEmpty == true ? nil : session, result.stdout)
        }
    }

    @Test func onlyAPinnedCertificateInItsPeriodSignsInAndItsSessionNeedsIt() async throws {
        let folder = try SignetProcess.temporaryDirectory()
        let operatorCertificate = try await OperatorCertificate.make("operator", in: folder)
        let stranger = try await OperatorCertificate.make("stranger", in: folder)
        let expired = try Self.expiredCertificate(in: folder)
        // `signet pin`, which the docs point operators to, prints the pin openssl computes.
        let printed = try await SignetProcess.signet(["pin", "--cert", operatorCertificate.certificate])
        #expect(printed.stdout.hasPrefix(operatorCertificate.pin + " "), "\(printed.stdout)")
        let harness = try await GatewayHarness.start(tls: GatewayHarness.developmentTLS) {
            $0.adminToken = nil
            $0.adminCertificates = [operatorCertificate.pin, expired.pin]
        }
        Cleanup.after { try await harness.stop() }
        let caFile = folder.appendingPathComponent("gateway-ca.pem").path
        try Data(try #require(harness.gateway.tls?.chainPEM).utf8).write(to: URL(fileURLWithPath: caFile))
        let curl = Curl(base: harness.base, caFile: caFile)

        var answer = try await curl.send("/signet/admin/sign-in", certificate: operatorCertificate)
        #expect(answer.status == 200 && answer.body.contains("Sign in with my certificate"))
        #expect(!answer.body.contains("Admin token"), "no admin token is configured")

        // No certificate, a stranger's, an expired pinned one, and the token form: all refused.
        answer = try await curl.send("/signet/admin/sign-in", form: "method=certificate", certificate: nil)
        #expect(answer.status == 401 && answer.body.contains("client_certificate_required") && answer.session == nil)
        answer = try await curl.send("/signet/admin/sign-in", form: "method=certificate", certificate: stranger)
        #expect(answer.status == 401 && answer.body.contains("admin_unauthorized") && answer.session == nil)
        answer = try await curl.send("/signet/admin/sign-in", form: "method=certificate", certificate: expired)
        #expect(answer.status == 401 && answer.body.contains("client_certificate_untrusted") && answer.session == nil)
        answer = try await curl.send("/signet/admin/sign-in", form: "token=anything", certificate: operatorCertificate)
        #expect(answer.status == 401 && answer.body.contains("admin_unauthorized") && answer.session == nil)

        answer = try await curl.send("/signet/admin/sign-in", form: "method=certificate", certificate: operatorCertificate)
        // Over HTTP/2 (curl negotiates it), field names are lower case.
        #expect(answer.status == 303 && answer.body.lowercased().contains("location: /signet/admin/overview"))
        #expect(answer.body.contains("; Secure"))
        let session = try #require(answer.session)
        #expect(try await curl.send("/signet/admin/overview", certificate: operatorCertificate, cookie: session).status == 200)

        // The cookie alone, or with another certificate, is no session.
        #expect(try await curl.send("/signet/admin/overview", certificate: nil, cookie: session).status == 303)
        #expect(try await curl.send("/signet/admin/overview", certificate: stranger, cookie: session).status == 303)
        // Another pinned key is another operator: this session is not theirs either.
        #expect(try await curl.send("/signet/admin/overview", certificate: expired, cookie: session).status == 303)
        answer = try await curl.send("/signet/admin/sign-out", form: "csrf=x", certificate: stranger, cookie: session)
        #expect(answer.status == 401 && answer.body.contains("admin_unauthorized"))

        answer = try await curl.send("/signet/admin/audit", certificate: operatorCertificate, cookie: session)
        #expect(answer.body.contains("console.sign-in") && answer.body.contains("certificate \(operatorCertificate.pin)"))
    }

    /// On an admin listener with TLS of its own, the client listener plain: the listener asks for
    /// client certificates itself, and a pinned operator signs in there (a `Secure` cookie).
    @Test func aPinnedOperatorSignsInOnTheAdminListenersOwnTLS() async throws {
        let folder = try SignetProcess.temporaryDirectory()
        let operatorCertificate = try await OperatorCertificate.make("operator", in: folder)
        let harness = try await GatewayHarness.start {
            $0.adminToken = nil
            $0.adminCertificates = [operatorCertificate.pin]
            $0.adminListener = .init(listen: .init(host: "127.0.0.1", port: 0), tls: .init(development: true))
        }
        Cleanup.after { try await harness.stop() }
        let admin = try #require(harness.adminBase)
        #expect(admin.hasPrefix("https://") && harness.base.hasPrefix("http://"))
        let caFile = folder.appendingPathComponent("admin-ca.pem").path
        try Data(try #require(harness.gateway.adminTLS?.chainPEM).utf8).write(to: URL(fileURLWithPath: caFile))
        let curl = Curl(base: admin, caFile: caFile)
        let answer = try await curl.send("/signet/admin/sign-in", form: "method=certificate", certificate: operatorCertificate)
        #expect(answer.status == 303 && answer.body.contains("; Secure"), "\(answer.body)")
        let session = try #require(answer.session)
        #expect(try await curl.send("/signet/admin/overview", certificate: operatorCertificate, cookie: session).status == 200)
        let onClient = try await GatewayHarness.send(method: "GET", url: harness.base + "/signet/admin/sign-in")
        #expect(onClient.status == 404 && onClient.reason == "not_found")

        // Pins need mutual TLS where the console is: on the admin listener, its own TLS.
        var configuration = GatewayConfiguration(upstream: "http://127.0.0.1:9")
        configuration.adminCertificates = [operatorCertificate.pin]
        configuration.adminListener = .init(listen: .init(host: "127.0.0.1", port: 0))
        #expect(throws: ConfigurationError.self) { try configuration.validate() }
        configuration.adminListener?.tls = .init(development: true)
        try configuration.validate()
    }

    @Test func certificateSignInNeedsMutualTLSAndTakesOnlyPins() async throws {
        var configuration = GatewayConfiguration(upstream: "http://127.0.0.1:9")
        configuration.adminCertificates = ["sha256/47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU="]
        #expect(throws: ConfigurationError.self) { try configuration.validate() }
        configuration.tls = .init(development: true, clientCertificates: true)
        try configuration.validate()
        #expect(try configuration.adminCertificatePins().count == 1)
        // The forms `signet pin` and HPKP print are both taken; a SHA-1 length or no base64 is not.
        configuration.adminCertificates = ["pin-sha256=\"47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=\""]
        try configuration.validate()
        for bad in ["sha256/2jmj7l5rSw0yVb/vlWAYkK/YBwk=", "sha256/not base64!", ""] {
            configuration.adminCertificates = [bad]
            #expect(throws: ConfigurationError.self, "\(bad)") { try configuration.validate() }
        }
    }

    /// A pinned key whose certificate ended yesterday (openssl 3.0 cannot back-date one).
    static func expiredCertificate(in folder: URL) throws -> OperatorCertificate {
        let key = P256.Signing.PrivateKey()
        let name = try DistinguishedName { CommonName("expired") }
        let now = Date()
        let certificate = try Certificate(
            version: .v3,
            serialNumber: .init(),
            publicKey: .init(key.publicKey),
            notValidBefore: now.addingTimeInterval(-30 * 86_400),
            notValidAfter: now.addingTimeInterval(-86_400),
            issuer: name,
            subject: name,
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: Certificate.Extensions {},
            issuerPrivateKey: .init(key)
        )
        let certificateFile = folder.appendingPathComponent("expired.pem").path
        let keyFile = folder.appendingPathComponent("expired.key").path
        try Data(try certificate.serializeAsPEM().pemString.utf8).write(to: URL(fileURLWithPath: certificateFile))
        try Data(key.pemRepresentation.utf8).write(to: URL(fileURLWithPath: keyFile))
        let pin = SPKIPin(spkiDER: key.publicKey.derRepresentation)
        return OperatorCertificate(certificate: certificateFile, key: keyFile, pin: pin.description)
    }
}
