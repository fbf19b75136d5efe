// SPDX-License-Identifier: Apache-2.0
import AsyncHTTPClient
import Foundation
import JWTKit
import NIOCore
import NIOHTTP1
import SignetCore
import Synchronization

/// A client for Apple's receipt exchange (Apple, "Assessing fraud risk"): `POST` the base64 receipt
/// to `…/v1/attestationData` with the developer's ES256 token in `Authorization`; `200` answers a new
/// receipt (base64), `304` means the stored one is still current (its "not before" has not passed).
///
/// The token is made from the developer's App Attest key (team id as `iss`, key id as `kid`) and
/// reused for a few minutes, as Apple allows up to an hour.
public final class AppleReceiptExchange: Sendable {
    public enum Outcome: Sendable, Equatable {
        case renewed([UInt8])
        case unchanged
        /// A failure the refresher backs off from; `retryAfter` when the server said (429, 503).
        case failed(status: Int?, reason: String, retryAfter: TimeInterval?)
    }

    public static let production = "https://data.appattest.apple.com/v1/attestationData"
    public static let development = "https://data-development.appattest.apple.com/v1/attestationData"

    let url: String
    let developmentURL: String
    private let client: HTTPClient
    private let key: ES256PrivateKey
    private let teamID: String
    private let keyID: String
    private let timeout: TimeAmount
    private let token = TokenCache()

    /// - Parameters:
    ///   - url: Where production devices' receipts go.
    ///   - developmentURL: Where development devices' receipts go (Apple keeps them apart).
    ///   - teamID: The developer team id, the token's `iss`.
    ///   - keyID: The developer key's id, the token's `kid`.
    ///   - key: The developer's App Attest key (P-256).
    ///   - client: The HTTP client the exchanges go through.
    ///   - timeout: How long one exchange may take.
    public init(
        url: String,
        developmentURL: String,
        teamID: String,
        keyID: String,
        key: SigningKey,
        client: HTTPClient,
        timeout: TimeAmount = .seconds(30)
    ) throws {
        guard let p256 = key.p256PrivateKey else {
            throw SignetError(.invalidKey, "the App Attest developer key is P-256 (ES256), not \(key.type.rawValue)")
        }
        self.key = try ES256PrivateKey(backing: p256)
        self.url = url
        self.developmentURL = developmentURL
        self.client = client
        self.teamID = teamID
        self.keyID = keyID
        self.timeout = timeout
    }

    struct DeveloperClaims: JWTPayload {
        var iss: IssuerClaim
        var iat: IssuedAtClaim
        func verify(using algorithm: some JWTAlgorithm) async throws {}
    }

    /// The developer token, made again every ten minutes.
    func authorization(now: Date) async throws -> String {
        if let cached = token.value(at: now) { return cached }
        let keys = JWTKeyCollection()
        await keys.add(ecdsa: key, kid: JWKIdentifier(string: keyID))
        let signed = try await keys.sign(
            DeveloperClaims(iss: IssuerClaim(value: teamID), iat: IssuedAtClaim(value: now)),
            kid: JWKIdentifier(string: keyID)
        )
        token.store(signed, until: now.addingTimeInterval(600))
        return signed
    }

    public func exchange(_ receipt: [UInt8], development: Bool, now: Date = Date()) async -> Outcome {
        do {
            var request = HTTPClientRequest(url: development ? developmentURL : url)
            request.method = .POST
            request.headers.add(name: "Authorization", value: try await authorization(now: now))
            request.headers.add(name: "Content-Type", value: "text/plain")
            request.body = .bytes(ByteBuffer(string: Base64.encode(receipt)))
            let response = try await client.execute(request, timeout: timeout)
            let body = try await response.body.collect(upTo: 64 * 1024)
            let status = Int(response.status.code)
            switch status {
            case 200:
                let text = String(buffer: body).trimmingCharacters(in: .whitespacesAndNewlines)
                guard let bytes = Base64.decode(text), !bytes.isEmpty else {
                    return .failed(status: 200, reason: "the answer is not a base64 receipt", retryAfter: nil)
                }
                return .renewed(bytes)
            case 304:
                return .unchanged
            default:
                let retryAfter = response.headers.first(name: "Retry-After").flatMap(TimeInterval.init)
                return .failed(status: status, reason: "HTTP \(status)", retryAfter: retryAfter)
            }
        } catch {
            return .failed(status: nil, reason: "\(error)", retryAfter: nil)
        }
    }
}

/// The last developer token and how long it may be reused.
private final class TokenCache: Sendable {
    private let state = Mutex<(String, Date)?>(nil)

    func value(at now: Date) -> String? {
        state.withLock { value in value.flatMap { $0.1 > now ? $0.0 : nil } }
    }

    func store(_ token: String, until: Date) {
        state.withLock { $0 = (token, until) }
    }
}
