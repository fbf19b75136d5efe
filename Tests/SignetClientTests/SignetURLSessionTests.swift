// SPDX-License-Identifier: Apache-2.0
import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import Logging
@testable import SignetClient
import SignetCore
import SignetServer
import SignetTestSupport
import Synchronization
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The drop-in session: an app's `URLRequest`s, sent through the client — signed, checked,
/// retried, re-registered — and answered as `URLSession` answers. The real gateway accepts them,
/// and pyauth verifies them as they arrived on the wire.
@Suite(.awaitsCleanups) struct SignetURLSessionTests {
    static func scores(_ base: String, score: Int = 100) -> URLRequest {
        var request = URLRequest(url: URL(string: base + "/scores")!)
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = Data(#"{"name":"Gilgamesh","score":\#(score)}"#.utf8)
        return request
    }

    @Test func anAppsURLRequestsPassTheGatewayAndItsRefusalsArriveWithTheirReasonCode() async throws {
        let harness = try await GatewayHarness.start(tls: GatewayHarness.developmentTLS)
        Cleanup.after { try await harness.stop() }
        let client = try harness.client()
        try await client.start(with: DeviceKeyProvider(factory: SoftwareKeyFactory(), store: MemoryValueStore()))
        let session = SignetURLSession(client: client)

        let (data, response) = try await session.data(for: Self.scores(harness.base))
        #expect(response.statusCode == 201, "\(String(decoding: data, as: UTF8.self))")
        #expect(response.url?.absoluteString == harness.base + "/scores")
        #expect(response.value(forHTTPHeaderField: "signature") != nil, "the gateway signed its answer (checked by the client)")
        let (uploaded, uploadAnswer) = try await session.upload(for: Self.scores(harness.base, score: 1), from: Data(#"{"name":"Enkidu","score":2}"#.utf8))
        #expect(uploadAnswer.statusCode == 201, "\(String(decoding: uploaded, as: UTF8.self))")

        // A device key on an App Attest route: the gateway's refusal, as an error with its code.
        var attested = URLRequest(url: URL(string: harness.base + "/attested/thing")!)
        attested.httpMethod = "GET"
        let refusal = await #expect(throws: SignetError.self) { _ = try await session.data(for: attested) }
        #expect(refusal?.code == .trustLevelInsufficient, "\(String(describing: refusal))")
        // Or as the answer it was, for apps that read statuses.
        let (refusedData, refused) = try await SignetURLSession(client: client, throwsRefusals: false).data(for: attested)
        #expect(refused.statusCode == 403 && ClientResponse(status: 403, fields: [], body: Array(refusedData)).reason == "trust_level_insufficient")
        // Off the configured origins, nothing is sent.
        let away = await #expect(throws: SignetError.self) { _ = try await session.data(for: Self.scores("https://example.com")) }
        #expect(away?.code == .originNotAllowed)
    }

    /// What arrived on the wire from the session, checked by an implementation Signet did not write.
    @Test(.enabled(if: PythonPeer.available("http_message_signatures, requests")))
    func pyauthVerifiesWhatTheSessionSent() async throws {
        let received = Mutex<Data?>(nil)
        let server = try await BackgroundServer.loopback { router in
            router.post("/scores") { request, _ in
                let body = try await request.body.collect(upTo: 1 << 16)
                let wire: [String: Any] = [
                    "method": request.method.rawValue,
                    "headers": request.headers.map { [$0.name.canonicalName, $0.value] },
                    "body_b64": Data(body.readableBytesView).base64EncodedString(),
                ]
                let json = try JSONSerialization.data(withJSONObject: wire)
                received.withLock { $0 = json }
                return Response(status: .created)
            }
        }
        Cleanup.after { await server.stop() }
        let base = "http://127.0.0.1:\(server.port)"
        var configuration = SignetClientConfiguration(origins: [try Origin(base)], pinReportPath: nil)
        configuration.transport = .nio()
        let client = try SignetClient(configuration: configuration)
        let (key, kept) = try SoftwareKeyFactory().make()
        await client.useSigner(DeviceKeySigner(key: key, keyID: "device-1"))
        let (_, response) = try await SignetURLSession(client: client).data(for: Self.scores(base))
        #expect(response.statusCode == 201)

        let arrived = try #require(received.withLock { $0 })
        var wire = try #require(try JSONSerialization.jsonObject(with: arrived) as? [String: Any])
        wire["url"] = base + "/scores"
        let publicKey = try SoftwareKeyFactory().restore(kept).publicKey
        let verdict = try await PythonPeer.pyauthVerify("ecdsa-p256-sha256", keyPEM: publicKey.pemRepresentation, keyID: "device-1", wire: wire)
        #expect(verdict["ok"] as? Bool == true, "\(verdict)")
        #expect(verdict["body_verified"] as? Bool == true, "\(verdict)")
    }
}
