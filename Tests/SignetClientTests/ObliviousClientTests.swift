// SPDX-License-Identifier: Apache-2.0
import Crypto
import Foundation
import SignetClient
import SignetCore
import SignetServer
import SignetTestSupport
import Testing

/// `SignetClient.sendOblivious` against the gateway over pinned TLS: key configurations fetched only
/// over a connection that passed the pins, refetched once when the gateway no longer knows the key,
/// never otherwise.
@Suite(.awaitsCleanups) struct ObliviousClientTests {
    static func start() async throws -> GatewayHarness {
        try await GatewayHarness.start(tls: GatewayHarness.developmentTLS) { configuration in
            configuration.ohttp = .init(keys: [
                .init(keyId: 1, keyFile: FileManager.default.temporaryDirectory.appendingPathComponent("signet-ohttp-\(UUID().uuidString).pem").path)
            ])
        }
    }

    static func score(_ client: SignetClient, _ gateway: GatewayHarness, name: String) async throws -> ClientResponse {
        try await client.sendOblivious(
            "POST",
            gateway.base + "/scores",
            fields: [("Content-Type", "application/json")],
            body: Array("{\"name\":\"\(name)\",\"score\":1}".utf8)
        )
    }

    @Test func aRegisteredDeviceSendsEncryptedOverPinnedTLS() async throws {
        let gateway = try await Self.start()
        Cleanup.after { try await gateway.stop() }
        let client = try gateway.client()
        _ = try await client.register(using: SoftwareKeyProvider())
        let answer = try await Self.score(client, gateway, name: "Hidden")
        #expect(answer.status == 201, "\(answer.text)")
        #expect(answer.signature?.keyID == "gateway", "the answer's signature is checked against the signed request")
        let served = await client.obliviousKeys
        #expect(served.map(\.keyID) == [1], "fetched from the gateway when none were compiled in")

        // A compiled-in configuration the gateway no longer has: refetched once, then sent.
        let stale = OHTTPGatewayKey(keyID: 7, privateKey: .x25519(.init())).configuration
        let rotated = try gateway.client(obliviousKeys: [stale])
        _ = try await rotated.register(using: SoftwareKeyProvider())
        #expect(try await Self.score(rotated, gateway, name: "Rotated").status == 201)
        #expect(await rotated.obliviousKeys == served)

        // The right id with another key: the gateway cannot open it, and that is not a reason to refetch.
        let wrong = OHTTPGatewayKey(keyID: 1, privateKey: .x25519(.init())).configuration
        let mistaken = try gateway.client(obliviousKeys: [wrong])
        _ = try await mistaken.register(using: SoftwareKeyProvider())
        let refused = try await Self.score(mistaken, gateway, name: "Nope")
        #expect(refused.status == 400 && refused.reason == "decapsulation_failed")
        #expect(await mistaken.obliviousKeys == [wrong])
    }

    @Test func keysAreNeverFetchedOverAConnectionThatFailsThePins() async throws {
        let gateway = try await Self.start()
        Cleanup.after { try await gateway.stop() }
        let chain = try require(gateway.gateway.tls).chain
        let strangers: Set<SPKIPin> = [try backupPin(), try backupPin()]
        let client = try SignetClient(
            configuration: .init(
                origins: [try Origin(gateway.base)],
                trust: ServerTrustEvaluator(
                    roots: .only([chain.last!]),
                    pinSets: [try PinSet(pattern: try HostPattern("localhost"), pins: strangers)]
                ),
                timeout: .seconds(10)
            )
        )
        let error = await #expect(throws: SignetError.self) { try await Self.score(client, gateway, name: "X") }
        #expect(error?.code == .pinMismatch)
        #expect(await client.obliviousKeys.isEmpty)
    }
}
