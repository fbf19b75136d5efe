// SPDX-License-Identifier: Apache-2.0
import Crypto
import Foundation
import Hummingbird
import Logging
import NIOCore
import SignetAppAttest
import SignetCore
import SignetServer
import SignetSimulator
import Synchronization

/// A local stand-in for Apple's receipt exchange that behaves as Apple documents: it checks the
/// developer token (ES256 over `header.payload`, `kid`, `iss`) against the developer's public key,
/// reads the base64 receipt, and answers a new `RECEIPT` (signed by the simulator's receipt signer),
/// `304`, `429` with `Retry-After`, or `503`. No test reaches Apple.
final class AppleLikeReceiptServer: Sendable {
    enum Mode: Sendable {
        case renew(risk: Int)
        /// A new receipt created this long ago (Apple's are fresh; a stale one must be refused).
        case renewCreatedAgo(TimeInterval, risk: Int)
        case unchanged
        case tooMany(retryAfter: Int)
        case unavailable
    }

    let teamID: String
    let keyID: String
    let developerKey: P256.Signing.PublicKey
    let ca: DevelopmentAttestationCA
    let mode: Mutex<Mode>
    let requests = Mutex<[String]>([])
    private let server = Mutex<BackgroundServer?>(nil)

    var url: String { "http://127.0.0.1:\(server.withLock { $0?.port ?? 0 })/v1/attestationData" }

    private init(teamID: String, keyID: String, developerKey: P256.Signing.PublicKey, ca: DevelopmentAttestationCA, mode: Mode) {
        self.teamID = teamID
        self.keyID = keyID
        self.developerKey = developerKey
        self.ca = ca
        self.mode = Mutex(mode)
    }

    static func start(
        teamID: String,
        keyID: String,
        developerKey: P256.Signing.PublicKey,
        ca: DevelopmentAttestationCA,
        mode: Mode = .renew(risk: 1)
    ) async throws -> AppleLikeReceiptServer {
        let apple = AppleLikeReceiptServer(teamID: teamID, keyID: keyID, developerKey: developerKey, ca: ca, mode: mode)
        var logger = Logger(label: "apple-like")
        logger.logLevel = .error
        let router = Router()
        router.post("/v1/attestationData") { request, _ in try await apple.answer(request) }
        let server = try await BackgroundServer.start(logger: logger) { running in
            Application(
                router: router,
                configuration: .init(address: .hostname("127.0.0.1", port: 0)),
                onServerRunning: { await running($0.localAddress?.port ?? 0) },
                logger: logger
            )
        }
        apple.server.withLock { $0 = server }
        return apple
    }

    func stop() async { await server.withLock { $0 }?.stop() }

    func set(_ mode: Mode) { self.mode.withLock { $0 = mode } }

    private func answer(_ request: Request) async throws -> Response {
        var outcome = "error"
        defer { requests.withLock { $0.append(outcome) } }
        guard let token = request.headers[.authorization], checkToken(token) else {
            outcome = "401"
            return Response(status: .unauthorized)
        }
        let body = try await request.body.collect(upTo: 64 * 1024)
        guard let bytes = Base64.decode(String(buffer: body)),
            let old = try? await AppAttestReceiptVerifier(trusting: [ca.root]).verify(bytes, at: Date().addingTimeInterval(-60))
        else {
            outcome = "400"
            return Response(status: .badRequest)
        }
        let now = Date()
        switch mode.withLock({ $0 }) {
        case .unchanged:
            outcome = "304"
            return Response(status: .notModified)
        case .tooMany(let seconds):
            outcome = "429"
            return Response(status: .tooManyRequests, headers: [.retryAfter: String(seconds)])
        case .unavailable:
            outcome = "503"
            return Response(status: .serviceUnavailable)
        case .renew(let risk):
            outcome = "200"
            return try renewed(old, risk: risk, created: now)
        case .renewCreatedAgo(let ago, let risk):
            outcome = "200"
            return try renewed(old, risk: risk, created: now.addingTimeInterval(-ago))
        }
    }

    private func renewed(_ old: AppAttestReceipt, risk: Int, created: Date) throws -> Response {
        let receipt = try ca.receiptSigner.receipt(
            AppAttestReceipt(
                appID: old.appID,
                attestedCertificate: old.attestedCertificate,
                clientHash: Array(SHA256.hash(data: old.token)),
                token: old.token,
                kind: .receipt,
                environment: old.environment,
                createdAt: created,
                riskMetric: risk,
                notBefore: created.addingTimeInterval(86_400),
                expiresAt: created.addingTimeInterval(90 * 86_400)
            )
        )
        return Response(status: .ok, body: .init(byteBuffer: ByteBuffer(string: Base64.encode(receipt))))
    }

    /// Apple's check of the developer token: ES256, this key id, this team, a plausible `iat`.
    private func checkToken(_ token: String) -> Bool {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 3, let headerBytes = Base64.urlDecode(parts[0]), let payloadBytes = Base64.urlDecode(parts[1]),
            let signature = Base64.urlDecode(parts[2]),
            let header = try? JSONSerialization.jsonObject(with: Data(headerBytes)) as? [String: Any],
            let payload = try? JSONSerialization.jsonObject(with: Data(payloadBytes)) as? [String: Any],
            header["alg"] as? String == "ES256", header["kid"] as? String == keyID, payload["iss"] as? String == teamID,
            let iat = payload["iat"] as? Double, abs(iat - Date().timeIntervalSince1970) < 3_600,
            let ecdsa = try? P256.Signing.ECDSASignature(rawRepresentation: signature)
        else { return false }
        return developerKey.isValidSignature(ecdsa, for: Array((parts[0] + "." + parts[1]).utf8))
    }
}
