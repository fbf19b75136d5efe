// SPDX-License-Identifier: Apache-2.0
import Foundation
import SignetClient
import SignetCore
import SignetServer
import SignetSimulator
import SignetTestSupport
import Testing

/// The SDK's client attestations over pinned TLS: fetched with a signed request, cached, sent with
/// a fresh PoP by the device key on the configured paths (signatures elsewhere), the gateway's
/// challenges followed, and the fields made for another server.
@Suite(.awaitsCleanups) struct ClientAttestationClientTests {
    static let clientID = "com.example.scores"
    static let audience = "https://api.example.com"

    static func start() async throws -> GatewayHarness {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("signet-sdk-attester-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return try await GatewayHarness.start(tls: GatewayHarness.developmentTLS) { configuration in
            configuration.tokens = .init(issuer: "https://gateway.example.com", audience: ["scores"], keyFile: folder.appendingPathComponent("tokens.pem").path)
            configuration.clientAttestation = .init(clientId: clientID, audience: audience)
            configuration.routes.insert(contentsOf: [
                .init(prefix: "/echo/attested", access: .init(mode: "client-attestation")),
                .init(prefix: "/echo/challenged", access: .init(mode: "client-attestation", options: ["attestationChallenge": .bool(true)])),
            ], at: 0)
        }
    }

    @Test func theClientCarriesItsAttestationWithAPoPAndFollowsChallenges() async throws {
        let harness = try await Self.start()
        Cleanup.after { try await harness.stop() }
        var configuration = try await harness.client().configuration
        configuration.clientAttestationPaths = ["/echo/attested", "/echo/challenged"]
        let client = try SignetClient(configuration: configuration)
        try await client.register(using: SoftwareKeyProvider())
        let device = try #require(await client.device)

        let first = try await client.send("GET", harness.base + "/echo/attested/balance")
        #expect(first.status == 200, "\(first.text)")
        let headers = first.json?["headers"] as? [String: String] ?? [:]
        #expect(headers["signet-device"] == device.deviceID && headers["signet-app-id"] == Self.clientID, "\(headers)")
        // No signature went with it, and the attestation stayed at the gateway.
        #expect(headers["signature"] == nil && headers["oauth-client-attestation"] == nil, "\(headers)")
        let cached = try await client.clientAttestation()
        #expect(cached.clientID == Self.clientID && cached.audience == Self.audience)
        #expect(try await client.send("POST", harness.base + "/echo/attested/again", body: Array("{}".utf8)).status == 200)
        #expect(try await client.clientAttestation() == cached)

        // The challenge route refuses the first PoP with a challenge, which the client follows on
        // its own, and keeps the next one the answer hands out.
        let challenged = try await client.send("GET", harness.base + "/echo/challenged/x")
        #expect(challenged.status == 200 && challenged.fields["OAuth-Client-Attestation-Challenge"] != nil, "\(challenged.text)")
        #expect(try await client.send("GET", harness.base + "/echo/challenged/y").status == 200)

        // Fields for another server: the attestation and a PoP for its audience, by the device key.
        let fields = try await client.clientAttestationFields(audience: "https://as.example.com", challenge: "c")
        let pop = try #require(fields["OAuth-Client-Attestation-PoP"])
        let attested = try #require(try JSONSerialization.jsonObject(with: Data(Base64.urlDecode(String(cached.attestation.split(separator: ".")[1]))!)) as? [String: Any])
        let jwk = try #require((attested["cnf"] as? [String: Any])?["jwk"] as? [String: Any])
        let key = try VerificationKey(jwk: try JWK(json: Array(try JSONSerialization.data(withJSONObject: jwk))))
        let proof = try ClientAttestationPoP(verifying: pop, key: key, audience: "https://as.example.com", now: Date(), lifetime: 60, clockSkew: 5)
        #expect(proof.challenge == "c")

        // A new key (registered again): the old key's attestation is forgotten, never sent with the
        // new key's PoPs.
        try await client.register(using: SoftwareKeyProvider())
        let renewed = try await client.send("GET", harness.base + "/echo/attested/after")
        #expect(renewed.status == 200, "\(renewed.text)")
        #expect(try await client.clientAttestation() != cached)

        // Paths that cover Signet's own endpoints never put the fetch behind itself.
        var everywhere = configuration
        everywhere.clientAttestationPaths = ["/"]
        let broad = try SignetClient(configuration: everywhere)
        try await broad.register(using: SoftwareKeyProvider())
        #expect(try await broad.send("GET", harness.base + "/echo/attested/x").status == 200)

        // Without the paths configured, the client signs, which the route does not take.
        let plain = try harness.client()
        try await plain.register(using: SoftwareKeyProvider())
        let refused = try await plain.send("GET", harness.base + "/echo/attested/x")
        #expect(refused.status == 401 && refused.reason == "client_attestation_missing", "\(refused.text)")
    }

    /// An App Attest install has its proof key attested: the request names it (with its consent, a
    /// PoP for the attester's endpoint under `tokens.issuer`), and the PoPs it makes on the routes
    /// pass as the App Attest device. Without the attester's name the consent is refused.
    @Test func anAppAttestInstallHasItsProofKeyAttestedAndCarriesIt() async throws {
        let harness = try await Self.start()
        Cleanup.after { try await harness.stop() }
        var configuration = try await harness.client().configuration
        configuration.clientAttestationPaths = ["/echo/attested", "/echo/challenged"]
        let service = SimulatedAppAttestService(appID: GatewayHarness.appID, ca: GatewayHarness.simulatorCA)

        // The gateway's issuer is not its origin here: a consent for the origin's endpoint is not one.
        let unnamed = try SignetClient(configuration: configuration)
        try await unnamed.register(using: AppAttestLifecycle(service: service, store: MemoryValueStore(), proofKeys: SoftwareKeyFactory()))
        let refused = await #expect(throws: SignetError.self) { try await unnamed.clientAttestation() }
        #expect(refused?.code == .clientAttestationPoPInvalid, "\(String(describing: refused))")

        configuration.attesterIssuer = "https://gateway.example.com"
        let client = try SignetClient(configuration: configuration)
        let device = try await client.register(using: AppAttestLifecycle(service: service, store: MemoryValueStore(), proofKeys: SoftwareKeyFactory()))
        let answer = try await client.send("GET", harness.base + "/echo/challenged/balance")
        #expect(answer.status == 200, "\(answer.text)")
        let headers = answer.json?["headers"] as? [String: String] ?? [:]
        #expect(headers["signet-device"] == device.deviceID && headers["signet-trust-level"] == "app-attest", "\(headers)")
        #expect(headers["signature"] == nil, "\(headers)")

        // What the gateway attested is the proof key, which signs the PoPs for another server too.
        let attestation = try await client.clientAttestation()
        let claims = try #require(try JSONSerialization.jsonObject(with: Data(Base64.urlDecode(String(attestation.attestation.split(separator: ".")[1]))!)) as? [String: Any])
        #expect(claims["platform"] as? String == "ios" && claims["trust_level"] as? String == "app-attest", "\(claims)")
        let jwk = try #require((claims["cnf"] as? [String: Any])?["jwk"] as? [String: Any])
        let key = try VerificationKey(jwk: try JWK(json: Array(try JSONSerialization.data(withJSONObject: jwk))))
        let fields = try await client.clientAttestationFields(audience: "https://as.example.com")
        _ = try ClientAttestationPoP(verifying: try #require(fields["OAuth-Client-Attestation-PoP"]), key: key, audience: "https://as.example.com", now: Date(), lifetime: 60, clockSkew: 5)
    }
}
