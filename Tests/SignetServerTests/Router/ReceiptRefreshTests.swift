// SPDX-License-Identifier: Apache-2.0
import AsyncHTTPClient
import Crypto
import ExampleScores
import Foundation
import Logging
import SignetAppAttest
import SignetCore
import SignetServer
import SignetSimulator
import SignetStore
import SignetTestSupport
import Synchronization
import Testing

/// Receipts exchanged for the risk metric against a local server that behaves as Apple documents;
/// the risk limit applied at the gateway, refusing or flagging.
@Suite(.awaitsCleanups) struct ReceiptRefreshTests {
    static let teamID = "TEAM123456"
    static let keyID = "KEY1234567"

    /// A device attested through the real verifier, registered in `store` with its ATTEST receipt due.
    static func attestedDevice(in store: MemoryStore, ca: DevelopmentAttestationCA) async throws -> String {
        let device = SimulatedAppAttestDevice(appID: GatewayHarness.appID, ca: ca)
        let challenge = Array("challenge \(UUID())".utf8)
        let verified = try await AppAttestAttestationVerifier(
            policy: try AppAttestPolicy(appIDs: [GatewayHarness.appID], allowDevelopment: true, roots: [ca.root])
        ).verify(
            attestation: try device.attest(clientDataHash: Array(SHA256.hash(data: challenge))),
            keyID: device.keyID,
            challenge: challenge,
            at: Date()
        )
        let deviceID = "dev_" + Nonce.random()
        try await store.registerDevice(
            DeviceRecord(
                deviceID: deviceID,
                keyID: verified.keyID,
                algorithm: "apple-app-attest",
                publicKeyJWK: verified.publicKey.jwk.jsonString,
                trustLevel: .appAttest,
                createdAt: Date(),
                attributes: ["environment": verified.environment.rawValue]
            )
        )
        try await store.saveReceipt(
            ReceiptRecord(
                deviceID: deviceID,
                receipt: verified.receipt.bytes,
                kind: verified.receipt.kind.rawValue,
                createdAt: verified.receipt.createdAt,
                expiresAt: verified.receipt.expiresAt,
                refreshAt: Date()
            )
        )
        return deviceID
    }

    /// Makes the stored receipt due now (instead of waiting for its backoff).
    static func makeDue(_ deviceID: String, in store: MemoryStore) async throws {
        var record = try #require(try await store.receipt(deviceID: deviceID))
        record.refreshAt = Date()
        try await store.saveReceipt(record)
    }

    @Test func theRefresherRenewsKeepsAndBacksOffAsAppleAnswers() async throws {
        let ca = try DevelopmentAttestationCA()
        let developer = P256.Signing.PrivateKey()
        let apple = try await AppleLikeReceiptServer.start(
            teamID: Self.teamID,
            keyID: Self.keyID,
            developerKey: developer.publicKey,
            ca: ca,
            mode: .unavailable
        )
        Cleanup.after { await apple.stop() }
        let store = MemoryStore()
        let deviceID = try await Self.attestedDevice(in: store, ca: ca)
        func service(key: P256.Signing.PrivateKey = developer) throws -> ReceiptRefreshService {
            ReceiptRefreshService(
                store: store,
                exchange: try AppleReceiptExchange(
                    url: "https://127.0.0.1:9/unused-production",
                    developmentURL: apple.url,
                    teamID: Self.teamID,
                    keyID: Self.keyID,
                    key: try SigningKey(text: key.pemRepresentation),
                    client: .shared
                ),
                verifier: AppAttestReceiptVerifier(trusting: [ca.root]),
                appIDs: [GatewayHarness.appID],
                schedule: ReceiptSchedule(),
                interval: .seconds(1),
                batchSize: 10,
                logger: Logger(label: "test")
            )
        }
        let refresher = try service()

        // 503: kept, one failure, retried after the first backoff (60 s).
        var before = Date()
        #expect(try await refresher.refreshDue() == 0)
        var record = try #require(try await store.receipt(deviceID: deviceID))
        #expect(record.kind == "ATTEST" && record.failures == 1 && record.lastError == "HTTP 503")
        #expect(record.refreshAt >= before.addingTimeInterval(59) && record.refreshAt <= Date().addingTimeInterval(61))
        // Not due yet: nothing is sent.
        #expect(try await refresher.refreshDue() == 0)
        #expect(apple.requests.withLock { $0 } == ["503"])

        // 429 with Retry-After: the server's wait wins over the shorter backoff.
        apple.set(.tooMany(retryAfter: 900))
        try await Self.makeDue(deviceID, in: store)
        before = Date()
        #expect(try await refresher.refreshDue() == 0)
        record = try #require(try await store.receipt(deviceID: deviceID))
        #expect(record.failures == 2 && record.lastError == "HTTP 429")
        #expect(record.refreshAt >= before.addingTimeInterval(899))

        // 304: the receipt is current; failures reset, asked again later, not at once.
        apple.set(.unchanged)
        try await Self.makeDue(deviceID, in: store)
        #expect(try await refresher.refreshDue() == 0)
        record = try #require(try await store.receipt(deviceID: deviceID))
        #expect(record.kind == "ATTEST" && record.failures == 0 && record.lastError == nil)
        #expect(record.refreshAt > Date().addingTimeInterval(50))

        // A new receipt that is not fresh (Apple's are at most five minutes old) is refused.
        apple.set(.renewCreatedAgo(600, risk: 9))
        try await Self.makeDue(deviceID, in: store)
        #expect(try await refresher.refreshDue() == 0)
        record = try #require(try await store.receipt(deviceID: deviceID))
        #expect(record.kind == "ATTEST" && record.lastError?.contains("receipt_stale") == true)
        #expect(try await store.device(id: deviceID)?.riskMetric == nil)

        // A developer token Apple does not accept: 401, kept.
        try await Self.makeDue(deviceID, in: store)
        #expect(try await service(key: P256.Signing.PrivateKey()).refreshDue() == 0)
        #expect(try await store.receipt(deviceID: deviceID)?.lastError == "HTTP 401")

        // 200: verified, saved, the device's risk metric set, next exchange before expiry.
        apple.set(.renew(risk: 3))
        try await Self.makeDue(deviceID, in: store)
        #expect(try await refresher.refreshDue() == 1)
        record = try #require(try await store.receipt(deviceID: deviceID))
        #expect(record.kind == "RECEIPT" && record.riskMetric == 3 && record.failures == 0)
        #expect(record.refreshAt == record.expiresAt.addingTimeInterval(-30 * 86_400))
        #expect(try await store.device(id: deviceID)?.riskMetric == 3)
        #expect(apple.requests.withLock { $0 } == ["503", "429", "304", "200", "401", "200"])
    }

    /// The gateway's own refresher against the Apple-like server; above `maxRiskMetric` a device is
    /// refused (`refuse`) or let through with `Signet-Risk-Metric` (`flag`), checked before the nonce.
    @Test(arguments: [GatewayConfiguration.RiskAction.refuse, .flag])
    func theGatewayRefreshesReceiptsAndAppliesTheRiskLimit(_ action: GatewayConfiguration.RiskAction) async throws {
        let developer = P256.Signing.PrivateKey()
        let apple = try await AppleLikeReceiptServer.start(
            teamID: Self.teamID,
            keyID: Self.keyID,
            developerKey: developer.publicKey,
            ca: GatewayHarness.simulatorCA,
            mode: .renew(risk: 2)
        )
        Cleanup.after { await apple.stop() }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("signet-dev-key-\(UUID())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        Cleanup.after { try? FileManager.default.removeItem(at: folder) }
        let keyFile = folder.appendingPathComponent("AuthKey.p8").path
        try Data(developer.pemRepresentation.utf8).write(to: URL(fileURLWithPath: keyFile))
        let harness = try await GatewayHarness.start(transport: .router) { configuration in
            configuration.appAttest?.maxRiskMetric = 5
            configuration.appAttest?.riskAction = action
            configuration.appAttest?.receiptExchange = .init(
                url: "https://127.0.0.1:9/unused-production",
                developmentUrl: apple.url,
                teamId: Self.teamID,
                keyId: Self.keyID,
                keyFile: keyFile,
                intervalSeconds: 1
            )
        }
        Cleanup.after { try await harness.stop() }

        func attest() async throws -> (SimulatedAppAttestSigner, String) {
            let device = SimulatedAppAttestDevice(appID: GatewayHarness.appID, ca: GatewayHarness.simulatorCA)
            let answer = try await harness.attest(device)
            #expect(answer.status == 201, "\(answer.text)")
            return (SimulatedAppAttestSigner(device: device), try #require(answer.json["deviceId"] as? String))
        }
        func shown(_ deviceID: String) async throws -> [String: Any] {
            try await GatewayHarness.send(
                method: "GET",
                url: harness.base + "/signet/v1/devices/\(deviceID)",
                headers: [("Authorization", "Bearer \(GatewayHarness.adminToken)")]
            ).json
        }
        func waitForRisk(_ deviceID: String, _ expected: Int) async throws -> [String: Any] {
            for _ in 0..<100 {
                let device = try await shown(deviceID)
                if device["riskMetric"] as? Int == expected { return device }
                try await Task.sleep(for: .milliseconds(100))
            }
            Issue.record("the risk metric of \(deviceID) did not become \(expected)")
            return [:]
        }
        func echo(_ signer: SimulatedAppAttestSigner) async throws -> GatewayHarness.Answer {
            let message = try HTTPMessage.request(method: "GET", uri: harness.base + "/echo/risk")
            return try await GatewayHarness.send(try signer.sign(message, created: Date(), nonce: Nonce.random()))
        }

        let (low, lowID) = try await attest()
        let attested = try await shown(lowID)
        #expect((attested["receipt"] as? [String: Any])?["type"] as? String != nil)
        let renewed = try await waitForRisk(lowID, 2)
        let receipt = try #require(renewed["receipt"] as? [String: Any])
        #expect(receipt["type"] as? String == "RECEIPT" && receipt["riskMetric"] as? Int == 2)
        #expect(receipt["notBefore"] is String && receipt["expiresAt"] is String && renewed["keyid"] is String)
        #expect(renewed["publicKeyJWK"] == nil)
        let lowAnswer = try await echo(low)
        #expect(lowAnswer.status == 200, "\(lowAnswer.text)")
        #expect((lowAnswer.json["headers"] as? [String: String])?["signet-risk-metric"] == "2")

        apple.set(.renew(risk: 7))
        let (high, highID) = try await attest()
        _ = try await waitForRisk(highID, 7)
        let received = harness.backend.receivedCount
        let highAnswer = try await echo(high)
        switch action {
        case .refuse:
            #expect(highAnswer.status == 403 && highAnswer.reason == "risk_metric_exceeded", "\(highAnswer.text)")
            #expect(harness.backend.receivedCount == received)
        case .flag:
            #expect(highAnswer.status == 200, "\(highAnswer.text)")
            #expect((highAnswer.json["headers"] as? [String: String])?["signet-risk-metric"] == "7")
        }
        // A client cannot claim a metric of its own.
        let spoofed = try await GatewayHarness.send(
            try low.sign(
                try HTTPMessage.request(
                    method: "GET",
                    uri: harness.base + "/echo/risk",
                    fields: [("Signet-Risk-Metric", "0")]
                ),
                created: Date(),
                nonce: Nonce.random()
            )
        )
        #expect((spoofed.json["headers"] as? [String: String])?["signet-risk-metric"] == "2")
        // Operators without the admin token see nothing.
        let anonymous = try await GatewayHarness.send(method: "GET", url: harness.base + "/signet/v1/devices/\(lowID)")
        #expect(anonymous.status == 401 && anonymous.reason == "admin_unauthorized")
        let missing = try await GatewayHarness.send(
            method: "GET",
            url: harness.base + "/signet/v1/devices/dev_nobody",
            headers: [("Authorization", "Bearer \(GatewayHarness.adminToken)")]
        )
        #expect(missing.status == 404 && missing.reason == "not_found")
    }
}
