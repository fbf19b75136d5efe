// SPDX-License-Identifier: Apache-2.0
import Foundation
import SignetServer
import Testing

/// A route's `signatureKey` option, each refusal at its path: an `hwk` key on a route that would
/// refuse every one, `jwt` keys nobody issues, a scheme Signet does not take.
@Suite struct SignatureKeyConfigurationTests {
    static func refusal(attestations: Bool = true, _ mode: String, _ schemes: String) -> String? {
        var configuration = GatewayConfiguration(upstream: "http://127.0.0.1:9000")
        if attestations {
            configuration.tokens = .init(issuer: "https://gateway.example.com", audience: ["scores"], keyFile: "/tmp/signet-unused-tokens.pem")
            configuration.clientAttestation = .init(clientId: "com.example.scores", audience: "https://api.example.com")
        }
        configuration.routes = [.init(prefix: "/api", access: .init(mode: mode, options: ["signatureKey": .string(schemes)]))]
        return configuration.refusalPath
    }

    @Test func eachSchemeGoesOnlyWhereItCanPass() {
        #expect(Self.refusal("verified", "hwk") == nil)
        #expect(Self.refusal("verified", "hwk, jwt") == nil)
        for mode in ["shared-secret", "device-key", "app-attest", "android-key-attestation", "attested"] {
            #expect(Self.refusal(mode, "jwt") == nil, "\(mode)")
            #expect(Self.refusal(mode, "hwk") == "routes[0].signatureKey", "\(mode): an hwk key is pseudonymous")
        }
        #expect(Self.refusal(attestations: false, "device-key", "jwt") == "routes[0].signatureKey")
        #expect(Self.refusal("verified", "x509") == "routes[0].signatureKey")
        #expect(Self.refusal("verified", "hwk,") == "routes[0].signatureKey")
        #expect(Self.refusal("open", "hwk")?.hasPrefix("routes[0]") == true, "open routes take no keys")
    }
}
