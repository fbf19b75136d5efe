// SPDX-License-Identifier: Apache-2.0
import Crypto
import Foundation
import Hummingbird
import HTTPTypes
import HummingbirdTLS
import Logging
import NIOSSL
import ServiceLifecycle
import SignetCore
import SignetMiddleware
import SignetServer
import SwiftASN1
import Synchronization
import Testing
import X509

/// A real HTTPS server on loopback with a chosen certificate: the genuine server, or a
/// man-in-the-middle. It counts the requests that reached it and keeps pin reports posted to it.
final class TLSTestServer: Sendable {
    let name: String
    let server: BackgroundServer
    let requests = Mutex(0)
    let reports = Mutex<[[UInt8]]>([])
    var port: Int { server.port }

    private init(name: String, server: BackgroundServer) {
        self.name = name
        self.server = server
    }

    /// - Parameter redirect: when set, `GET /redirect` answers 302 to this URL.
    /// - Parameter responseSigner: when set, `GET /signed-status` answers with a signature by it over
    ///   `@status` alone (not bound to the request).
    static func start(
        name: String,
        chainPEM: String,
        keyPEM: String,
        redirect: String? = nil,
        responseSigner: MessageSigner? = nil
    ) async throws -> TLSTestServer {
        var logger = Logger(label: "signet.test.tls")
        logger.logLevel = .critical
        let tls = TLSConfiguration.makeServerConfiguration(
            certificateChain: try NIOSSLCertificate.fromPEMBytes(Array(chainPEM.utf8)).map { .certificate($0) },
            privateKey: .privateKey(try NIOSSLPrivateKey(bytes: Array(keyPEM.utf8), format: .pem))
        )
        let box = Mutex<TLSTestServer?>(nil)
        let server = try await BackgroundServer.start(logger: logger) { onRunning in
            let router = Router()
            router.get("/hello") { _, _ in
                box.withLock { $0?.requests.withLock { $0 += 1 } }
                return "hello from \(name)"
            }
            router.get("/signed-status") { _, _ in
                guard let responseSigner else { return Response(status: .notFound) }
                let signed = try responseSigner.sign(
                    HTTPMessage.response(status: 200),
                    label: "gateway",
                    components: [.status],
                    created: Date()
                )
                var headers = HTTPFields()
                for line in signed.fields.lines {
                    if let name = HTTPField.Name(line.name) { headers.append(HTTPField(name: name, value: line.value)) }
                }
                return Response(status: .ok, headers: headers)
            }
            router.get("/pause") { request, _ in
                // Answers after the milliseconds asked for: keeps a request in flight for a while.
                let milliseconds = request.uri.queryParameters.get("ms").flatMap(Int.init) ?? 200
                try await Task.sleep(for: .milliseconds(milliseconds))
                return "paused \(milliseconds) ms"
            }
            router.get("/slow") { _, _ in
                // Never answers in time, and ends with the server (its stop is awaited).
                try await cancelWhenGracefulShutdown { try await Task.sleep(for: .seconds(30)) }
                return "too late"
            }
            router.get("/redirect") { _, _ in
                box.withLock { $0?.requests.withLock { $0 += 1 } }
                var headers = HTTPFields()
                headers[.location] = redirect ?? "/hello"
                return Response(status: .found, headers: headers)
            }
            router.post("/signet/v1/pin-reports") { request, _ in
                let body = try await request.body.collect(upTo: 1 << 16)
                let bytes = Array(body.readableBytesView)
                box.withLock { $0?.reports.withLock { $0.append(bytes) } }
                return Response(status: .created)
            }
            return Application(
                router: router,
                server: try! .tls(.http1(), tlsConfiguration: tls),
                configuration: .init(address: .hostname("127.0.0.1", port: 0)),
                onServerRunning: { channel in await onRunning(channel.localAddress?.port ?? 0) },
                logger: logger
            )
        }
        let testServer = TLSTestServer(name: name, server: server)
        box.withLock { $0 = testServer }
        return testServer
    }

    var requestCount: Int { requests.withLock { $0 } }
    /// The reports received, parsed.
    var receivedReports: [[String: Any]] {
        reports.withLock { $0 }.compactMap { (try? JSONSerialization.jsonObject(with: Data($0))) as? [String: Any] }
    }

    func stop() async { await server.stop() }
}

/// Certificates made for a test: a CA the client trusts, and leaves under it.
struct TestPKI {
    let ca: CertificateIssuer
    var caPEM: String { get throws { try ca.certificatePEM } }

    init(name: String = "Test CA") throws {
        ca = try CertificateIssuer.selfSignedCA(commonName: name)
    }

    struct Leaf {
        let certificate: Certificate
        let keyPEM: String
        let chainPEM: String
        var pin: SPKIPin { get throws { try SPKIPin(certificateDER: certificate.serializeAsPEM().derBytes) } }
    }

    func leaf(
        hosts: [String] = ["localhost", "127.0.0.1"],
        notBefore: Date = Date().addingTimeInterval(-3600),
        notAfter: Date = Date().addingTimeInterval(86_400)
    ) throws -> Leaf {
        let key = P256.Signing.PrivateKey()
        let certificate = try ca.issue(
            commonName: hosts[0],
            publicKey: .init(key.publicKey),
            usage: .server,
            hosts: hosts,
            notBefore: notBefore,
            notAfter: notAfter
        )
        return Leaf(
            certificate: certificate,
            keyPEM: key.pemRepresentation,
            chainPEM: try certificate.serializeAsPEM().pemString + "\n" + ca.certificatePEM + "\n"
        )
    }
}

/// A pin no certificate has: the backup every pin set needs.
func backupPin() throws -> SPKIPin {
    SPKIPin(spkiDER: P256.Signing.PrivateKey().publicKey.derRepresentation)
}

func expectCode(_ code: SignetError.Code, _ body: () async throws -> Void) async {
    do {
        try await body()
        Issue.record("expected \(code.rawValue), but it succeeded")
    } catch let error as SignetError {
        if error.code != code { Issue.record("expected \(code.rawValue), got \(error)") }
    } catch {
        Issue.record("expected \(code.rawValue), got \(error)")
    }
}
