// SPDX-License-Identifier: Apache-2.0
import Foundation
import SignetCore
import SignetServer
import SignetTestSupport
import Testing

/// The published OpenAPI document: complete, the source of the docs' table, and what a live gateway
/// answers (schemathesis, an independent fuzzer, generating requests from it).
@Suite(.awaitsCleanups) struct ContractTests {
    static let root = SignetProcess.repositoryRoot
    static var document: [String: Any] {
        let data = (try? Data(contentsOf: root.appendingPathComponent("Sources/SignetServer/Contract/openapi.json"))) ?? Data()
        return (try? JSONSerialization.jsonObject(with: data) as? [String: Any]) ?? [:]
    }

    @Test func everyRouteOfTheGatewayIsDocumentedAndNothingElse() throws {
        let paths = Set((Self.document["paths"] as? [String: Any] ?? [:]).keys)
        // Every `/signet/v1/…` route literal in the sources, `:name` written `{name}`.
        var routes: Set<String> = []
        let sources = Self.root.appendingPathComponent("Sources")
        let files = FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil)!
        let pattern = try Regex(#""(/signet/v1/[A-Za-z0-9_.:/-]+)""#)
        for case let file as URL in files where file.pathExtension == "swift" {
            let text = try String(contentsOf: file, encoding: .utf8)
            for match in text.matches(of: pattern) {
                let route = String(match.output[1].substring!)
                guard !route.hasSuffix("/") else { continue }
                routes.insert(route.split(separator: "/").map { $0.hasPrefix(":") ? "{\($0.dropFirst())}" : String($0) }.joined(separator: "/"))
            }
        }
        routes = Set(routes.map { "/" + $0.drop(while: { $0 == "/" }) })
        #expect(routes.subtracting(paths).isEmpty, "routes without a contract: \(routes.subtracting(paths).sorted())")
        #expect(paths.subtracting(routes).isEmpty, "documented paths no route serves: \(paths.subtracting(routes).sorted())")
    }

    @Test func theProblemTypeNamesEveryReasonCode() throws {
        let schemas = try #require((Self.document["components"] as? [String: Any])?["schemas"] as? [String: Any])
        let problem = try #require(schemas["Problem"] as? [String: Any])
        let reason = try #require((problem["properties"] as? [String: Any])?["reason"] as? [String: Any])
        let codes = try #require(reason["enum"] as? [String])
        #expect(Set(codes) == Set(SignetError.Code.all.map(\.rawValue)))
        #expect(codes.count == SignetError.Code.all.count)
        // Each operation's reasons are codes of the catalogue.
        for (path, operations) in Self.document["paths"] as? [String: [String: Any]] ?? [:] {
            for (method, operation) in operations {
                let reasons = (operation as? [String: Any])?["x-signet-reasons"] as? [String] ?? []
                #expect(Set(reasons).isSubset(of: Set(codes)), "\(method) \(path)")
            }
        }
    }

    @Test func theDocsTableIsGeneratedFromTheDocument() async throws {
        let result = try await SignetProcess.run("/usr/bin/env", ["python3", Self.root.appendingPathComponent("scripts/contract-table.py").path, "--check"])
        #expect(result.status == 0, "\(result.stderr)")
    }

    static var schemathesis: String? {
        let path = URL(fileURLWithPath: PythonPeer.python).deletingLastPathComponent().appendingPathComponent("schemathesis").path
        let present = FileManager.default.isExecutableFile(atPath: path)
        precondition(present || ProcessInfo.processInfo.environment["CI"] == nil, "CI must install schemathesis (scripts/test.sh)")
        return present ? path : nil
    }

    /// Generated requests for every operation (examples, boundary cases, then random ones): no answer
    /// is a 5xx, and each has a documented status, content type, headers and body.
    @Test(.enabled(if: schemathesis != nil))
    func aLiveGatewayAnswersEveryGeneratedRequestAsDocumented() async throws {
        // Every optional endpoint on: accounts, app tokens, Oblivious HTTP keys.
        let harness = try await GatewayHarness.startWithPasswords(store: .sqlite) { configuration in
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("signet-contract-\(UUID().uuidString)")
            try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            configuration.tokens = .init(
                issuer: "https://gateway.example.com",
                audience: ["scores"],
                keyFile: folder.appendingPathComponent("tokens.pem").path
            )
            configuration.ohttp = .init(keys: [.init(keyId: 1, keyFile: folder.appendingPathComponent("ohttp.pem").path)])
            // The fuzzer sends hundreds of reports: a limit would leave the endpoint's logic untested.
            configuration.pinReportsPerSourcePerMinute = 1_000_000
        }
        Cleanup.after { try await harness.stop() }
        // A registered device, so reading one reaches the store instead of a 404 every time.
        let device = try await harness.register(.p256)
        let config = harness.folder.appendingPathComponent("schemathesis.toml")
        try Data(
            """
            [[operations]]
            include-name = "GET /signet/v1/devices/{id}"
            parameters = { "path.id" = "\(device.deviceID)" }
            """.utf8
        ).write(to: config)
        let result = try await SignetProcess.run(
            Self.schemathesis!,
            [
                "--config-file", config.path, "run", harness.base + "/signet/v1/openapi.json", "--url", harness.base, "--max-examples", "25",
                "--seed", "9421", "--generation-database", "none", "--phases", "examples,coverage,fuzzing",
                "--checks",
                "not_a_server_error,status_code_conformance,content_type_conformance,response_headers_conformance,response_schema_conformance,negative_data_rejection",
                // An encapsulated request is binary HPKE: its own fuzz and interop tests cover it.
                "--exclude-path", "/signet/v1/ohttp",
                "--header", "Authorization: Bearer \(GatewayHarness.adminToken)",
            ]
        )
        #expect(result.status == 0, "\(result.stdout.suffix(6_000))")
        #expect(result.stdout.contains(" passed"), "\(result.stdout.suffix(2_000))")
    }
}
