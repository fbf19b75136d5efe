// SPDX-License-Identifier: Apache-2.0
import Foundation
import SignetClient
import SignetCore
import SignetTestSupport
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Requests an app builds as `URLRequest` and sends with `URLSession` (FoundationNetworking's here,
/// Apple's on a device), signed by the SDK: the real gateway accepts them once, refuses them changed,
/// its signed answers check out, and pyauth — an implementation Signet did not write — verifies them.
@Suite(.awaitsCleanups) struct URLRequestSigningTests {
    static func scores(_ base: String, body: String = #"{"name":"Gilgamesh","score":100}"#) -> URLRequest {
        var request = URLRequest(url: URL(string: base + "/scores")!)
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = Data(body.utf8)
        return request
    }

    static func send(_ request: URLRequest) async throws -> (Data, HTTPURLResponse) {
        let session = URLSession(configuration: .ephemeral)
        defer { session.finishTasksAndInvalidate() }
        let (data, response) = try await session.data(for: request)
        return (data, try #require(response as? HTTPURLResponse))
    }

    static func reason(_ data: Data) -> String? {
        (try? JSONSerialization.jsonObject(with: data) as? [String: Any])?["reason"] as? String
    }

    @Test func aSignedURLRequestPassesTheGatewayOnceAndItsSignedAnswerChecksOut() async throws {
        let harness = try await GatewayHarness.start()
        Cleanup.after { try await harness.stop() }
        let device = try await harness.register()
        let signed = try await device.signer.sign(Self.scores(harness.base))
        #expect(signed.value(forHTTPHeaderField: "Signature-Input")?.contains(#""content-type""#) == true)
        #expect(signed.value(forHTTPHeaderField: "Content-Digest")?.hasPrefix("sha-256=:") == true)

        let (data, response) = try await Self.send(signed)
        #expect(response.statusCode == 201, "\(String(decoding: data, as: UTF8.self))")
        let gatewayKeys = KeyRing([
            KeyRecord(keyID: "gateway", algorithm: "ed25519", key: harness.gatewayKey.verificationKey)
        ])
        let verified = try await ResponseSignatureVerifier(keys: gatewayKeys).verify(response, body: data, for: signed)
        #expect(verified.label == "gateway")
        // The answer does not check out for another request, nor altered.
        let other = try await device.signer.sign(Self.scores(harness.base))
        await #expect(throws: SignetError(.responseSignatureInvalid, "")) {
            try await ResponseSignatureVerifier(keys: gatewayKeys).verify(response, body: data, for: other)
        }
        await #expect(throws: SignetError(.responseSignatureInvalid, "")) {
            try await ResponseSignatureVerifier(keys: gatewayKeys).verify(response, body: Data("{}".utf8), for: signed)
        }

        // Sent again: a replay. Changed on the way: the digest, or the signature, says so.
        let (replayData, replay) = try await Self.send(signed)
        #expect(replay.statusCode == 401 && Self.reason(replayData) == "nonce_replayed")
        var tampered = try await device.signer.sign(Self.scores(harness.base))
        tampered.httpBody = Data(#"{"name":"Gilgamesh","score":999}"#.utf8)
        let (tamperedData, tamperedAnswer) = try await Self.send(tampered)
        #expect(tamperedAnswer.statusCode == 401 && Self.reason(tamperedData) == "digest_mismatch")
        var retyped = try await device.signer.sign(Self.scores(harness.base))
        retyped.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
        let (retypedData, retypedAnswer) = try await Self.send(retyped)
        #expect(retypedAnswer.statusCode == 401 && Self.reason(retypedData) == "signature_invalid")
        // A GET without a body is signed too.
        let get = try await device.signer.sign(URLRequest(url: URL(string: harness.base + "/scores/me")!))
        let (_, getAnswer) = try await Self.send(get)
        #expect(getAnswer.statusCode != 401)
    }

    @Test func whatCannotBeSignedAsItIsIsRefusedBeforeAnythingIsSent() async throws {
        let signer = MessageSigner(key: try SigningKey.generate(.ed25519), keyID: "k", algorithm: Ed25519Algorithm())
        var streamed = Self.scores("https://api.example.com")
        streamed.httpBody = nil
        streamed.httpBodyStream = InputStream(data: Data("{}".utf8))
        var untyped = Self.scores("https://api.example.com")
        untyped.setValue(nil, forHTTPHeaderField: "Content-Type")
        let relative = URLRequest(url: URL(string: "/scores")!)
        for (name, request) in [("streamed", streamed), ("untyped", untyped), ("relative", relative)] {
            let error = await #expect(throws: SignetError.self, "\(name)") { _ = try await signer.sign(request) }
            #expect(error?.code == .malformedMessage, "\(name)")
        }
    }

    @Test(.enabled(if: PythonPeer.available("http_message_signatures, requests")))
    func pyauthVerifiesARequestSignedFromAURLRequest() async throws {
        let key = try SigningKey.generate(.p256)
        let signer = MessageSigner(key: key, keyID: "device-1", algorithm: ECDSAP256SHA256())
        let signed = try await signer.sign(Self.scores("https://api.example.com"))
        let wire: [String: Any] = [
            "method": signed.httpMethod ?? "GET", "url": signed.url!.absoluteString,
            "headers": (signed.allHTTPHeaderFields ?? [:]).map { [$0.key, $0.value] },
            "body_b64": (signed.httpBody ?? Data()).base64EncodedString(),
        ]
        let verdict = try await PythonPeer.pyauthVerify(
            "ecdsa-p256-sha256", keyPEM: key.verificationKey.pemRepresentation!, keyID: "device-1", wire: wire)
        #expect(verdict["ok"] as? Bool == true, "\(verdict)")
        #expect((verdict["components"] as? [String])?.contains("\"content-type\"") == true, "\(verdict)")
        #expect(verdict["body_verified"] as? Bool == true, "\(verdict)")
    }
}
