// SPDX-License-Identifier: Apache-2.0
import Foundation
import SignetServer
import Testing

/// A configuration mistake is placed where it is, as a compiler places one: the file, the line and
/// column of the key (or of the character where the JSON goes wrong), the key path, and for an
/// unknown key the keys valid there. Strict JSON: what `JSONSerialization` would let through
/// silently (a trailing comma, a key given twice) is refused at its position.
@Suite struct ConfigurationErrorTests {
    static func refusal(_ text: String) -> ConfigurationError? {
        #expect(throws: ConfigurationError.self) { try GatewayConfiguration.decode(Data(text.utf8)) }
    }

    static let document = """
        {
          "upstream": "http://127.0.0.1:9000",
          "policy": {
            "maxAgeSecond": 60
          },
          "routes": [
            {"prefix": "/scores", "access": "device-key"},
            {"prefix": "/open",
             "acess": "open"}
          ]
        }
        """

    @Test func aNestedUnknownKeyIsPlacedAtItsLineAndColumnWithTheKeysValidThere() throws {
        let error = try #require(Self.refusal(Self.document.replacingOccurrences(of: "\"acess\"", with: "\"access\"")))
        #expect(error.kind == .unknownKey && error.path == "policy.maxAgeSecond")
        #expect(error.line == 4 && error.column == 5)
        #expect(error.validKeys.contains("maxAgeSeconds") && error.validKeys.contains("clockSkewSeconds"))
        #expect(error.description.hasPrefix("4:5: policy.maxAgeSecond is not a configuration key (valid there: "))
    }

    @Test func aMisspeltRequiredKeyIsPlacedAtTheMisspelling() throws {
        let fixed = Self.document.replacingOccurrences(of: "\"maxAgeSecond\"", with: "\"maxAgeSeconds\"")
        let error = try #require(Self.refusal(fixed))
        #expect(error.kind == .unknownKey && error.path == "routes[1].acess")
        #expect(error.line == 9 && error.column == 6)
        #expect(error.message.contains("did you mean access?"))
    }

    @Test(arguments: [
        (#"{"upstream": "http://x",}"#, 1, 25, "a comma before }"),
        (#"{"upstream": "http://x", "routes": [{"prefix": "/", "access": "open"},]}"#, 1, 71, "a comma before ]"),
        ("{\"upstream\": \"http://x\",\n \"debug\": true,\n \"debug\": false}", 3, 2, #""debug" is given twice"#),
        ("{\"upstream\": \"http://x\n\"}", 1, 23, "a control character"),
        (#"{"upstream": 'http://x'}"#, 1, 14, "expected a value"),
        (#"{"upstream": "http://x"} {}"#, 1, 26, "text after the end"),
        (#"{"upstream": "http://x", "maxBodyBytes": 01}"#, 1, 43, "expected }"),
        (#"{"upstream": "http://x""#, 1, 24, "found the end of the file"),
        ("\u{FEFF}{\"upstream\": \"http://x\", \"débug\" true}", 1, 34, "expected :"),
    ])
    func brokenJSONIsPlacedWhereItBreaks(_ text: String, _ line: Int, _ column: Int, _ said: String) throws {
        let error = try #require(Self.refusal(text))
        #expect(error.kind == .syntax)
        #expect(error.line == line && error.column == column, "\(error)")
        #expect(error.message.contains(said), "\(error)")
    }

    /// Found by the `configuration` fuzz target: keys are compared as Foundation reads them, escapes
    /// decoded, and a string must be UTF-8.
    @Test func anEscapedDuplicateKeyAndAStringThatIsNotUTF8AreRefused() throws {
        let escaped = try #require(Self.refusal(#"{"upstream": "http://x", "deb\u0075g": true, "debug": false}"#))
        #expect(error(escaped, contains: #""debug" is given twice"#))
        let pair = try #require(Self.refusal(#"{"upstream": "http://x", "x\ud83d\ude00": 1, "x😀": 2}"#))
        #expect(error(pair, contains: "is given twice"))
        let huge = try #require(Self.refusal(#"{"upstream": "http://x", "maxBodyBytes": 3E400}"#))
        #expect(error(huge, contains: "too large to be represented") && huge.column == 42, "\(huge)")
        let lone = try #require(Self.refusal(#"{"upstream": "http://x", "x\ud83d": 1}"#))
        #expect(error(lone, contains: "lone surrogate"))
        let bytes = Array(#"{"upstream": "http://x", "x": ""#.utf8) + [0xC3, 0x28] + Array(#""}"#.utf8)
        #expect {
            try GatewayConfiguration.decode(Data(bytes))
        } throws: { error in
            (error as? ConfigurationError).map { $0.kind == .syntax && $0.message.contains("not UTF-8") && $0.line == 1 } ?? false
        }
    }

    private func error(_ error: ConfigurationError, contains said: String) -> Bool {
        error.kind == .syntax && error.message.contains(said)
    }

    @Test func aFileTooLargeToBeAConfigurationIsRefusedUnread() throws {
        let huge = #"{"upstream": ""# + String(repeating: "a", count: 4 << 20) + #""}"#
        let error = try #require(Self.refusal(huge))
        #expect(error.kind == .syntax && error.message.contains("over 4 MiB"))
    }

    @Test func nestingIsBounded() throws {
        let deep = #"{"upstream": "http://x", "policy": "# + String(repeating: "[", count: 100) + String(repeating: "]", count: 100) + "}"
        let error = try #require(Self.refusal(deep))
        #expect(error.kind == .syntax && error.message.contains("nested deeper than"))
    }

    @Test func aValueThatDoesNotGoIsPlacedAtItsKeyInTheFile() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("signet-placed-\(UUID().uuidString).json")
        try Data(
            """
            {
              "upstream": "http://127.0.0.1:9000",
              "tokens": {
                "issuer": "https://gateway.example.com",
                "audience": ["scores"],
                "keyFile": "tokens.pem",
                "ttlSeconds": 5
              }
            }
            """.utf8
        ).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let error = try #require(#expect(throws: ConfigurationError.self) { try GatewayConfiguration.load(file: file.path, environment: [:]) })
        #expect(error.kind == .invalidValue && error.path == "tokens.ttlSeconds")
        #expect(error.description.hasPrefix("\(file.path):7:5: tokens.ttlSeconds is 300 to 604800"), "\(error)")
        // A wrong kind of value is its own kind of mistake.
        let typed = try #require(Self.refusal(#"{"upstream": "http://x", "maxBodyBytes": "1 MiB"}"#))
        #expect(typed.kind == .wrongType && typed.message == "maxBodyBytes: expected a number" && typed.column == 26)
        let missing = try #require(Self.refusal(#"{"listen": {"port": 1}}"#))
        #expect(missing.kind == .missingKey && missing.message == "upstream: missing" && missing.line == 1 && missing.column == 1)
    }

    @Test func aSecretThatIsNotBase64IsPlacedAtItsKey() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("signet-secret-\(UUID().uuidString).json")
        try Data(
            """
            {
              "upstream": "http://127.0.0.1:9000",
              "sharedSecrets": [
                {"keyId": "bank-v1", "secretBase64": "not base64!"}
              ]
            }
            """.utf8
        ).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let error = try #require(#expect(throws: ConfigurationError.self) { try GatewayConfiguration.load(file: file.path, environment: [:]) })
        #expect(error.path == "sharedSecrets[0].secretBase64")
        #expect(error.description.hasPrefix("\(file.path):4:"), "\(error)")
    }

    @Test(arguments: [
        (#"{"upstream": "http://x", "requestTimeoutSeconds": 0}"#, "requestTimeoutSeconds"),
        (#"{"upstream": "http://x", "maxConnections": 0}"#, "maxConnections"),
        (#"{"upstream": "http://x", "maxConnectionsPerClient": 0}"#, "maxConnectionsPerClient"),
        (#"{"upstream": "http://x", "instance": ""}"#, "instance"),
        (#"{"upstream": "http://x", "instance": "gw a"}"#, "instance"),
        (#"{"upstream": "http://x", "instance": "gw\"} 1\n"}"#, "instance"),
    ])
    func connectionAndDeadlineSettingsAreBounded(_ text: String, _ path: String) throws {
        let configuration = try GatewayConfiguration.decode(Data(text.utf8))
        let error = try #require(#expect(throws: ConfigurationError.self) { try configuration.validate() })
        #expect(error.path == path, "\(error)")
    }

    /// The authorization listener's callers say which request they ask about: only loopback or
    /// TLS, and a port of each listener's own.
    @Test(arguments: [
        (#"{"upstream": "http://x", "authorizationListener": {"listen": {"host": "0.0.0.0", "port": 9001}}}"#, "authorizationListener.listen"),
        (#"{"upstream": "http://x", "authorizationListener": {"listen": "127.0.0.1:9001", "grpc": {"host": "10.0.0.2", "port": 9002}}}"#, "authorizationListener.grpc"),
        (#"{"upstream": "http://x", "listen": "127.0.0.1:9001", "authorizationListener": {"listen": "127.0.0.1:9001"}}"#, "authorizationListener.listen"),
        (#"{"upstream": "http://x", "authorizationListener": {"listen": "127.0.0.1:9001", "grpc": "127.0.0.1:9001"}}"#, "authorizationListener.grpc"),
        (#"{"upstream": "http://x", "adminListener": {"listen": "127.0.0.1:9003"}, "authorizationListener": {"listen": "127.0.0.1:9003"}}"#, "authorizationListener.listen"),
        (#"{"upstream": "http://x", "authorizationListener": {"listen": "127.0.0.1:70000"}}"#, "authorizationListener.listen.port"),
        (#"{"upstream": "http://x", "authorizationListener": {"listen": "127.0.0.1:9001", "clientCAFile": "ca.pem"}}"#, "authorizationListener.clientCAFile"),
        // gRPC's transport binds an address, not a name.
        (#"{"upstream": "http://x", "development": true, "authorizationListener": {"listen": "127.0.0.1:9001", "grpc": "authz.internal:9002"}}"#, "authorizationListener.grpc.host"),
    ])
    func theAuthorizationListenerIsReachedOnlyByTheProxies(_ text: String, _ path: String) throws {
        let configuration = try GatewayConfiguration.decode(Data(text.utf8))
        let error = try #require(#expect(throws: ConfigurationError.self) { try configuration.validate() })
        #expect(error.path == path, "\(error)")
    }

    @Test func anAuthorizationListenerOnTheNetworkIsTakenWithTLS() throws {
        let text = #"{"upstream": "http://x", "authorizationListener": {"listen": {"host": "0.0.0.0", "port": 9001}, "tls": {"development": true}}}"#
        try GatewayConfiguration.decode(Data(text.utf8)).validate()
    }

    /// An instance goes by its host name unless named; a name is checked like any other setting,
    /// and `SIGNET_INSTANCE` names it per process.
    @Test func anInstanceIsNamedByItsHostUnlessNamed() throws {
        let unnamed = try GatewayConfiguration.load(file: nil, environment: ["SIGNET_UPSTREAM": "http://x"])
        #expect(unnamed.instance == nil && GatewayConfiguration.isInstanceName(unnamed.instanceName), "\(unnamed.instanceName)")
        let named = try GatewayConfiguration.load(file: nil, environment: ["SIGNET_UPSTREAM": "http://x", "SIGNET_INSTANCE": "gw-2"])
        #expect(named.instanceName == "gw-2")
        let error = try #require(
            #expect(throws: ConfigurationError.self) {
                try GatewayConfiguration.load(file: nil, environment: ["SIGNET_UPSTREAM": "http://x", "SIGNET_INSTANCE": "a/b"])
            }
        )
        #expect(error.path == "instance", "\(error)")
    }
}
