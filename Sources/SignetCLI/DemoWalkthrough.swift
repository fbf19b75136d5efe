// SPDX-License-Identifier: Apache-2.0
import AsyncHTTPClient
import Crypto
import Foundation
import NIOCore
import NIOHTTP1
import SignetCore
import SignetSimulator

/// The device side of `signet demo`, over real HTTP to the gateway.
struct DemoWalkthrough {
    let base: String
    let gatewayKey: VerificationKey
    let legacySecret: [UInt8]
    let simulatorCA: DevelopmentAttestationCA
    static let appID = "ABCDE12345.dev.signet.scores"

    struct Answer {
        var status: Int
        var headers: HTTPHeaders
        var body: String
        var reason: String? {
            (try? JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any])?["reason"] as? String
        }
    }

    func run() async throws {
        step(1, "get a one-time challenge")
        let challengeAnswer = try await send(method: "POST", path: "/signet/v1/challenges")
        let challenge = try field("challenge", of: challengeAnswer, expecting: 201)
        print("   201 challenge \(challenge.prefix(16))…")

        step(2, "register a P-256 device key, signing the challenge (proof of possession)")
        let deviceKey = P256.Signing.PrivateKey()
        let signingKey = try SigningKey(pem: deviceKey.pemRepresentation)
        let proof = try deviceKey.signature(for: Array(challenge.utf8)).rawRepresentation
        let registration: [String: Any] = [
            "challenge": challenge, "alg": "ecdsa-p256-sha256",
            "publicKey": try JSONSerialization.jsonObject(with: Data(signingKey.verificationKey.jwk.jsonString.utf8)),
            "signature": Base64.urlEncode(proof),
        ]
        let registered = try await send(
            method: "POST",
            path: "/signet/v1/devices",
            body: try JSONSerialization.data(withJSONObject: registration),
            contentType: "application/json"
        )
        let keyID = try field("keyid", of: registered, expecting: 201)
        print("   201 deviceId \(try field("deviceId", of: registered, expecting: 201)) keyid \(keyID)")
        let replayedRegistration = try await send(
            method: "POST",
            path: "/signet/v1/devices",
            body: try JSONSerialization.data(withJSONObject: registration),
            contentType: "application/json"
        )
        print("   the same challenge again: \(replayedRegistration.status) \(replayedRegistration.reason ?? "-")")

        step(3, "submit a signed score")
        let signer = MessageSigner(key: signingKey, keyID: keyID, algorithm: ECDSAP256SHA256())
        let request = try HTTPMessage.request(
            method: "POST",
            uri: base + "/scores",
            fields: [("Content-Type", "application/json")],
            body: Array("{\"name\":\"Gilgamesh\",\"score\":100}".utf8)
        )
        let signed = try signer.sign(request, created: Date(), nonce: Nonce.random())
        for line in signed.fields.lines where line.name.hasPrefix("Signature") || line.name == "Content-Digest" {
            print("   \(line.name): \(line.value.count > 96 ? line.value.prefix(93) + "..." : Substring(line.value))")
        }
        let accepted = try await send(signed)
        try expect(accepted, status: 201)
        print("   \(accepted.status) backend stored \(accepted.body)")
        try verifyResponseSignature(accepted, request: signed)

        step(4, "a tampered score: same signature, body changed on the way")
        var tampered = signed
        tampered.body = Array("{\"name\":\"Gilgamesh\",\"score\":999}".utf8)
        try report(try await send(tampered), expecting: "digest_mismatch")

        step(5, "a replay: the accepted request sent again, byte for byte")
        try report(try await send(signed), expecting: "nonce_replayed")

        step(6, "an unsigned request")
        try report(
            try await send(
                method: "POST",
                path: "/scores",
                body: Data("{\"name\":\"Mallory\",\"score\":1}".utf8),
                contentType: "application/json"
            ),
            expecting: "signature_missing"
        )

        step(7, "a signed request carrying a spoofed Signet-Device field: the gateway replaces it")
        let spoofed = try signer.sign(
            try HTTPMessage.request(
                method: "GET",
                uri: base + "/echo/headers",
                fields: [("Signet-Device", "dev_admin")]
            ),
            created: Date(),
            nonce: Nonce.random()
        )
        let echoed = try await send(spoofed)
        try expect(echoed, status: 200)
        let seen = (try JSONSerialization.jsonObject(with: Data(echoed.body.utf8)) as? [String: String]) ?? [:]
        print(
            "   the backend saw Signet-Device: \(seen["signet-device"] ?? "-"), Signet-Trust-Level: \(seen["signet-trust-level"] ?? "-")"
        )
        guard seen["signet-device"] != "dev_admin" else { throw DemoError("the spoofed header reached the backend") }

        step(8, "the seed app's legacy query HMAC, verified by the gateway on its own route")
        let legacy = LegacyQueryHMAC(key: legacySecret).query(for: "{\"name\":\"Enkidu\",\"score\":90}")
        let legacyAnswer = try await send(method: "GET", path: "/legacy/score?" + legacy)
        try expect(legacyAnswer, status: 201)
        print("   \(legacyAnswer.status) backend stored \(legacyAnswer.body)")

        step(9, "an open route needs no signature")
        let board = try await send(method: "GET", path: "/scores/top")
        try expect(board, status: 200)
        print("   200 top scores \(board.body)")

        step(10, "an App Attest device (simulated): attest its key, then sign with assertions")
        let device = SimulatedAppAttestDevice(appID: Self.appID, ca: simulatorCA)
        let attestChallenge = try field(
            "challenge",
            of: try await send(method: "POST", path: "/signet/v1/challenges"),
            expecting: 201
        )
        let attestation = try device.attest(clientDataHash: Array(SHA256.hash(data: Array(attestChallenge.utf8))))
        let attested = try await send(
            method: "POST",
            path: "/signet/v1/devices/attest",
            body: try JSONSerialization.data(withJSONObject: [
                "keyId": device.keyID, "attestation": Base64.encode(attestation), "challenge": attestChallenge,
            ]),
            contentType: "application/json"
        )
        print("   201 attested, environment \(try field("environment", of: attested, expecting: 201))")
        let attestSigner = SimulatedAppAttestSigner(device: device)
        let attestedScore = try attestSigner.sign(
            try HTTPMessage.request(
                method: "POST",
                uri: base + "/scores",
                fields: [("Content-Type", "application/json")],
                body: Array("{\"name\":\"Shamhat\",\"score\":120}".utf8)
            ),
            created: Date(),
            nonce: Nonce.random()
        )
        let attestedAnswer = try await send(attestedScore)
        try expect(attestedAnswer, status: 201)
        print("   \(attestedAnswer.status) backend stored \(attestedAnswer.body) (alg apple-app-attest, counter 1)")
        let rolledBack = try attestSigner.sign(
            attestedScore.withoutSignature(),
            created: Date(),
            nonce: Nonce.random(),
            counter: 1
        )
        print("   an assertion that reuses counter 1 under a fresh nonce:")
        try report(try await send(rolledBack), expecting: "counter_not_increasing")

        print("\nall steps behaved as expected")
    }

    // MARK: Helpers

    private func step(_ number: Int, _ title: String) {
        print("\n\(number). \(title)")
    }

    private func report(_ answer: Answer, expecting reason: String) throws {
        print("   \(answer.status) rejected: \(answer.reason ?? "?")")
        guard answer.status == 401, answer.reason == reason else {
            throw DemoError("expected 401 \(reason), got \(answer.status) \(answer.body)")
        }
    }

    private func expect(_ answer: Answer, status: Int) throws {
        guard answer.status == status else {
            throw DemoError("expected \(status), got \(answer.status) \(answer.body)")
        }
    }

    private func field(_ name: String, of answer: Answer, expecting status: Int) throws -> String {
        try expect(answer, status: status)
        guard let object = try JSONSerialization.jsonObject(with: Data(answer.body.utf8)) as? [String: Any],
            let value = object[name] as? String
        else { throw DemoError("no \(name) in \(answer.body)") }
        return value
    }

    /// Checks the gateway's RFC 9421 response signature, bound to the request with `;req`.
    private func verifyResponseSignature(_ answer: Answer, request: HTTPMessage) throws {
        var fields = MessageFields()
        for header in answer.headers { fields.append(name: header.name, value: header.value) }
        let response = HTTPMessage.response(status: answer.status, fields: fields, body: Array(answer.body.utf8))
        var policy = VerificationPolicy.permissive
        policy.selection = .label("gateway")
        let verifier = MessageVerifier(
            keys: KeyRing([KeyRecord(keyID: "gateway", algorithm: "ed25519", key: gatewayKey)]),
            policy: policy,
            nonces: nil
        )
        let semaphore = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var outcome: Result<VerifiedSignature, any Error>?
        Task {
            do { outcome = .success(try await verifier.verify(response, relatedRequest: request, now: Date())) } catch {
                outcome = .failure(error)
            }
            semaphore.signal()
        }
        semaphore.wait()
        let verified = try outcome!.get()
        print(
            "   response signature by \(verified.keyID) verified, covering \(verified.components.map(\.description).joined(separator: " "))"
        )
    }

    private func send(_ message: HTTPMessage) async throws -> Answer {
        guard let target = message.target, let method = message.method else { throw DemoError("not a request") }
        let headers = message.fields.lines.filter { !["host", "content-length"].contains($0.name.lowercased()) }
            .map { ($0.name, $0.value) }
        return try await send(method: method, url: target.targetURI, body: Data(message.body), headers: headers)
    }

    private func send(
        method: String,
        path: String,
        body: Data? = nil,
        contentType: String? = nil,
        extraHeaders: [(String, String)] = []
    ) async throws -> Answer {
        var headers = extraHeaders
        if let contentType { headers.append(("Content-Type", contentType)) }
        return try await send(method: method, url: base + path, body: body, headers: headers)
    }

    private func send(method: String, url: String, body: Data?, headers: [(String, String)]) async throws -> Answer {
        var request = HTTPClientRequest(url: url)
        request.method = .init(rawValue: method)
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        if let body { request.body = .bytes(ByteBuffer(bytes: body)) }
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(10))
        let bytes = try await response.body.collect(upTo: 1 << 20)
        return Answer(status: Int(response.status.code), headers: response.headers, body: String(buffer: bytes))
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
