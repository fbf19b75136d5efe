// SPDX-License-Identifier: Apache-2.0
import Foundation
import NIOHTTP1
import SignetCore
import SignetMiddleware
import SignetServer
import SignetSimulator
import SignetTestSupport
import Testing

/// Keys delivered in the request (draft-hardt-httpbis-signature-key-08): `hwk` keys on a `verified`
/// route that takes them, pseudonymous; `jwt` keys, the gateway's own client attestations, whose
/// `cnf.jwk` signs for the attested device; every refusal with its code, the draft's
/// `Signature-Error`, and what the route takes.
@Suite(.awaitsCleanups) struct SignatureKeyTests {
    static func start(
        transport: GatewayHarness.Transport = .router,
        _ adjust: @escaping (inout GatewayConfiguration) -> Void = { _ in }
    ) async throws -> GatewayHarness {
        try await ClientAttestationTests.start(transport: transport) { configuration in
            adjust(&configuration)
            configuration.routes.insert(contentsOf: [
                .init(prefix: "/echo/open-keys", access: .init(mode: "verified", options: ["signatureKey": .string("hwk, jwt")])),
                .init(prefix: "/echo/devices", access: .init(mode: "device-key", options: ["signatureKey": .string("jwt")])),
            ], at: 0)
        }
    }

    static func hwk(_ key: SigningKey, alg: String) throws -> String {
        let jwk = key.verificationKey.jwk
        var parameters = [("kty", jwk.kty)]
        for (name, value) in [("crv", jwk.crv), ("x", jwk.x), ("y", jwk.y), ("n", jwk.n), ("e", jwk.e)] {
            if let value { parameters.append((name, value)) }
        }
        parameters.append(("alg", alg))
        return "sig1=hwk;" + parameters.map { "\($0.0)=\"\($0.1)\"" }.joined(separator: ";")
    }

    /// `key` signs a GET of `path` that carries `signatureKey`, covering it unless told otherwise,
    /// under `keyID` (none when `nil`).
    static func get(
        _ harness: GatewayHarness,
        _ path: String,
        key: SigningKey,
        signatureKey: String?,
        keyID: String?,
        cover: Bool = true,
        nonce: String = Nonce.random(),
        twice: Bool = false
    ) async throws -> GatewayHarness.Answer {
        var fields: MessageFields = []
        if let signatureKey { fields.append(name: "Signature-Key", value: signatureKey) }
        let request = try HTTPMessage.request(method: "GET", uri: harness.base + path, fields: fields)
        var components: [ComponentIdentifier] = ["@method", "@target-uri"]
        if cover && signatureKey != nil { components.append("signature-key") }
        // Built by hand: a signature with no keyid at all, the key being the one delivered.
        let parameters = SignatureParameters(components: components, created: Int64(Date().timeIntervalSince1970), nonce: nonce, keyID: keyID)
        let base = try SignatureBase(message: request, parameters: parameters)
        let signature = try SignatureAlgorithms.standard.require(key.type.defaultAlgorithm).sign(base.bytes, with: key)
        var signed = request
        signed.fields.append(name: "Signature-Input", value: "sig1=" + (try parameters.serialized))
        signed.fields.append(name: "Signature", value: "sig1=:\(Base64.encode(signature)):")
        if twice {
            // A second label with the same parameters and signature, which covers no key of its own.
            signed.fields.append(name: "Signature-Input", value: "sig2=" + (try parameters.serialized))
            signed.fields.append(name: "Signature", value: "sig2=:\(Base64.encode(signature)):")
        }
        return try await GatewayHarness.send(signed)
    }

    static func echoed(_ answer: GatewayHarness.Answer) -> [String: String] { answer.json["headers"] as? [String: String] ?? [:] }

    @Test func anHwkKeyIsAPseudonymOnlyWhereARouteTakesOne() async throws {
        let harness = try await Self.start()
        Cleanup.after { try await harness.stop() }
        let key = try SigningKey.generate(.ed25519)
        let thumbprint = try key.verificationKey.jwk.thumbprint
        let member = try Self.hwk(key, alg: "Ed25519")
        let nonce = Nonce.random()
        let accepted = try await Self.get(harness, "/echo/open-keys", key: key, signatureKey: member, keyID: nil, nonce: nonce)
        #expect(accepted.status == 200, "\(accepted.text)")
        #expect(Self.echoed(accepted)["signet-trust-level"] == "pseudonymous")
        #expect(Self.echoed(accepted)["signet-key-id"] == thumbprint)
        #expect(Self.echoed(accepted)["signet-device"] == nil)
        // The same nonce again, under the same delivered key: a replay.
        let replay = try await Self.get(harness, "/echo/open-keys", key: key, signatureKey: member, keyID: nil, nonce: nonce)
        #expect(replay.reason == "nonce_replayed")
        // A keyid, where given, is the key's thumbprint.
        #expect(try await Self.get(harness, "/echo/open-keys", key: key, signatureKey: member, keyID: thumbprint).status == 200)
        let other = try await Self.get(harness, "/echo/open-keys", key: key, signatureKey: member, keyID: "someone-else")
        #expect(other.status == 400 && other.reason == "key_mismatch", "\(other.text)")
        #expect(other.headers["Signature-Error"] == ["error=invalid_key"])
        // Where no route takes delivered keys, Signature-Key is no key at all.
        let elsewhere = try await Self.get(harness, "/echo/anything", key: key, signatureKey: member, keyID: nil)
        #expect(elsewhere.status == 401 && elsewhere.reason == "parameter_missing", "\(elsewhere.text)")
        #expect(elsewhere.headers["Signature-Error"].isEmpty)
        // P-256 and RSA keys too, each with its alg.
        let p256 = try SigningKey.generate(.p256)
        #expect(try await Self.get(harness, "/echo/open-keys", key: p256, signatureKey: Self.hwk(p256, alg: "ES256"), keyID: nil).status == 200)
        let rsa = try SigningKey.generate(.rsa)
        #expect(try await Self.get(harness, "/echo/open-keys", key: rsa, signatureKey: Self.hwk(rsa, alg: "PS512"), keyID: nil).status == 200)
    }

    @Test func everyBadDeliveredKeyIsRefusedWithItsCodeAndTheDraftsError() async throws {
        let harness = try await Self.start()
        Cleanup.after { try await harness.stop() }
        let key = try SigningKey.generate(.ed25519)
        let member = try Self.hwk(key, alg: "Ed25519")
        func refused(_ signatureKey: String?, cover: Bool = true, path: String = "/echo/open-keys") async throws -> GatewayHarness.Answer {
            try await Self.get(harness, path, key: key, signatureKey: signatureKey, keyID: nil, cover: cover)
        }
        let twice = try await Self.get(harness, "/echo/open-keys", key: key, signatureKey: member, keyID: nil, twice: true)
        #expect(twice.status == 401 && twice.reason == "ambiguous_signature", "\(twice.text)")
        #expect(twice.headers["Signature-Error"] == ["error=invalid_request"])
        let uncovered = try await refused(member, cover: false)
        #expect(uncovered.status == 401 && uncovered.reason == "component_not_covered", "\(uncovered.text)")
        let required = try #require(uncovered.headers["Signature-Error"].first)
        #expect(required.hasPrefix("error=invalid_input, required_input=(") && required.contains("\"signature-key\""), "\(required)")

        let x509 = try await refused(#"sig1=x509;x5c="MIIB""#)
        #expect(x509.status == 401 && x509.reason == "signature_key_unsupported", "\(x509.text)")
        #expect(x509.headers["Signature-Error"] == ["error=unsupported_scheme"])
        #expect(x509.headers["Accept-Signature-Scheme"] == ["hwk, jwt"])

        let eddsa = try await refused(member.replacingOccurrences(of: "alg=\"Ed25519\"", with: "alg=\"EdDSA\""))
        #expect(eddsa.reason == "alg_unsupported" && eddsa.headers["Signature-Error"] == ["error=unsupported_algorithm"], "\(eddsa.text)")
        #expect(eddsa.headers["Accept-Signature-Alg"] == ["Ed25519, ES256, ES384, PS512, RS256"])
        let wrongCurve = try await refused(member.replacingOccurrences(of: "alg=\"Ed25519\"", with: "alg=\"ES256\""))
        #expect(wrongCurve.reason == "alg_mismatch" && wrongCurve.headers["Signature-Error"] == ["error=invalid_key"], "\(wrongCurve.text)")
        for bad in [member + ";kid=\"k1\"", member + ";d=\"AAAA\"", "sig1=hwk;kty=\"OKP\"", "sig1=\"hwk\"", "sig1=hwk;kty=OKP;alg=\"Ed25519\"", "sig1=(hwk)"] {
            let answer = try await refused(bad)
            #expect(answer.status == 401 && answer.reason == "signature_key_invalid", "\(bad): \(answer.text)")
            #expect(answer.headers["Signature-Error"] == ["error=invalid_key"], "\(bad)")
        }
        let offCurve = member.replacingOccurrences(of: "kty=\"OKP\"", with: "kty=\"EC\"")
        #expect(try await refused(offCurve).reason == "invalid_key")
        // A key whose signature does not verify, and none at all: the draft's errors and schemes.
        let stranger = try SigningKey.generate(.ed25519)
        let forged = try await Self.get(harness, "/echo/open-keys", key: stranger, signatureKey: member, keyID: nil)
        #expect(forged.reason == "signature_invalid" && forged.headers["Signature-Error"] == ["error=invalid_signature"], "\(forged.text)")
        let unsigned = try await GatewayHarness.send(method: "GET", url: harness.base + "/echo/open-keys")
        #expect(unsigned.reason == "signature_missing" && unsigned.headers["Accept-Signature-Scheme"] == ["hwk, jwt"], "\(unsigned.text)")
        // A route that takes jwt keys only refuses an hwk key, and a pseudonymous key never passes a
        // device route.
        let device = try await refused(member, path: "/echo/devices")
        #expect(device.reason == "signature_key_unsupported" && device.headers["Accept-Signature-Scheme"] == ["jwt"], "\(device.text)")
    }

    /// A device with a client attestation signs with the attested key, delivering the attestation
    /// in `Signature-Key`: it is that device, without a registration lookup by key id; a revoked
    /// device's attestation no longer delivers a key.
    @Test func aClientAttestationDeliversTheDevicesKey() async throws {
        let harness = try await Self.start()
        Cleanup.after { try await harness.stop() }
        let device = try await harness.register(.p256)
        let attestation = try await ClientAttestationTests.attestation(harness, device)
        let member = "sig1=jwt;jwt=\"\(attestation)\""
        let accepted = try await Self.get(harness, "/echo/devices", key: device.key, signatureKey: member, keyID: nil)
        #expect(accepted.status == 200, "\(accepted.text)")
        #expect(Self.echoed(accepted)["signet-device"] == device.deviceID)
        #expect(Self.echoed(accepted)["signet-trust-level"] == "device-key")
        #expect(Self.echoed(accepted)["signet-key-id"] == (try device.key.verificationKey.jwk.thumbprint))
        // Another key than the attested one signs: the signature does not verify.
        let thief = try SigningKey.generate(.p256)
        #expect(try await Self.get(harness, "/echo/devices", key: thief, signatureKey: member, keyID: nil).reason == "signature_invalid")
        // A forged attestation, and one of a revoked device.
        let forged = try await Self.get(harness, "/echo/devices", key: device.key, signatureKey: "sig1=jwt;jwt=\"\(attestation.dropLast(4))AAAA\"", keyID: nil)
        #expect(forged.reason == "client_attestation_invalid" && forged.headers["Signature-Error"] == ["error=invalid_jwt"], "\(forged.text)")
        let revoked = try await GatewayHarness.send(
            method: "DELETE", url: harness.base + "/signet/v1/devices/\(device.deviceID)",
            headers: [("Authorization", "Bearer \(GatewayHarness.adminToken)")])
        #expect(revoked.status == 200 || revoked.status == 204, "\(revoked.text)")
        let after = try await Self.get(harness, "/echo/devices", key: device.key, signatureKey: member, keyID: nil)
        #expect(after.reason == "client_attestation_invalid", "\(after.text)")
    }

    /// An App Attest device's client attestation of a key it names delivers that key: the request is
    /// the device's, but signed without an assertion it declares no app build, so wherever an
    /// app-build policy asks anything it is refused rather than let past it.
    @Test func anAppAttestDevicesNamedKeyDeclaresNoBuildAndFailsClosed() async throws {
        for policy in [false, true] {
            let harness = try await Self.start { if policy { $0.appAttest?.appCategories = ["app-store"] } }
            Cleanup.after { try await harness.stop() }
            let iPhone = SimulatedAppAttestDevice(
                appID: GatewayHarness.appID, ca: GatewayHarness.simulatorCA, appBuild: AppBuild(category: .appStore, bundleVersion: "1"))
            try #require(try await harness.attest(iPhone).status == 201)
            let named = try SigningKey.generate(.p256)
            let request = try HTTPMessage.request(
                method: "POST",
                uri: harness.base + "/signet/v1/client-attestations",
                fields: [
                    ("Content-Type", "application/json"),
                    ("OAuth-Client-Attestation-PoP", try ClientAttestationTests.pop(named, audience: ClientAttestationTests.consent)),
                ],
                body: Array(#"{"jwk":\#(named.verificationKey.jwk.jsonString)}"#.utf8)
            )
            let issued = try await GatewayHarness.send(try SimulatedAppAttestSigner(device: iPhone).sign(request, created: Date(), nonce: Nonce.random()))
            let jwt = try #require(issued.json["attestation"] as? String, "\(issued.text)")
            let answer = try await Self.get(harness, "/echo/devices", key: named, signatureKey: "sig1=jwt;jwt=\"\(jwt)\"", keyID: nil)
            if policy {
                #expect(answer.status == 403 && answer.reason == "app_build_undeclared", "\(answer.text)")
                #expect(answer.headers["Signature-Error"].isEmpty, "a policy refusal carries no Signature-Error")
            } else {
                #expect(answer.status == 200 && Self.echoed(answer)["signet-trust-level"] == "app-attest", "\(answer.text)")
            }
        }
    }
}
