// SPDX-License-Identifier: Apache-2.0
import Foundation
import SignetCore
import SignetMiddleware
import SignetServer
import SignetStore
import SignetTestSupport
import Testing

@Suite struct GatewayConfigurationTests {
    static let sample = SignetProcess.repositoryRoot.appendingPathComponent("docs/signet.sample.json").path

    @Test func theDocumentedSampleLoads() throws {
        let configuration = try GatewayConfiguration.load(file: Self.sample, environment: [:])
        #expect(configuration.upstream == "http://127.0.0.1:9000")
        #expect(configuration.publicAuthority == nil && configuration.signedScheme == "https", "the Host a client sends, over its TLS")
        #expect(configuration.store.sqlite == "signet.sqlite")
        #expect(configuration.routes.count == 7)
        #expect(configuration.routes.map(\.access).contains(.passwordOrDevice))
        #expect(configuration.passwords?.realm == "bank@example.com")
        #expect(configuration.passwordLogin?.digestAlgorithms == [.sha256] && configuration.passwordLogin?.transportIsSecure == true)
        #expect(configuration.tls?.clientCertificates == true)
        #expect(configuration.deviceCA?.validityDays == 30)
        #expect(configuration.sharedSecrets.first { $0.keyId == "bank-v2" }?.notAfter != nil)
        #expect(configuration.responseSigning?.keyId == "gateway")
    }

    /// `listen` as the docs show it: `"127.0.0.1:8080"`, `"[::1]:8443"`, or the object.
    @Test func listenTakesHostColonPort() throws {
        for (text, host, port) in [("127.0.0.1:9000", "127.0.0.1", 9000), ("[::1]:8443", "::1", 8443), ("0.0.0.0:80", "0.0.0.0", 80)] {
            let configuration = try GatewayConfiguration.decode(Data(#"{"upstream": "http://x", "listen": "\#(text)"}"#.utf8))
            #expect(configuration.listen.host == host && configuration.listen.port == port, "\(text)")
        }
        let object = try GatewayConfiguration.decode(Data(#"{"upstream": "http://x", "listen": {"port": 9001}}"#.utf8))
        #expect(object.listen.host == "127.0.0.1" && object.listen.port == 9001, "the host keeps its default")
    }

    @Test func environmentVariablesOverrideTheFile() throws {
        let configuration = try GatewayConfiguration.load(
            file: Self.sample,
            environment: [
                "SIGNET_LISTEN_PORT": "9999", "SIGNET_STORE": "postgres://u:p@db:5432/signet",
                "SIGNET_PUBLIC_AUTHORITY": "edge.example.com", "SIGNET_DEBUG": "1",
                "SIGNET_UPSTREAM": "https://api.internal",
            ]
        )
        #expect(configuration.listen.port == 9999)
        #expect(configuration.store.postgres == "postgres://u:p@db:5432/signet")
        #expect(configuration.store.sqlite == nil)
        #expect(configuration.publicAuthority == "edge.example.com")
        #expect(configuration.debug)
        #expect(configuration.upstream == "https://api.internal")
        for (name, value) in [("SIGNET_LISTEN_PORT", "80a"), ("SIGNET_LISTEN_PORT", "70000"), ("SIGNET_DEBUG", "ture")] {
            let refused = #expect(throws: ConfigurationError.self, "\(name)=\(value) is refused, not ignored") {
                try GatewayConfiguration.load(file: Self.sample, environment: [name: value])
            }
            #expect(refused?.kind == .environment && refused?.message.hasPrefix(name) == true)
        }
        // The environment alone is enough.
        let minimal = try GatewayConfiguration.load(file: nil, environment: ["SIGNET_UPSTREAM": "http://127.0.0.1:1"])
        #expect(minimal.store.sqlite == "signet.sqlite")
    }

    @Test(arguments: [
        "{}",
        "{\"upstream\": \"ftp://x\"}",
        "{\"upstream\": \"http://x\", \"routes\": [{\"prefix\": \"/\", \"access\": \"everyone\"}]}",
        "{\"upstream\": \"http://x\", \"routes\": [{\"prefix\": \"/\", \"access\": \"legacy-query-hmac\"}]}",
        "{\"upstream\": \"http://x\", \"store\": {\"sqlite\": \"a\", \"postgres\": \"postgres://b\"}}",
        "not json",
        // Client-certificate routes need TLS with client certificates and a device CA.
        "{\"upstream\": \"http://x\", \"routes\": [{\"prefix\": \"/\", \"access\": \"client-certificate\"}]}",
        "{\"upstream\": \"http://x\", \"tls\": {\"development\": true}, \"routes\": [{\"prefix\": \"/\", \"access\": \"client-certificate\"}], \"deviceCA\": {\"certificateFile\": \"a\", \"keyFile\": \"b\"}}",
        "{\"upstream\": \"http://x\", \"tls\": {\"clientCertificates\": true, \"development\": true}}",
        "{\"upstream\": \"http://x\", \"tls\": {}}",
        "{\"upstream\": \"http://x\", \"tls\": {\"certificateFile\": \"a.pem\"}}",
    ])
    func invalidConfigurationsAreRefusedWithAReason(_ text: String) throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent(
            "signet-config-\(UUID().uuidString).json"
        )
        try Data(text.utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let error = #expect(throws: ConfigurationError.self) {
            try GatewayConfiguration.load(file: file.path, environment: [:])
        }
        // Placed in the file, as a compiler would: path:line:column: message.
        #expect(error?.file == file.path && error?.line == 1 && error?.column != nil)
        #expect(error?.description.hasPrefix("\(file.path):1:") == true, "\(String(describing: error))")
    }
}

@Suite struct RouteTableTests {
    @Test func theLongestMatchingPrefixDecidesAndUnmatchedPathsAreVerified() throws {
        let table = try RouteTableProbe.make([
            .init(prefix: "/scores/top", methods: ["GET"], access: .open),
            .init(prefix: "/scores", access: .deviceKey),
            .init(prefix: "/legacy", access: .legacyQueryHMAC(keyId: "k")),
            .init(prefix: "/accounts", access: .clientCertificate),
            .init(prefix: "/attested", access: .appAttest),
        ])
        #expect(table("GET", "/scores/top") == "open")
        #expect(table("GET", "/scores/top?n=3") == "open")
        #expect(table("POST", "/scores/top") == "device-key")
        #expect(table("POST", "/scores") == "device-key")
        #expect(table("GET", "/scoresheet") == "verified")
        #expect(table("GET", "/legacy/score?msg=x") == "legacy-query-hmac")
        #expect(table("GET", "/other") == "verified")
        #expect(table("GET", "/accounts/42") == "client-certificate", "client-certificate is the mTLS policy, not a trust level")
        #expect(table("POST", "/attested") == "app-attest")
    }

    /// HEAD runs GET's handler: it follows GET's rule, as nginx's `limit_except GET` does, and an
    /// unsigned HEAD cannot fall to a looser rule below.
    @Test func headFollowsTheRuleOfGet() throws {
        let table = try RouteTableProbe.make([
            .init(prefix: "/reports", methods: ["GET"], access: .deviceKey),
            .init(prefix: "/", access: .open),
        ])
        #expect(table("HEAD", "/reports/2026") == "device-key")
        #expect(table("POST", "/reports/2026") == "open")
        let twice = #expect(throws: ConfigurationError.self) {
            try RouteTableProbe.make([
                .init(prefix: "/reports", methods: ["GET"], access: .deviceKey),
                .init(prefix: "/reports", methods: ["HEAD"], access: .open),
            ])
        }
        #expect(twice?.message.contains("configured twice") == true)
    }

    @Test(arguments: ["/signet", "/signet/v1/devices", "/healthz", "/metrics/x", "/readyz", "/METRICS", "/Signet/admin", "/HealthZ", "/a/../b", "/a//b", "/a;b", "/:id", "/a/*", "/{x}", "a"])
    func prefixesTheTrieCannotHoldOrTheGatewayOwnsAreRefused(_ prefix: String) {
        let error = #expect(throws: ConfigurationError.self) { try RouteTableProbe.make([.init(prefix: prefix, access: .open)]) }
        #expect(error?.kind == .invalidValue && error?.message.contains(prefix.debugDescription) == true)
    }
}

@Suite struct ConfigurationDefaultsTests {
    static func load(_ text: String) throws -> GatewayConfiguration {
        try GatewayConfiguration.decode(Data(text.utf8))
    }

    /// A document with only the upstream is the type's own defaults, value for value: the defaults
    /// live in the property declarations and nowhere else.
    @Test func aMinimalDocumentIsTheDeclaredDefaults() throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let loaded = try Self.load(#"{"upstream": "http://127.0.0.1:9000"}"#)
        let declared = GatewayConfiguration(upstream: "http://127.0.0.1:9000")
        #expect(try encoder.encode(loaded) == encoder.encode(declared))
        #expect(loaded.store == .sqlite("signet.sqlite") && loaded.maxBodyBytes == 1 << 20)
    }

    @Test func nestedObjectsKeepTheDefaultsTheyLeaveOut() throws {
        let configuration = try Self.load(#"{"upstream": "http://x", "policy": {"maxAgeSeconds": 60}, "listen": {"port": 9}}"#)
        #expect(configuration.policy.maxAgeSeconds == 60)
        #expect(configuration.policy.clockSkewSeconds == 30 && configuration.policy.requireNonce)
        #expect(configuration.listen.port == 9 && configuration.listen.host == "127.0.0.1")
    }

    @Test func theStoreIsOneOfThreeAndReplacesTheDefault() throws {
        #expect(try Self.load(#"{"upstream": "http://x", "store": {"memory": true}}"#).store == .memory)
        #expect(try Self.load(#"{"upstream": "http://x", "store": {"postgres": "postgres://db/s"}}"#).store == .postgres("postgres://db/s"))
        let off = #expect(throws: ConfigurationError.self) { try Self.load(#"{"upstream": "http://x", "store": {"memory": false}}"#) }
        #expect(off?.path == "store.memory" && off?.column == 36)
        let empty = #expect(throws: ConfigurationError.self) { try Self.load(#"{"upstream": "http://x", "store": {}}"#) }
        #expect(empty?.kind == .invalidValue && empty?.path == "store")
    }

    @Test func aMisspeltTopLevelKeyIsRefusedNotIgnored() throws {
        let error = #expect(throws: ConfigurationError.self) { try Self.load(#"{"upstream": "http://x", "maxBodyByte": 10}"#) }
        #expect(error?.kind == .unknownKey && error?.path == "maxBodyByte" && error?.validKeys.contains("maxBodyBytes") == true)
        #expect(error?.line == 1 && error?.column == 26)
        #expect(try Self.load(#"{"upstream": "http://x", "maxBodyBytes": 10}"#).maxBodyBytes == 10)
    }

    /// Every access mode, with its options, reads back as it was written: the JSON stays flat and
    /// the options ride on the mode they belong to.
    @Test func everyAccessModeWithItsOptionsReadsBackAsWritten() throws {
        let accesses: [GatewayConfiguration.Route.Access] = [
            .open, .verified, .clientCertificate, .legacyQueryHMAC(keyId: "k"), .legacyEnvelope,
            .password, .password(.init(allowMD5: true, requireAuthInt: true, keepAuthorization: true)),
            .passwordOrDevice(.init(requireAuthInt: true)), .sharedSecret, .deviceKey, .appAttest,
            .appToken, .appToken(audience: "payments"), .firebaseAppCheck, .firebaseAppCheck(consumeTokens: true),
            .appTokenOrFirebase(audience: "a", consumeTokens: true),
        ]
        for access in accesses {
            let route = GatewayConfiguration.Route(prefix: "/r", methods: ["GET"], access: access)
            let read = try JSONDecoder().decode(GatewayConfiguration.Route.self, from: JSONEncoder().encode(route))
            #expect(read.access == access && read.prefix == "/r" && read.methods == ["GET"], "\(access)")
        }
        let flat = try JSONSerialization.jsonObject(
            with: JSONEncoder().encode(GatewayConfiguration.Route(prefix: "/p", access: .appToken(audience: "payments")))
        ) as? [String: Any]
        #expect(flat?["access"] as? String == "app-token" && flat?["audience"] as? String == "payments")
    }

    @Test func choicesNameTheirAllowedValues() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("signet-config-\(UUID().uuidString).json")
        try Data(#"{"upstream": "http://x", "appAttest": {"appIDs": ["T.a"], "clientDataHash": "sha-256"}}"#.utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let error = #expect(throws: ConfigurationError.self) { try GatewayConfiguration.load(file: file.path, environment: [:]) }
        #expect(error?.message.contains(#"appAttest.clientDataHash: "sha-256" is not one of sha256, raw"#) == true, "\(String(describing: error))")
        #expect(try Self.load(#"{"upstream": "http://x", "appAttest": {"appIDs": ["T.a"], "clientDataHash": "raw"}}"#).appAttest?.clientDataHash == .raw)
    }
}

@Suite struct ConfigurationMessageTests {
    /// A wrong value names the key path, the value and what is allowed.
    @Test(arguments: [
        (
            "{\"upstream\": \"http://x\", \"routes\": [{\"prefix\": \"/\", \"access\": \"open\"}, {\"prefix\": \"/a\", \"access\": \"open\"}, {\"prefix\": \"/b\", \"access\": \"device_key\"}]}",
            "routes[2].access: \"device_key\" is not one of open, verified, shared-secret, device-key, app-attest, android-key-attestation, attested, legacy-query-hmac, client-certificate, password, password-or-device, play-integrity, app-token, firebase-app-check, app-token-or-firebase-app-check, client-attestation, agent, legacy-envelope"
        ),
        ("{\"upstream\": \"http://x\", \"routes\": [{\"prefix\": \"/a//b\", \"access\": \"open\"}]}", "routes[0].prefix: \"/a//b\""),
        ("{\"upstream\": \"http://x\", \"maxBodyBytes\": \"big\"}", "maxBodyBytes: expected a number"),
        ("{\"upstream\": \"http://x\", \"routes\": [{\"access\": \"open\"}]}", "routes[0].prefix: missing"),
        ("{\"upstream\": \"http://x\", \"maxBodyByte\": 10}", "maxBodyByte\" is not a configuration key (valid there: "),
        // At the top, a key given null names no setting either.
        ("{\"upstream\": \"http://x\", \"maxBodyByte\": null}", "maxBodyByte\" is not a configuration key"),
        ("not json", "not valid JSON"),
        ("{\"upstream\": \"http://x\", \"ohttp\": {\"keys\": [{\"keyId\": 1, \"keyFile\": \"a\"}, {\"keyId\": 1, \"keyFile\": \"b\"}]}}", "ohttp.keys[1].keyId: 1 is also ohttp.keys[0]'s"),
        ("{\"upstream\": \"http://x\", \"ohttp\": {\"keys\": [{\"keyId\": 256, \"keyFile\": \"a\"}]}}", "ohttp.keys[0].keyId: 256 is not 0 to 255"),
        ("{\"upstream\": \"http://x\", \"ohttp\": {\"keys\": [{\"keyId\": 1, \"keyFile\": \"a\", \"kem\": \"x448\"}]}}", "ohttp.keys[0].kem: \"x448\" is not one of x25519, p256"),
        // A misspelt key inside an object or an array element is refused too, by its path.
        ("{\"upstream\": \"http://x\", \"routes\": [{\"prefix\": \"/\", \"access\": \"open\", \"method\": [\"GET\"]}]}", "routes[0].method is not a configuration key"),
        ("{\"upstream\": \"http://x\", \"policy\": {\"maxAgeSecond\": 5}}", "policy.maxAgeSecond is not a configuration key (valid there: clockSkewSeconds, coveredFields, maxAgeSeconds, requireNonce)"),
        ("{\"upstream\": \"http://x\", \"routes\": [{\"prefix\": \"/\", \"acess\": \"open\"}]}", "routes[0].acess is not a configuration key (did you mean access?)"),
        ("{\"upstream\": \"http://x\", \"listen\": 8080}", "listen: expected an object"),
        ("{\"upstream\": \"http://x\", \"maxBodyBytes\": \"1MB\"}", "maxBodyBytes: expected a number"),
        ("{\"upstream\": \"http://x\", \"listen\": \"localhost\"}", "\"localhost\" is not \"host:port\""),
        ("{\"upstream\": \"http://x\", \"tls\": {\"development\": true, \"clientCertificate\": true}}", "tls.clientCertificate is not a configuration key"),
        // Password login.
        ("{\"upstream\": \"http://x\", \"routes\": [{\"prefix\": \"/\", \"access\": \"password\"}]}", "routes[0].access: password routes need passwords"),
        ("{\"upstream\": \"http://x\", \"passwords\": {\"realm\": \"r\"}, \"routes\": [{\"prefix\": \"/\", \"access\": \"password\", \"digestMD5\": true}]}", "routes[0].digestMD5: add MD5 to passwords.digestAlgorithms"),
        ("{\"upstream\": \"http://x\", \"routes\": [{\"prefix\": \"/\", \"access\": \"open\", \"keepAuthorization\": true}]}", "routes[0]: digestMD5, requireAuthInt and keepAuthorization are for password routes"),
        ("{\"upstream\": \"http://x\", \"passwords\": {\"realm\": \"r\", \"digestAlgorithms\": [\"SHA-1\"]}}", "passwords.digestAlgorithms[0]: \"SHA-1\" is not one of SHA-256, SHA-512-256, MD5"),
        ("{\"upstream\": \"http://x\", \"passwords\": {\"realm\": \"r\", \"basicIterations\": 1000}}", "passwords.basicIterations: 210000 to 10000000"),
        ("{\"upstream\": \"http://x\", \"passwords\": {\"realm\": \"r\", \"lockoutSecond\": 5}}", "passwords.lockoutSecond is not a configuration key"),
        ("{\"upstream\": \"http://x\", \"passwords\": {\"realm\": \"r\", \"digestAlgorithms\": [\"MD5\"]}, \"routes\": [{\"prefix\": \"/\", \"access\": \"password\"}]}", "routes[0]: offers no login"),
        // App tokens and Firebase App Check.
        ("{\"upstream\": \"http://x\", \"routes\": [{\"prefix\": \"/\", \"access\": \"app-token\"}]}", "routes[0].access: app-token routes need tokens"),
        ("{\"upstream\": \"http://x\", \"routes\": [{\"prefix\": \"/\", \"access\": \"firebase-app-check\"}]}", "routes[0].access: firebase-app-check routes need firebaseAppCheck"),
        ("{\"upstream\": \"http://x\", \"tokens\": {\"issuer\": \"i\", \"audience\": [\"a\"], \"keyFile\": \"k\", \"ttlSeconds\": 299}}", "tokens.ttlSeconds is 300 to 604800, not 299"),
        ("{\"upstream\": \"http://x\", \"tokens\": {\"issuer\": \"i\", \"audience\": [\"a\"], \"keyFile\": \"k\", \"ttlSeconds\": 604801}}", "tokens.ttlSeconds is 300 to 604800, not 604801"),
        ("{\"upstream\": \"http://x\", \"tokens\": {\"issuer\": \"i\", \"audience\": [], \"keyFile\": \"k\"}}", "tokens: give an issuer and at least one audience"),
        ("{\"upstream\": \"http://x\", \"tokens\": {\"issuer\": \"i\", \"audience\": [\"a\"], \"keyFile\": \"k\", \"issueTo\": \"password\"}}", "tokens.issueTo: \"password\" is not one of device-key, app-attest, android-key-attestation, attested, client-certificate"),
        ("{\"upstream\": \"http://x\", \"tokens\": {\"issuer\": \"i\", \"audience\": [\"a\"], \"keyFile\": \"k\", \"issueTo\": \"client-certificate\"}}", "tokens.issueTo client-certificate needs tls.clientCertificates and deviceCA"),
        ("{\"upstream\": \"http://x\", \"tokens\": {\"issuer\": \"i\", \"audience\": [\"a\"], \"keyFile\": \"k\"}, \"routes\": [{\"prefix\": \"/\", \"access\": \"app-token\", \"audience\": \"b\"}]}", "routes[0].audience: \"b\" is not in tokens.audience"),
        ("{\"upstream\": \"http://x\", \"routes\": [{\"prefix\": \"/\", \"access\": \"open\", \"audience\": \"b\"}]}", "routes[0].audience is for app-token routes"),
        ("{\"upstream\": \"http://x\", \"routes\": [{\"prefix\": \"/\", \"access\": \"device-key\", \"keyId\": \"bank-v1\"}]}", "routes[0].keyId is for legacy-query-hmac routes"),
        ("{\"upstream\": \"http://x\", \"tokens\": {\"issuer\": \"i\", \"audience\": [\"a\"], \"keyFile\": \"k\"}, \"routes\": [{\"prefix\": \"/\", \"access\": \"app-token\", \"consumeAppCheckTokens\": true}]}", "routes[0].consumeAppCheckTokens is for routes that take App Check tokens"),
        ("{\"upstream\": \"http://x\", \"firebaseAppCheck\": {\"projectNumber\": \"my-project\"}}", "firebaseAppCheck.projectNumber is the project's number"),
        ("{\"upstream\": \"http://x\", \"firebaseAppCheck\": {\"projectNumber\": \"12\", \"jwksUrl\": \"http://example.com/jwks\"}}", "firebaseAppCheck.jwksUrl is https (plain http only on loopback)"),
    ])
    func mistakesNameTheKeyAndTheAllowedValues(_ text: String, _ expected: String) throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("signet-config-\(UUID().uuidString).json")
        try Data(text.utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let error = #expect(throws: ConfigurationError.self) { try GatewayConfiguration.load(file: file.path, environment: [:]) }
        #expect(error?.line != nil, "every mistake in a file is placed in it")
        #expect(error?.description.contains(expected) == true, "\(String(describing: error))")
    }
}
