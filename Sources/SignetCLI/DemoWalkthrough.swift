// SPDX-License-Identifier: Apache-2.0
import Crypto
import Foundation
import SignetClient
import SignetCore
import SignetSimulator
import SwiftASN1
import X509

/// The device side of `signet demo`: the client SDK over pinned HTTPS to the gateway.
struct DemoWalkthrough {
    let base: String
    /// The admin listener: the console and the admin API, apart from the apps' origin.
    let adminBase: String
    /// The gateway's served chain, leaf first (a development CA issued it).
    let servedChain: [Certificate]
    let gatewayKey: VerificationKey
    let legacySecret: [UInt8]
    let simulatorCA: DevelopmentAttestationCA
    /// The gateway's admin bearer token (the bank creates its user with it).
    let adminToken: String
    /// How long the gateway's Digest nonces last.
    let nonceLifetime: Int
    static let appID = "ABCDE12345.dev.signet.scores"

    func makeClient(pins: Set<SPKIPin>? = nil, reportPins: Bool = true) throws -> SignetClient {
        let pinned = try pins ?? Set(servedChain.map { try SPKIPin(certificateDER: $0.serializeAsPEM().derBytes) })
        return try SignetClient(
            configuration: .init(
                origins: [try Origin(base), try Origin(adminBase)],
                trust: ServerTrustEvaluator(
                    roots: .only([servedChain.last!]),
                    pinSets: [try PinSet(pattern: try HostPattern("localhost"), pins: pinned)]
                ),
                responseKeys: KeyRing([KeyRecord(keyID: "gateway", algorithm: "ed25519", key: gatewayKey)]),
                pinReportPath: reportPins ? "/signet/v1/pin-reports" : nil,
                timeout: .seconds(10)
            )
        )
    }

    func run() async throws {
        step(0, "pin the gateway: its served chain, leaf first")
        for certificate in servedChain {
            print("   \(try SPKIPin(certificateDER: certificate.serializeAsPEM().derBytes))  \(certificate.subject)")
        }
        let client = try makeClient()

        step(1, "get a one-time challenge (over pinned TLS)")
        let challengeAnswer = try await client.send("POST", base + "/signet/v1/challenges", sign: false)
        let challenge = try field("challenge", of: challengeAnswer, expecting: 201)
        print("   201 challenge \(challenge.prefix(16))…")

        step(2, "register a P-256 device key: the challenge signed (proof of possession) and a CSR")
        let provider = SoftwareKeyProvider(requestCertificate: true)
        let registration = try await provider.registration(challenge: challenge)
        let registered = try await client.send(
            "POST",
            base + registration.path,
            fields: [("Content-Type", "application/json")],
            body: registration.body,
            sign: false
        )
        let device = RegisteredDevice(
            deviceID: try field("deviceId", of: registered, expecting: 201),
            keyID: try field("keyid", of: registered, expecting: 201),
            certificateChainPEM: try field("certificate", of: registered, expecting: 201)
        )
        print("   201 deviceId \(device.deviceID) keyid \(device.keyID)")
        print("   the device CA issued a client certificate for the same key (the key never left the device)")
        let replayedRegistration = try await client.send(
            "POST",
            base + registration.path,
            fields: [("Content-Type", "application/json")],
            body: registration.body,
            sign: false
        )
        print("   the same challenge again: \(replayedRegistration.status) \(replayedRegistration.reason ?? "-")")
        let signer = try await provider.signer(for: device)
        await client.useSigner(signer)

        step(3, "submit a signed score; the gateway's response signature is verified")
        let scoreBody = Array("{\"name\":\"Gilgamesh\",\"score\":100}".utf8)
        let signed = try await signer.sign(
            try HTTPMessage.request(
                method: "POST",
                uri: base + "/scores",
                fields: [("Content-Type", "application/json")],
                body: scoreBody
            ),
            now: Date()
        )
        for line in signed.fields.lines where line.name.hasPrefix("Signature") || line.name == "Content-Digest" {
            print("   \(line.name): \(line.value.count > 96 ? line.value.prefix(93) + "..." : Substring(line.value))")
        }
        let accepted = try await client.transmit(signed)
        try expect(accepted, status: 201)
        print("   \(accepted.status) backend stored \(accepted.text)")
        guard let responseSignature = accepted.signature else { throw DemoError("the response was not signed") }
        print(
            "   response signature by \(responseSignature.keyID) verified, covering \(responseSignature.components.map(\.description).joined(separator: " "))"
        )

        step(4, "a tampered score: same signature, body changed on the way")
        var tampered = signed
        tampered.body = Array("{\"name\":\"Gilgamesh\",\"score\":999}".utf8)
        try report(try await client.transmit(tampered), expecting: "digest_mismatch")

        step(5, "a replay: the accepted request sent again, byte for byte")
        try report(try await client.transmit(signed), expecting: "nonce_replayed")

        step(6, "an unsigned request")
        try report(
            try await client.send(
                "POST",
                base + "/scores",
                fields: [("Content-Type", "application/json")],
                body: Array("{\"name\":\"Mallory\",\"score\":1}".utf8),
                sign: false
            ),
            expecting: "signature_missing"
        )

        step(7, "a signed request carrying a spoofed Signet-Device field: the gateway replaces it")
        let echoed = try await client.send("GET", base + "/echo/headers", fields: [("Signet-Device", "dev_admin")])
        try expect(echoed, status: 200)
        let seen = (echoed.json as? [String: String]) ?? [:]
        print(
            "   the backend saw Signet-Device: \(seen["signet-device"] ?? "-"), Signet-Trust-Level: \(seen["signet-trust-level"] ?? "-")"
        )
        guard seen["signet-device"] != "dev_admin" else { throw DemoError("the spoofed header reached the backend") }

        step(8, "the seed app's legacy query HMAC, verified by the gateway on its own route")
        let legacy = LegacyQueryHMAC(key: legacySecret).query(for: "{\"name\":\"Enkidu\",\"score\":90}")
        let legacyAnswer = try await client.send("GET", base + "/legacy/score?" + legacy, sign: false)
        try expect(legacyAnswer, status: 201)
        print("   \(legacyAnswer.status) backend stored \(legacyAnswer.text)")

        step(9, "an open route needs no signature")
        let board = try await client.send("GET", base + "/scores/top", sign: false)
        try expect(board, status: 200)
        print("   200 top scores \(board.text)")

        step(10, "an App Attest device (simulated): attest its key, then sign with assertions")
        let attestDevice = SimulatedAppAttestDevice(appID: Self.appID, ca: simulatorCA)
        let attestClient = try makeClient()
        let attested = try await attestClient.register(using: SimulatedAttestationProvider(device: attestDevice))
        print("   201 attested device \(attested.deviceID)")
        let attestedScore = try SimulatedAppAttestSigner(device: attestDevice).sign(
            try HTTPMessage.request(
                method: "POST",
                uri: base + "/scores",
                fields: [("Content-Type", "application/json")],
                body: Array("{\"name\":\"Shamhat\",\"score\":120}".utf8)
            ),
            created: Date(),
            nonce: Nonce.random()
        )
        let attestedAnswer = try await attestClient.transmit(attestedScore)
        try expect(attestedAnswer, status: 201)
        print("   \(attestedAnswer.status) backend stored \(attestedAnswer.text) (alg apple-app-attest, counter 1)")
        let rolledBack = try SimulatedAppAttestSigner(device: attestDevice).sign(
            attestedScore.withoutSignature(),
            created: Date(),
            nonce: Nonce.random(),
            counter: 1
        )
        print("   an assertion that reuses counter 1 under a fresh nonce:")
        try report(try await attestClient.transmit(rolledBack), expecting: "counter_not_increasing")

        step(11, "mutual TLS: a route that needs the device certificate")
        try report(try await client.send("GET", base + "/scores/received", sign: false), expecting: "client_certificate_required")
        try await client.useClientIdentity(
            ClientIdentity(certificateChainPEM: device.certificateChainPEM!, privateKeyPEM: provider.privateKeyPEM)
        )
        let received = try await client.send("GET", base + "/scores/received", sign: false)
        try expect(received, status: 200)
        print("   200 with the client certificate: the backend has received \(received.text) scores")

        step(12, "a client pinned to other keys (as if the server were an impostor)")
        let wrongPins: Set<SPKIPin> = [
            SPKIPin(spkiDER: P256.Signing.PrivateKey().publicKey.derRepresentation),
            SPKIPin(spkiDER: P256.Signing.PrivateKey().publicKey.derRepresentation),
        ]
        let suspicious = try makeClient(pins: wrongPins)
        do {
            _ = try await suspicious.send("GET", base + "/scores/top", sign: false)
            throw DemoError("a connection with mismatched pins went ahead")
        } catch let error as SignetError where error.code == .pinMismatch {
            print("   refused: \(error.code)")
            for line in error.reason.split(separator: "\n").prefix(4) { print("   \(line)") }
            print("   report queued for the app's own server: \(await suspicious.pendingPinReports.count)")
        }

        try await runBankingApp(from: 13, adminToken: adminToken, nonceLifetime: nonceLifetime)

        print("\nall steps behaved as expected")
    }

    // MARK: Helpers

    func step(_ number: Int, _ title: String) {
        print("\n\(number). \(title)")
    }

    func report(_ answer: ClientResponse, expecting reason: String) throws {
        print("   \(answer.status) rejected: \(answer.reason ?? "?")")
        guard answer.status == 401, answer.reason == reason else {
            throw DemoError("expected 401 \(reason), got \(answer.status) \(answer.text)")
        }
    }

    func expect(_ answer: ClientResponse, status: Int) throws {
        guard answer.status == status else {
            throw DemoError("expected \(status), got \(answer.status) \(answer.text)")
        }
    }

    private func field(_ name: String, of answer: ClientResponse, expecting status: Int) throws -> String {
        try expect(answer, status: status)
        guard let value = answer.json?[name] as? String else { throw DemoError("no \(name) in \(answer.text)") }
        return value
    }
}

extension HTTPMessage {
    /// The message without its signature fields (to sign it again).
    func withoutSignature() -> HTTPMessage {
        var copy = self
        copy.fields.removeAll("signature")
        copy.fields.removeAll("signature-input")
        return copy
    }
}

struct DemoError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
