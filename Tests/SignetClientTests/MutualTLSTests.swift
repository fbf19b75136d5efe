// SPDX-License-Identifier: Apache-2.0
import Crypto
import Foundation
import Hummingbird
import HummingbirdTLS
import Logging
import SignetClient
import SignetCore
import SignetMiddleware
import SignetServer
import SignetStore
import SignetTestSupport
import SwiftASN1
import Testing
import X509

/// The banking scenario over real TLS: register with a CSR, receive a device certificate, call a
/// route that requires it; refusals carry reason codes.
@Suite(.awaitsCleanups) struct MutualTLSTests {
    @Test func registerWithACSRThenCallAClientCertificateRoute() async throws {
        let gateway = try await GatewayHarness.start(tls: GatewayHarness.developmentTLS)
        Cleanup.after { try await gateway.stop() }
        let client = try gateway.client()
        let provider = SoftwareKeyProvider(requestCertificate: true)
        let device = try await client.register(using: provider)
        let chainPEM = try #require(device.certificateChainPEM)
        let issued = try Certificate(derEncoded: try #require(PEMDocument.parseMultiple(pemString: chainPEM).first).derBytes)
        #expect(issued.publicKey == Certificate.PublicKey(provider.privateKey.publicKey), "the device's own key")
        #expect(try issued.extensions.extendedKeyUsage?.contains(.clientAuth) == true)

        // A signed request over pinned TLS, with the gateway's response signature checked.
        let score = try await client.send(
            "POST",
            gateway.base + "/scores",
            fields: [("Content-Type", "application/json")],
            body: Array("{\"name\":\"Ninsun\",\"score\":77}".utf8)
        )
        #expect(score.status == 201, "\(score.text)")
        #expect(score.signature?.keyID == "gateway")

        // The mTLS route without a certificate.
        let bare = try await client.send("GET", gateway.base + "/echo/headers")
        #expect(bare.status == 401)
        #expect(bare.reason == "client_certificate_required")

        // With the issued certificate: the backend learns the device from the gateway.
        try await client.useClientIdentity(ClientIdentity(certificateChainPEM: chainPEM, privateKeyPEM: provider.privateKeyPEM))
        let echoed = try await client.send("GET", gateway.base + "/echo/headers")
        #expect(echoed.status == 200)
        let headers = try #require(echoed.json as? [String: String])
        #expect(headers["signet-device"] == device.deviceID)
        #expect(headers["signet-trust-level"] == "client-certificate")

        // A certificate for the same device id from another CA.
        let strangerCA = try CertificateIssuer.selfSignedCA(commonName: "Signet Device CA")
        let strangerKey = P256.Signing.PrivateKey()
        let forged = try strangerCA.issue(
            commonName: device.deviceID,
            publicKey: .init(strangerKey.publicKey),
            usage: .client,
            uris: ["signet:device:\(device.deviceID)"],
            notAfter: Date().addingTimeInterval(86_400)
        )
        let forger = try gateway.client(
            identity: ClientIdentity(
                certificateChainPEM: try forged.serializeAsPEM().pemString,
                privateKeyPEM: strangerKey.pemRepresentation
            )
        )
        let forgedAnswer = try await forger.send("GET", gateway.base + "/echo/headers")
        #expect(forgedAnswer.status == 401)
        #expect(forgedAnswer.reason == "client_certificate_untrusted")

        // After revocation the same certificate, on the same kept-alive connection, is refused.
        let revoked = try await client.send(
            "DELETE",
            gateway.base + "/signet/v1/devices/\(device.deviceID)",
            fields: [("Authorization", "Bearer \(GatewayHarness.adminToken)")],
            sign: false
        )
        #expect(revoked.status == 204)
        let afterRevocation = try await client.send("GET", gateway.base + "/echo/headers")
        #expect(afterRevocation.status == 401)
        #expect(afterRevocation.reason == "key_revoked")
    }

    /// Certificates the device CA did issue, but not for a registered device or no longer current.
    @Test func deviceCACertificatesForUnknownDevicesOrSupersededOnesAreRefused() async throws {
        let gateway = try await GatewayHarness.start(tls: GatewayHarness.developmentTLS)
        Cleanup.after { try await gateway.stop() }
        let provider = SoftwareKeyProvider(requestCertificate: true)
        let device = try await gateway.client().register(using: provider)
        let ca = try #require(gateway.gateway.deviceCA).issuer
        func answer(deviceID: String) async throws -> ClientResponse {
            let certificate = try ca.issue(
                commonName: deviceID,
                publicKey: .init(provider.privateKey.publicKey),
                usage: .client,
                uris: ["signet:device:\(deviceID)"],
                notAfter: Date().addingTimeInterval(86_400)
            )
            let client = try gateway.client(
                identity: ClientIdentity(
                    certificateChainPEM: try certificate.serializeAsPEM().pemString,
                    privateKeyPEM: provider.privateKeyPEM
                )
            )
            return try await client.send("GET", gateway.base + "/echo/headers")
        }
        // Same CA, same key, another serial: not the certificate registered for the device.
        #expect(try await answer(deviceID: device.deviceID).reason == "client_certificate_untrusted")
        #expect(try await answer(deviceID: "dev_nobody").reason == "client_certificate_untrusted")
    }

    /// CSRs that do not parse, whose signature does not verify, or sent where no device CA exists.
    @Test func badCSRsAreRefusedWithTheirReasons() async throws {
        let gateway = try await GatewayHarness.start(tls: GatewayHarness.developmentTLS)
        let plain = try await GatewayHarness.start(tls: .init(development: true)) { configuration in
            configuration.deviceCA = nil
            configuration.routes = [.init(prefix: "/", access: .verified)]
        }
        Cleanup.after { try await gateway.stop(); try await plain.stop() }
        let provider = SoftwareKeyProvider()
        func register(at target: GatewayHarness, csr: String) async throws -> ClientResponse {
            let client = try target.client()
            let challenge = try #require(
                try await client.send("POST", target.base + "/signet/v1/challenges", sign: false).json?["challenge"] as? String
            )
            var body = try JSONSerialization.jsonObject(with: Data(try await provider.registration(challenge: challenge).body))
                as! [String: Any]
            body["csr"] = csr
            return try await client.send(
                "POST",
                target.base + "/signet/v1/devices",
                fields: [("Content-Type", "application/json")],
                body: Array(try JSONSerialization.data(withJSONObject: body)),
                sign: false
            )
        }
        let csr = try provider.certificateSigningRequestPEM()
        #expect(try await register(at: gateway, csr: "not a CSR").reason == "malformed_message")
        // One byte of the signed subject changed: it parses, its signature does not verify.
        var der = try PEMDocument(pemString: csr).derBytes
        let name = Array("signet device".utf8)
        let at = try #require((0...(der.count - name.count)).first { Array(der[$0..<$0 + name.count]) == name })
        der[at] ^= 0x01
        #expect(try await register(at: gateway, csr: Base64.encode(der)).reason == "signature_invalid")
        #expect(try await register(at: plain, csr: csr).reason == "malformed_message")
        let keyID = try provider.signingKey.verificationKey.jwk.thumbprint
        #expect(try await gateway.store.device(keyID: keyID) == nil)
        #expect(try await plain.store.device(keyID: keyID) == nil)
    }

    /// A configured certificate and key (RSA, made by openssl) instead of the development one: the
    /// gateway serves it, and a client pinning its key talks to it.
    @Test func aConfiguredOpenSSLCertificateIsServedAndPinned() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("signet-rsa-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let certificate = folder.appendingPathComponent("tls.pem").path
        let key = folder.appendingPathComponent("tls.key").path
        _ = try await OpenSSL.run([
            "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=localhost",
            "-addext", "subjectAltName=DNS:localhost", "-keyout", key, "-out", certificate,
        ])
        let gateway = try await GatewayHarness.start(
            tls: .init(certificateFile: certificate, keyFile: key, clientCertificates: true)
        )
        Cleanup.after { try await gateway.stop() }
        let served = try #require(gateway.gateway.tls).chain
        #expect(served.count == 1)
        // The pin the gateway computes is the one openssl computes.
        let spki = try await OpenSSL.run(["x509", "-in", certificate, "-pubkey", "-noout"])
        let spkiFile = folder.appendingPathComponent("pub.pem")
        try Data(spki.utf8).write(to: spkiFile)
        let der = folder.appendingPathComponent("pub.der").path
        _ = try await OpenSSL.run(["pkey", "-pubin", "-in", spkiFile.path, "-outform", "DER", "-out", der])
        let expected = SPKIPin(spkiDER: Array(try Data(contentsOf: URL(fileURLWithPath: der))))
        #expect(try SPKIPin(certificateDER: served[0].serializeAsPEM().derBytes) == expected)

        let client = try gateway.client()
        let board = try await client.send("GET", gateway.base + "/scores/top", sign: false)
        #expect(board.status == 200)
    }

    @Test func aCSRForAnotherKeyIsRefusedAndNothingIsStored() async throws {
        let gateway = try await GatewayHarness.start(tls: GatewayHarness.developmentTLS)
        Cleanup.after { try await gateway.stop() }
        let client = try gateway.client()
        let proving = SoftwareKeyProvider()
        let other = SoftwareKeyProvider()
        let challenge = try #require(
            try await client.send("POST", gateway.base + "/signet/v1/challenges", sign: false).json?["challenge"] as? String
        )
        var body = try JSONSerialization.jsonObject(with: Data(try await proving.registration(challenge: challenge).body))
            as! [String: Any]
        body["csr"] = try other.certificateSigningRequestPEM()
        let answer = try await client.send(
            "POST",
            gateway.base + "/signet/v1/devices",
            fields: [("Content-Type", "application/json")],
            body: Array(try JSONSerialization.data(withJSONObject: body)),
            sign: false
        )
        #expect(answer.reason == "key_mismatch")
        let keyID = try proving.signingKey.verificationKey.jwk.thumbprint
        #expect(try await gateway.store.device(keyID: keyID) == nil)
    }

    @Test func theExportedPKCS12ReadsBackWithOpenSSL() async throws {
        let gateway = try await GatewayHarness.start(tls: GatewayHarness.developmentTLS)
        Cleanup.after { try await gateway.stop() }
        let provider = SoftwareKeyProvider(requestCertificate: true)
        let device = try await gateway.client().register(using: provider)
        let chainPEM = try #require(device.certificateChainPEM)
        let archive = try PKCS12Archive.export(
            chainPEM: chainPEM,
            privateKeyPEM: provider.privateKeyPEM,
            password: "correct horse"
        )
        let file = gateway.folder.appendingPathComponent("device.p12")
        try Data(archive).write(to: file)

        let certificates = try await OpenSSL.run(["pkcs12", "-in", file.path, "-passin", "pass:correct horse", "-nokeys"])
        let read = try PEMDocument.parseMultiple(pemString: certificates).map { try Certificate(derEncoded: $0.derBytes) }
        let expected = try PEMDocument.parseMultiple(pemString: chainPEM).map { try Certificate(derEncoded: $0.derBytes) }
        #expect(Set(read) == Set(expected))
        #expect(certificates.contains("friendlyName: Signet device"))

        let key = try await OpenSSL.run(["pkcs12", "-in", file.path, "-passin", "pass:correct horse", "-nocerts", "-nodes"])
        let keyPEM = String(key[key.range(of: "-----BEGIN PRIVATE KEY-----")!.lowerBound...])
        #expect(try P256.Signing.PrivateKey(pemRepresentation: keyPEM).rawRepresentation == provider.privateKey.rawRepresentation)

        // A second importer reads it too: Python's cryptography, the key and every certificate.
        let read2 = try await PythonPeer.run("pkcs12_peer.py", [file.path, "correct horse"]).split(separator: "\n").map(String.init)
        #expect(read2.first == Hex.encode(provider.privateKey.publicKey.x963Representation))
        let chainDigests = try PEMDocument.parseMultiple(pemString: chainPEM).map { Hex.encode(SHA256.hash(data: $0.derBytes)) }
        #expect(Array(read2.dropFirst()) == chainDigests)
        // OpenSSL's shape, which SecPKCS12Import reads: 8-byte salts for the MAC and the key.
        let info = try await SignetProcess.run("openssl", ["pkcs12", "-in", file.path, "-passin", "pass:correct horse", "-info", "-noout"]).stderr
        #expect(info.contains("MAC: sha256, Iteration \(PKCS12Archive.iterations)"), "\(info)")
        #expect(info.contains("MAC length: 32, salt length: 8"), "\(info)")

        // A wrong password fails the MAC.
        await #expect(throws: OpenSSL.Failure.self) {
            _ = try await OpenSSL.run(["pkcs12", "-in", file.path, "-passin", "pass:wrong", "-nokeys"])
        }
        // A key that is not the certificate's is refused before anything is written.
        #expect(throws: SignetError(.keyMismatch, "")) {
            _ = try PKCS12Archive.export(chainPEM: chainPEM, privateKeyPEM: SoftwareKeyProvider().privateKeyPEM, password: "x")
        }
    }

    @Test func pinReportsAreStoredAndListedForTheAdmin() async throws {
        let gateway = try await GatewayHarness.start(tls: GatewayHarness.developmentTLS)
        Cleanup.after { try await gateway.stop() }
        let client = try gateway.client()
        let report = PinFailureReport(
            date: Date(),
            hostname: "api.example.com",
            port: 443,
            notedHostname: "api.example.com",
            includeSubdomains: false,
            enforce: true,
            servedChainDER: [try gateway.gateway.tls!.chain[0].serializeAsPEM().derBytes],
            knownPins: [try backupPin().hpkpDescription]
        )
        let stored = try await client.send(
            "POST",
            gateway.base + "/signet/v1/pin-reports",
            fields: [("Content-Type", "application/json")],
            body: report.json,
            sign: false
        )
        #expect(stored.status == 201)
        let id = try #require(stored.json?["id"] as? String)

        let malformed = try await client.send("POST", gateway.base + "/signet/v1/pin-reports", body: Array("{\"x\":1}".utf8), sign: false)
        #expect(malformed.status == 400)
        #expect(malformed.reason == "malformed_message")
        let huge = try await client.send(
            "POST",
            gateway.base + "/signet/v1/pin-reports",
            body: [UInt8](repeating: 0x20, count: 70_000),
            sign: false
        )
        #expect(huge.reason == "body_too_large")

        // Unauthenticated, so limited per source.
        let limited = try await GatewayHarness.start(tls: GatewayHarness.developmentTLS) { $0.pinReportsPerSourcePerMinute = 1 }
        Cleanup.after { try await limited.stop() }
        let limitedClient = try limited.client()
        let reportURL = limited.base + "/signet/v1/pin-reports"
        let window = RestOfWindow()
        #expect(try await limitedClient.send("POST", reportURL, body: report.json, sign: false).status == 201)
        let refused = try await limitedClient.send("POST", reportURL, body: report.json, sign: false)
        #expect(refused.reason == "rate_limited")
        #expect(window.admits(refused.fields["retry-after"].flatMap { Int($0) }))

        let unauthorised = try await client.send("GET", gateway.base + "/signet/v1/pin-reports", sign: false)
        #expect(unauthorised.reason == "admin_unauthorized")
        let listed = try await client.send(
            "GET",
            gateway.base + "/signet/v1/pin-reports",
            fields: [("Authorization", "Bearer \(GatewayHarness.adminToken)")],
            sign: false
        )
        let reports = try #require(listed.json?["reports"] as? [[String: Any]])
        #expect(reports.count == 1)
        #expect(reports.first?["id"] as? String == id)
        #expect(reports.first?["hostname"] as? String == "api.example.com")
        // Grouped by what it says: the served certificate's SPKI pin and TrustKit's result.
        let served = try SPKIPin(certificateDER: try gateway.gateway.tls!.chain[0].serializeAsPEM().derBytes).description
        #expect(reports.first?["servedPins"] as? [String] == [served])
        #expect(reports.first?["reason"] as? String == "no-matching-pin")
        #expect(reports.first?["count"] as? Int == 1)
    }
}

/// Runs the system `openssl`.
enum OpenSSL {
    struct Failure: Error { let output: String }

    static func run(_ arguments: [String]) async throws -> String {
        let result = try await SignetProcess.run("openssl", arguments)
        guard result.status == 0 else { throw Failure(output: result.stdout + result.stderr) }
        return result.stdout
    }
}

/// The `client-certificate` policy as middleware in an app of one's own, on the gateway's store and CA.
@Suite(.awaitsCleanups) struct ClientCertificateMiddlewareTests {
    @Test func anAppOfItsOwnRequiresTheDeviceCertificate() async throws {
        let gateway = try await GatewayHarness.start(tls: GatewayHarness.developmentTLS)
        Cleanup.after { try await gateway.stop() }
        let provider = SoftwareKeyProvider(requestCertificate: true)
        let device = try await gateway.client().register(using: provider)

        let verifier = ClientCertificateVerifier(deviceCA: try #require(gateway.gateway.deviceCA), devices: gateway.store)
        let tls = try #require(gateway.gateway.tls)
        var logger = Logger(label: "signet.test.app")
        logger.logLevel = .critical
        let app = try await BackgroundServer.start(logger: logger) { onRunning in
            let router = Router(context: SignetRequestContext.self)
            router.group("accounts").add(middleware: ClientCertificateMiddleware(verifier: verifier))
                .get("mine") { _, context in "account of \(context.signetIdentity?.deviceID ?? "nobody")" }
            return Application(
                router: router,
                server: try! .tls(.http1(), configuration: tls.channelConfiguration(clientCertificates: true)),
                configuration: .init(address: .hostname("127.0.0.1", port: 0)),
                onServerRunning: { await onRunning($0.localAddress?.port ?? 0) },
                logger: logger
            )
        }
        Cleanup.after { await app.stop() }
        let url = "https://localhost:\(app.port)/accounts/mine"
        let identity = ClientIdentity(
            certificateChainPEM: try #require(device.certificateChainPEM),
            privateKeyPEM: provider.privateKeyPEM
        )
        let client = try SignetClient(
            configuration: .init(
                origins: [try Origin("https://localhost:\(app.port)")],
                trust: ServerTrustEvaluator(roots: .only([tls.chain.last!])),
                clientIdentity: identity
            )
        )
        let answer = try await client.send("GET", url)
        #expect(answer.status == 200)
        #expect(answer.text == "account of \(device.deviceID)")

        try await client.useClientIdentity(nil)
        let bare = try await client.send("GET", url)
        #expect(bare.reason == "client_certificate_required")
    }
}
