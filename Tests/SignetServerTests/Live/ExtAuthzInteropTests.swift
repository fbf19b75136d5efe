// SPDX-License-Identifier: Apache-2.0
import Foundation
import SignetCore
import SignetServer
import SignetTestSupport
import Testing

/// Issue 41 §1: Envoy's gRPC `ext_authz`, asked by a client we did not write — Python's `grpcio`
/// with the code generated from Envoy's own protocol definitions (`xds-protos`), sending
/// `CheckRequest`s as Envoy's filter does. Each is judged as Signet's own proxy would judge the
/// request it describes: with and without a body, tampered, replayed, an unknown key, a body
/// Envoy did not send or cut, a `monitor` route.
@Suite(.awaitsCleanups) struct ExtAuthzInteropTests {
    static let host = "api.example.test"
    static let bank = { try! MessageSigner(key: SigningKey(secret: GatewayHarness.bankSecret), keyID: "bank-v1", algorithm: HMACSHA256()) }()

    /// A check for `message` as Envoy sends it: `with_request_body` sends `body`.
    static func check(_ message: HTTPMessage, body: [UInt8]? = nil, extra: [[String]] = [], asText: Bool = false, raw: Bool = false) -> [String: Any] {
        let target = message.target!
        var headers = message.fields.lines.filter { $0.name.lowercased() != "host" }.map { [$0.name, $0.value] } + extra
        if !message.body.isEmpty, !headers.contains(where: { $0[0].lowercased() == "content-length" }) {
            headers.append(["content-length", String(message.body.count)])
        }
        var spec: [String: Any] = [
            "method": message.method!, "path": target.path + (target.query.map { "?" + $0 } ?? ""), "host": host,
            "headers": headers, "as_text": asText, "raw_headers": raw,
        ]
        if let body { spec["body_b64"] = Data(body).base64EncodedString() }
        return spec
    }

    static func signed(
        _ method: String, _ target: String, body: [UInt8] = [], signer: MessageSigner = bank, forged: Bool = false, scheme: String = "https"
    ) throws -> HTTPMessage {
        var fields: MessageFields = body.isEmpty ? [] : [("Content-Type", "application/json")]
        if forged { fields.append(name: "Signet-User", value: "forged") }
        let request = try HTTPMessage.request(method: method, uri: "\(scheme)://\(host)\(target)", fields: fields, body: body)
        return try signer.sign(request, created: Date(), nonce: Nonce.random())
    }

    @Test(.enabled(if: PythonPeer.available("grpc, envoy.service.auth.v3.external_auth_pb2_grpc")))
    func envoysChecksAreJudgedAsTheProxyWould() async throws {
        let harness = try await GatewayHarness.start(tls: GatewayHarness.developmentTLS) {
            $0.authorizationListener = .init(listen: .init(host: "127.0.0.1", port: 0), grpc: .init(host: "127.0.0.1", port: 0))
            $0.routes.insert(.init(prefix: "/watched", access: .verified, mode: .monitor), at: 0)
        }
        Cleanup.after { try await harness.stop() }
        let port = try #require(harness.gateways[0].authorizationGRPCPort)
        let body = Array(#"{"name":"ada","score":7}"#.utf8)
        var tampered = body
        tampered[tampered.count - 2] = UInt8(ascii: "9")

        var get = try Self.signed("GET", "/scores/1?page=2", forged: true)
        get.fields.append(name: "X-HTTP-Method-Override", value: "DELETE")
        get.fields.append(name: "signet_device", value: "forged")
        get.fields.append(name: "X-Original-URL", value: "/admin")
        get.fields.append(name: "X-Real-IP", value: "10.9.9.9")
        let stranger = try MessageSigner(key: SigningKey(secret: Array(repeating: 7, count: 32)), keyID: "nobody", algorithm: HMACSHA256())
        let checks: [[String: Any]] = [
            Self.check(get),                                                                       // 0 accepted
            Self.check(get),                                                                       // 1 replayed
            Self.check(try Self.signed("POST", "/scores", body: body), body: body),                // 2 body checked
            Self.check(try Self.signed("POST", "/scores", body: body), body: tampered),            // 3 tampered
            Self.check(try Self.signed("POST", "/scores", body: body)),                            // 4 no body sent
            // Cut at `max_request_bytes`: Envoy's flag alone says so (the length is the cut one's).
            Self.check(try Self.signed("POST", "/scores", body: body), body: Array(body.prefix(8)),
                       extra: [["x-envoy-auth-partial-body", "true"], ["content-length", "8"]]),   // 5 cut
            Self.check(try Self.signed("GET", "/scores/1", signer: stranger)),                     // 6 unknown key
            Self.check(try HTTPMessage.request(method: "GET", uri: "https://\(Self.host)/watched/page")),  // 7 monitored
            Self.check(try Self.signed("POST", "/scores", body: body), body: body, asText: true, raw: true),  // 8 body as text, raw headers
            Self.check(try HTTPMessage.request(method: "GET", uri: "https://\(Self.host)/echo/headers")),  // 9 client-certificate
        ]
        let folder = try SignetProcess.temporaryDirectory()
        Cleanup.after { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("checks.json")
        try JSONSerialization.data(withJSONObject: checks).write(to: file)
        let output = try await PythonPeer.run("ext_authz_peer.py", ["127.0.0.1:\(port)", file.path])
        let answers = try #require(try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [[String: Any]], "\(output)")
        try #require(answers.count == checks.count)
        func reason(_ index: Int) -> String? { (answers[index]["denied_headers"] as? [String: String])?["signet-reason"] }
        func denied(_ index: Int) -> Int? { answers[index]["denied_status"] as? Int }

        // Accepted: OK, the identity set over the client's fields, every other Signet-* field removed.
        #expect(answers[0]["code"] as? Int == 0, "\(answers[0])")
        let ok = try #require(answers[0]["ok_headers"] as? [String: String])
        #expect(ok["signet-key-id"] == "bank-v1" && ok["signet-trust-level"] == "shared-secret", "\(ok)")
        #expect(answers[0]["append_actions"] as? [Int] == [2], "OVERWRITE_IF_EXISTS_OR_ADD")
        let removed = Set(try #require(answers[0]["headers_to_remove"] as? [String]))
        #expect(removed.isSuperset(of: ["signet-user", "signet-device", "signet-verdict"]) && !removed.contains("signet-key-id"), "\(removed)")
        #expect(removed.isSuperset(of: ["x-http-method-override", "signet_device", "x-original-url", "x-real-ip"]), "what would mislead the upstream: \(removed)")
        #expect(!removed.contains("x-forwarded-for") && !removed.contains("x-forwarded-proto"), "Envoy's own: \(removed)")

        #expect(answers[1]["code"] as? Int == 16 && denied(1) == 401 && reason(1) == "nonce_replayed", "\(answers[1])")
        #expect(answers[2]["code"] as? Int == 0, "\(answers[2])")
        #expect(denied(3) == 401 && reason(3) == "digest_mismatch", "\(answers[3])")
        #expect(denied(4) == 403 && reason(4) == "body_not_forwarded", "\(answers[4])")
        #expect(denied(5) == 403 && reason(5) == "body_not_forwarded", "\(answers[5])")
        #expect(denied(6) == 401 && reason(6) == "unknown_key", "\(answers[6])")
        let problem = try #require((answers[6]["denied_body"] as? String).flatMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] })
        #expect(problem["reason"] as? String == "unknown_key")
        #expect((answers[6]["denied_headers"] as? [String: String])?["content-type"] == "application/problem+json")
        #expect((answers[7]["ok_headers"] as? [String: String])?["signet-verdict"] == "signature_missing", "\(answers[7])")
        #expect(answers[8]["code"] as? Int == 0, "\(answers[8])")
        #expect(denied(9) == 501 && reason(9) == "authorization_unsupported", "\(answers[9])")

        // Envoy's gRPC health check of the cluster: SERVING (1) while the store answers — as Envoy
        // does, asked again while the answer is NOT_SERVING (2): a probe on a machine loaded by the
        // other suites can miss the store's 2 s; a service that is not here is NOT_FOUND.
        for service in ["", "envoy.service.auth.v3.Authorization"] {
            var health = ""
            for _ in 0..<20 where !health.contains(#""status": 1"#) {
                health = try await PythonPeer.run("ext_authz_peer.py", ["health", "127.0.0.1:\(port)", service])
                if !health.contains(#""status": 1"#) { try await Task.sleep(for: .milliseconds(500)) }
            }
            #expect(health.contains(#""status": 1"#), "\(service): \(health)")
        }
        let unknown = try await PythonPeer.run("ext_authz_peer.py", ["health", "127.0.0.1:\(port)", "some.Other"])
        #expect(unknown.contains("NOT_FOUND"), "\(unknown)")
    }

    /// With `authorizationListener.tls`, the gRPC service speaks TLS with the listener's
    /// certificate: grpcio trusting only its CA gets the same verdicts.
    @Test(.enabled(if: PythonPeer.available("grpc, envoy.service.auth.v3.external_auth_pb2_grpc")))
    func overTLS() async throws {
        let folder = try SignetProcess.temporaryDirectory()
        Cleanup.after { try? FileManager.default.removeItem(at: folder) }
        let chainFile = folder.appendingPathComponent("authorization.pem").path
        let harness = try await GatewayHarness.start {
            $0.authorizationListener = .init(
                listen: .init(host: "127.0.0.1", port: 0),
                grpc: .init(host: "127.0.0.1", port: 0),
                tls: .init(certificateFile: chainFile, keyFile: folder.appendingPathComponent("authorization.key").path, development: true)
            )
        }
        Cleanup.after { try await harness.stop() }
        let port = try #require(harness.gateways[0].authorizationGRPCPort)
        // The development chain ends with its CA: what a client of the listener trusts.
        let chain = try String(contentsOfFile: chainFile, encoding: .utf8)
        let last = try #require(chain.range(of: "-----BEGIN CERTIFICATE-----", options: .backwards))
        let ca = folder.appendingPathComponent("ca.pem")
        try String(chain[last.lowerBound...]).write(to: ca, atomically: true, encoding: .utf8)

        // The apps' listener speaks plain HTTP here: clients sign for http://.
        let get = try Self.signed("GET", "/scores/1", scheme: "http")
        let checks = [Self.check(get), Self.check(try HTTPMessage.request(method: "GET", uri: "http://\(Self.host)/scores/1"))]
        let file = folder.appendingPathComponent("checks.json")
        try JSONSerialization.data(withJSONObject: checks).write(to: file)
        let output = try await PythonPeer.run("ext_authz_peer.py", ["localhost:\(port)", file.path, ca.path])
        let answers = try #require(try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [[String: Any]], "\(output)")
        #expect(answers.first?["code"] as? Int == 0, "\(answers)")
        #expect((answers.last?["denied_headers"] as? [String: String])?["signet-reason"] == "signature_missing", "\(answers)")
    }

    /// A renewed certificate (new files, a reload) is what new gRPC connections get, as on the HTTP
    /// listeners: grpcio trusting only the new one is answered, trusting only the old one is not.
    @Test(.enabled(if: PythonPeer.available("grpc, envoy.service.auth.v3.external_auth_pb2_grpc")))
    func aReloadRenewsTheGRPCCertificate() async throws {
        let folder = try SignetProcess.temporaryDirectory()
        Cleanup.after { try? FileManager.default.removeItem(at: folder) }
        let chainFile = folder.appendingPathComponent("authorization.pem").path
        let keyFile = folder.appendingPathComponent("authorization.key").path
        let harness = try await GatewayHarness.start {
            $0.authorizationListener = .init(
                listen: .init(host: "127.0.0.1", port: 0), grpc: .init(host: "127.0.0.1", port: 0),
                tls: .init(certificateFile: chainFile, keyFile: keyFile, development: true))
        }
        Cleanup.after { try await harness.stop() }
        let port = try #require(harness.gateways[0].authorizationGRPCPort)
        let chain = try String(contentsOfFile: chainFile, encoding: .utf8)
        let oldCA = folder.appendingPathComponent("old-ca.pem")
        try String(chain[try #require(chain.range(of: "-----BEGIN CERTIFICATE-----", options: .backwards)).lowerBound...])
            .write(to: oldCA, atomically: true, encoding: .utf8)

        // A certificate openssl makes, in place of the development one, then a reload.
        let made = try await SignetProcess.run("openssl", [
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "1",
            "-keyout", keyFile, "-out", chainFile, "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1",
        ])
        try #require(made.status == 0, "\(made.stderr)")
        try harness.gateways[0].reloader.reload(to: harness.gateway.configuration)

        let file = folder.appendingPathComponent("checks.json")
        try JSONSerialization.data(withJSONObject: [Self.check(try HTTPMessage.request(method: "GET", uri: "http://\(Self.host)/scores/top"))])
            .write(to: file)
        let renewed = try await PythonPeer.run("ext_authz_peer.py", ["localhost:\(port)", file.path, chainFile])
        #expect(renewed.contains(#""code": 0"#), "\(renewed)")
        await #expect(throws: (any Error).self, "the old certificate is no longer served") {
            try await PythonPeer.run("ext_authz_peer.py", ["localhost:\(port)", file.path, oldCA.path])
        }
    }

    /// With `clientCAFile`, both listeners take only the proxies holding a certificate from that CA,
    /// in the TLS handshake: TLS as access control, not only privacy.
    @Test(.enabled(if: PythonPeer.available("grpc, envoy.service.auth.v3.external_auth_pb2_grpc")))
    func onlyTheProxiesCertificatesAreTaken() async throws {
        let folder = try SignetProcess.temporaryDirectory()
        Cleanup.after { try? FileManager.default.removeItem(at: folder) }
        func path(_ name: String) -> String { folder.appendingPathComponent(name).path }
        for arguments in [
            ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "1",
             "-keyout", path("ca.key"), "-out", path("ca.pem"), "-subj", "/CN=proxies"],
            ["req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
             "-keyout", path("client.key"), "-out", path("client.csr"), "-subj", "/CN=envoy"],
            ["x509", "-req", "-in", path("client.csr"), "-CA", path("ca.pem"), "-CAkey", path("ca.key"), "-CAcreateserial",
             "-days", "1", "-out", path("client.pem")],
        ] {
            let made = try await SignetProcess.run("openssl", arguments)
            try #require(made.status == 0, "\(made.stderr)")
        }
        let chainFile = path("authorization.pem")
        let harness = try await GatewayHarness.start {
            $0.authorizationListener = .init(
                listen: .init(host: "127.0.0.1", port: 0), grpc: .init(host: "127.0.0.1", port: 0),
                tls: .init(certificateFile: chainFile, keyFile: path("authorization.key"), development: true),
                clientCAFile: path("ca.pem"))
        }
        Cleanup.after { try await harness.stop() }
        let chain = try String(contentsOfFile: chainFile, encoding: .utf8)
        try String(chain[try #require(chain.range(of: "-----BEGIN CERTIFICATE-----", options: .backwards)).lowerBound...])
            .write(toFile: path("server-ca.pem"), atomically: true, encoding: .utf8)
        let grpcPort = try #require(harness.gateways[0].authorizationGRPCPort)
        let httpPort = try #require(harness.gateways[0].authorizationPort)
        let file = path("checks.json")
        try JSONSerialization.data(withJSONObject: [Self.check(try HTTPMessage.request(method: "GET", uri: "http://\(Self.host)/scores/top"))])
            .write(to: URL(fileURLWithPath: file))

        // gRPC: with the proxies' certificate, answered; without one, the handshake fails.
        let answered = try await PythonPeer.run("ext_authz_peer.py", ["localhost:\(grpcPort)", file, path("server-ca.pem"), path("client.pem"), path("client.key")])
        #expect(answered.contains(#""code": 0"#), "\(answered)")
        await #expect(throws: (any Error).self, "no client certificate") {
            try await PythonPeer.run("ext_authz_peer.py", ["localhost:\(grpcPort)", file, path("server-ca.pem")])
        }
        // HTTP: the same, with curl.
        let url = "https://localhost:\(httpPort)/healthz"
        let withCertificate = try await SignetProcess.run(
            "curl", ["-sS", "--cacert", path("server-ca.pem"), "--cert", path("client.pem"), "--key", path("client.key"), url])
        #expect(withCertificate.status == 0 && withCertificate.stdout.contains("ok"), "\(withCertificate.stderr)")
        let without = try await SignetProcess.run("curl", ["-sS", "--cacert", path("server-ca.pem"), url])
        #expect(without.status != 0, "answered without a client certificate: \(without.stdout)")
    }
}
