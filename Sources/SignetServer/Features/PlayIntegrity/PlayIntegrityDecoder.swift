// SPDX-License-Identifier: Apache-2.0
import AsyncHTTPClient
import Crypto
import Foundation
import NIOCore
import NIOHTTP1
import SignetAndroid
import SignetCore
import Synchronization
import _CryptoExtras

/// Standard Play Integrity tokens, which only Google can decrypt: `decodeIntegrityToken` is called
/// with an OAuth 2.0 access token of the app's Google Cloud service account (the JWT-bearer grant,
/// RFC 7523: an RS256 assertion signed with the account's key), cached until shortly before it
/// expires. Both URLs are configurable, for a stand-in in tests.
final class PlayIntegrityDecoder: Sendable {
    /// The service account JSON key file's members this needs.
    struct ServiceAccount: Decodable {
        let client_email: String
        let private_key: String
        let token_uri: String?
    }

    static let scope = "https://www.googleapis.com/auth/playintegrity"
    static let googleTokenURL = "https://oauth2.googleapis.com/token"
    /// `{package}` is replaced by the package name.
    static let googleDecodeURL = "https://playintegrity.googleapis.com/v1/{package}:decodeIntegrityToken"

    let email: String
    let key: _RSA.Signing.PrivateKey
    let tokenURL: String
    let decodeURL: String
    let packageName: String
    let client: HTTPClient
    let clock: @Sendable () -> Date
    private let cached = Mutex<(token: String, until: Date)?>(nil)

    /// - Throws: `invalid_key` when the file is not a service account key with an RSA key.
    init(
        serviceAccountJSON: [UInt8],
        packageName: String,
        decodeURL: String?,
        tokenURL: String?,
        client: HTTPClient,
        clock: @escaping @Sendable () -> Date
    ) throws {
        let (account, key) = try Self.account(serviceAccountJSON)
        self.email = account.client_email
        self.key = key
        self.tokenURL = tokenURL ?? account.token_uri ?? Self.googleTokenURL
        self.decodeURL = (decodeURL ?? Self.googleDecodeURL).replacingOccurrences(of: "{package}", with: packageName)
        self.packageName = packageName
        self.client = client
        self.clock = clock
    }

    /// The service account key file read, and its key.
    static func account(_ json: [UInt8]) throws -> (ServiceAccount, _RSA.Signing.PrivateKey) {
        guard let account = try? JSONDecoder().decode(ServiceAccount.self, from: Data(json)),
            let key = try? _RSA.Signing.PrivateKey(pemRepresentation: account.private_key)
        else { throw SignetError(.invalidKey, "not a Google service account key (client_email, an RSA private_key)") }
        return (account, key)
    }

    /// The verdict Google decoded from `token`. A token Google refuses is `token_invalid`; Google
    /// unreachable, or refusing the service account, is `token_keys_unavailable` (503). An access
    /// token Google no longer takes (401) is replaced once and the call made again.
    func decode(_ token: String) async throws -> PlayIntegrityVerdict {
        guard token.utf8.count <= PlayIntegrityVerifier.maximumTokenBytes else {
            throw SignetError(.tokenInvalid, "the integrity token is longer than \(PlayIntegrityVerifier.maximumTokenBytes) bytes")
        }
        let access = try await accessToken()
        let (status, body) = try await decodeCall(token, access: access)
        guard status == 401 else { return try Self.verdict(status, body) }
        // Revoked or expired early: forget it (unless another request already replaced it), once.
        cached.withLock { if $0?.token == access { $0 = nil } }
        let (retried, retriedBody) = try await decodeCall(token, access: try await accessToken())
        if retried == 401 { throw Self.unavailable("Google Play refused the service account's access token", status: retried) }
        return try Self.verdict(retried, retriedBody)
    }

    private func decodeCall(_ token: String, access: String) async throws -> (Int, [UInt8]) {
        var request = HTTPClientRequest(url: decodeURL)
        request.method = .POST
        request.headers.add(name: "Authorization", value: "Bearer \(access)")
        request.headers.add(name: "Content-Type", value: "application/json")
        request.body = .bytes(ByteBuffer(bytes: try JSONSerialization.data(withJSONObject: ["integrity_token": token])))
        return try await send(request, what: "decodeIntegrityToken")
    }

    private static func verdict(_ status: Int, _ body: [UInt8]) throws -> PlayIntegrityVerdict {
        switch status {
        case 200:
            struct Answer: Decodable { let tokenPayloadExternal: PlayIntegrityVerdict }
            guard let answer = try? JSONDecoder().decode(Answer.self, from: Data(body)) else {
                throw unavailable("decodeIntegrityToken answered without a verdict", status: status)
            }
            return answer.tokenPayloadExternal
        case 400, 403:
            // 403: a token of another app or Cloud project, which this account may not decode — the
            // token's fault, and no reason to doubt the access token.
            throw SignetError(.tokenInvalid, "Google Play did not decode the integrity token for this app")
        default:
            throw unavailable("decodeIntegrityToken answered \(status)", status: status)
        }
    }

    /// 503 with a Retry-After: Google, not the app, is at fault.
    static func unavailable(_ reason: String, status: Int?) -> SignetError {
        var error = SignetError(.tokenKeysUnavailable, reason)
        error.retryAfterSeconds = 30
        return error
    }

    /// An access token, from the cache while it has a minute left.
    private func accessToken() async throws -> String {
        let now = clock()
        if let cached = cached.withLock({ $0 }), cached.until > now.addingTimeInterval(60) { return cached.token }
        var request = HTTPClientRequest(url: tokenURL)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
        let form = "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion=\(try assertion(now: now))"
        request.body = .bytes(ByteBuffer(string: form))
        let (status, body) = try await send(request, what: "the OAuth token endpoint")
        struct Answer: Decodable {
            let access_token: String
            let expires_in: Int?
        }
        guard status == 200, let answer = try? JSONDecoder().decode(Answer.self, from: Data(body)) else {
            throw Self.unavailable("the OAuth token endpoint refused the service account (\(status))", status: status)
        }
        let until = now.addingTimeInterval(TimeInterval(min(answer.expires_in ?? 3600, 3600)))
        cached.withLock { $0 = (answer.access_token, until) }
        return answer.access_token
    }

    /// The JWT-bearer assertion: RS256 over `{iss, scope, aud, iat, exp}`, an hour long.
    func assertion(now: Date) throws -> String {
        let issued = Int(now.timeIntervalSince1970)
        let header = Base64.urlEncode(Array(#"{"alg":"RS256","typ":"JWT"}"#.utf8))
        let claims = try JSONSerialization.data(
            withJSONObject: ["iss": email, "scope": Self.scope, "aud": tokenURL, "iat": issued, "exp": issued + 3600],
            options: [.sortedKeys]
        )
        let input = header + "." + Base64.urlEncode(Array(claims))
        let signature = try key.signature(for: Array(input.utf8), padding: .insecurePKCS1v1_5)
        return input + "." + Base64.urlEncode(Array(signature.rawRepresentation))
    }

    private func send(_ request: HTTPClientRequest, what: String) async throws -> (Int, [UInt8]) {
        do {
            let response = try await client.execute(request, timeout: .seconds(10))
            let body = try await response.body.collect(upTo: 256 * 1024)
            return (Int(response.status.code), Array(buffer: body))
        } catch let error as SignetError {
            throw error
        } catch {
            throw Self.unavailable("\(what) cannot be reached", status: nil)
        }
    }
}
