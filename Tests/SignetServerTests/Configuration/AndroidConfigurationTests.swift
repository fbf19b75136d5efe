// SPDX-License-Identifier: Apache-2.0
import Foundation
import SignetCore
import SignetServer
import Testing

/// Every refusal of the `androidAttestation` settings, at its key path: what would otherwise take
/// emulators in production, send a service account's access token in clear, let the revocation
/// list go stale at every refresh, or take a digest that can never match.
@Suite struct AndroidConfigurationTests {
    typealias Android = GatewayConfiguration.AndroidAttestation

    static func refusal(development: Bool = false, _ change: (inout Android) -> Void) -> String? {
        var configuration = GatewayConfiguration(upstream: "http://127.0.0.1:9000")
        configuration.development = development
        var android = Android(packageNames: ["com.example.scores"])
        change(&android)
        configuration.androidAttestation = android
        return configuration.refusalPath
    }

    @Test func eachBadSettingIsRefusedAtItsPath() throws {
        #expect(Self.refusal { _ in } == nil)
        #expect(Self.refusal { $0.allowSoftware = true } == "androidAttestation.allowSoftware")
        #expect(Self.refusal(development: true) { $0.allowSoftware = true } == nil)
        #expect(Self.refusal { $0.signingDigests = ["abcd"] } == "androidAttestation.signingDigests[0]")
        #expect(Self.refusal { $0.signingDigests = [String(repeating: "ab", count: 32)] } == nil)
        #expect(Self.refusal { $0.signingDigests = [Array(repeating: "AB", count: 32).joined(separator: ":")] } == nil, "keytool's form")
        #expect(Self.refusal { $0.minimumPatchLevel = 202_413 } == "androidAttestation.minimumPatchLevel")
        #expect(Self.refusal { $0.statusList = .init(url: "https://a.example", file: "b.json") } == "androidAttestation.statusList")
        for url in ["http://status.example", "http://localhost.evil.example/x", "http://127.0.0.1.nip.io/x", "http://localhost@evil.example/x"] {
            #expect(Self.refusal { $0.statusList = .init(url: url) } == "androidAttestation.statusList.url", "\(url)")
        }
        #expect(Self.refusal { $0.statusList = .init(url: "http://127.0.0.1:8080/status") } == nil)
        #expect(Self.refusal { $0.statusList = .init(); $0.statusList?.refreshSeconds = 30 } == "androidAttestation.statusList.refreshSeconds")
        #expect(
            Self.refusal { $0.statusList = .init(); $0.statusList?.refreshSeconds = 3600; $0.statusList?.maximumAgeSeconds = 5000 }
                == "androidAttestation.statusList.maximumAgeSeconds"
        )
        #expect(Self.refusal { $0.leakedKeys = .init(windowSeconds: 10, flagAt: 1, blockAt: 2) } == "androidAttestation.leakedKeys.windowSeconds")
        #expect(Self.refusal { $0.leakedKeys = .init(flagAt: 5, blockAt: 2) } == "androidAttestation.leakedKeys")
        #expect(Self.refusal { $0.playIntegrity = .init(decryptionKeyFile: "a") } == "androidAttestation.playIntegrity")
        #expect(Self.refusal { $0.playIntegrity = .init() } == "androidAttestation.playIntegrity")
        #expect(
            Self.refusal { $0.playIntegrity = .init(standard: .init(serviceAccountFile: "s.json", packageName: "com.example/../x")) }
                == "androidAttestation.playIntegrity.standard.packageName"
        )
        #expect(
            Self.refusal {
                $0.playIntegrity = .init(standard: .init(serviceAccountFile: "s.json", packageName: "com.example.scores", decodeUrl: "http://localhost.evil.example/{package}"))
            } == "androidAttestation.playIntegrity.standard.decodeUrl"
        )
        #expect(
            Self.refusal { $0.playIntegrity = .init(decryptionKeyFile: "a", verificationKeyFile: "b"); $0.playIntegrity?.maximumAgeSeconds = 5 }
                == "androidAttestation.playIntegrity.maximumAgeSeconds"
        )
        func environment(_ change: (inout GatewayConfiguration.AndroidAttestation.PlayIntegrity.Environment) -> Void) -> String? {
            Self.refusal {
                $0.playIntegrity = .init(decryptionKeyFile: "a", verificationKeyFile: "b")
                var settings = GatewayConfiguration.AndroidAttestation.PlayIntegrity.Environment()
                change(&settings)
                $0.playIntegrity?.environment = settings
            }
        }
        let at = "androidAttestation.playIntegrity.environment"
        #expect(environment { $0.maximumPlayProtectRisk = "LOW_RISK" } == "\(at).maximumPlayProtectRisk")
        #expect(environment { $0.refuseAppsDetected = ["KNOWN_CAPTURING", "CAPTURING"] } == "\(at).refuseAppsDetected")
        #expect(environment { $0.maximumDeviceActivityLevel = 5 } == "\(at).maximumDeviceActivityLevel")
        #expect(environment { $0.minimumSdkVersion = 0 } == "\(at).minimumSdkVersion")
        #expect(environment { $0.refuseRecallBits = [0] } == "\(at).refuseRecallBits")
        let valid = environment {
            $0.maximumPlayProtectRisk = "NO_DATA"
            $0.refuseAppsDetected = ["KNOWN_CONTROLLING"]
            $0.maximumDeviceActivityLevel = 3
            $0.minimumSdkVersion = 31
            $0.refuseRecallBits = [1]
        }
        #expect(valid != "\(at).maximumPlayProtectRisk" && valid?.hasPrefix(at) != true)

        // `action` is refuse or flag, as JSON writes it.
        typealias Environment = GatewayConfiguration.AndroidAttestation.PlayIntegrity.Environment
        let flagging = try JSONDecoder().decode(Environment.self, from: Data(#"{"maximumPlayProtectRisk": "NO_DATA", "action": "flag"}"#.utf8))
        #expect(flagging.action == .flag)
        #expect(throws: (any Error).self) { try JSONDecoder().decode(Environment.self, from: Data(#"{"action": "warn"}"#.utf8)) }
    }

    @Test func aPlayIntegrityRouteNeedsPlayIntegrity() {
        var configuration = GatewayConfiguration(upstream: "http://127.0.0.1:9000")
        configuration.routes = [.init(prefix: "/buy", access: .playIntegrity)]
        let error = #expect(throws: ConfigurationError.self) { try configuration.validate() }
        #expect(error?.path == "routes[0].access")
    }
}
