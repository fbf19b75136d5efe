// SPDX-License-Identifier: Apache-2.0
import Foundation
import SignetCore

/// A Signet app token as the gateway gave it.
public struct AppToken: Sendable, Hashable {
    /// The compact JWS, sent in `Signet-Token`.
    public let token: String
    public let expiresAt: Date
    /// Works once; never cached.
    public let limitedUse: Bool
}

/// App tokens: asked for with a signed request (or over mutual TLS), cached per origin, renewed
/// ``SignetClientConfiguration/appTokenRenewal`` before they expire, and sent on the configured
/// ``SignetClientConfiguration/appTokenPaths`` in place of a signature.
extension SignetClient {
    /// A token from the gateway at `origin` (the first configured one by default): the cached one
    /// while it has more than the renewal margin left, else a new one. A limited-use token is always
    /// new and never cached.
    ///
    /// - Parameters:
    ///   - origin: The gateway that issues (and accepts) the token.
    ///   - limitedUse: Ask for a token that works once.
    public func appToken(origin: Origin? = nil, limitedUse: Bool = false) async throws -> AppToken {
        let origin = origin ?? configuration.origins[0]
        if limitedUse { return try await fetchAppToken(origin: origin, limitedUse: true) }
        if let cached = appTokens[origin], cached.expiresAt.timeIntervalSince(gatewayNow) > configuration.appTokenRenewal.seconds {
            return cached
        }
        if let pending = appTokenFetches[origin] { return try await pending.value }
        let task = Task { try await fetchAppToken(origin: origin, limitedUse: false) }
        appTokenFetches[origin] = task
        defer { appTokenFetches[origin] = nil }
        let token = try await task.value
        appTokens[origin] = token
        return token
    }

    /// Forgets the cached token of `origin` (the next request fetches one).
    public func dropAppToken(origin: Origin? = nil) {
        appTokens[origin ?? configuration.origins[0]] = nil
    }

    func usesAppToken(_ target: RequestTarget) -> Bool {
        let path = target.pathValue.lowercased()
        return configuration.appTokenPaths.contains { prefix in
            let prefix = prefix.lowercased()
            guard path.hasPrefix(prefix) else { return false }
            return prefix.hasSuffix("/") || path.count == prefix.count
                || path[path.index(path.startIndex, offsetBy: prefix.count)] == "/"
        }
    }

    /// Sends with the origin's token; a token the gateway no longer takes (expired, rotated away)
    /// is replaced once.
    func sendWithAppToken(
        _ method: String,
        _ url: String,
        to origin: Origin,
        fields: MessageFields,
        body: [UInt8]
    ) async throws -> ClientResponse {
        var renewed = false
        while true {
            let token = try await appToken(origin: origin)
            var withToken = fields
            withToken.set(name: "Signet-Token", value: token.token)
            let response = try await send(method, url, fields: withToken, body: body, sign: false)
            guard !renewed, response.status == 401, ["token_expired", "token_invalid"].contains(response.reason ?? "") else {
                return response
            }
            appTokens[origin] = nil
            renewed = true
        }
    }

    private func fetchAppToken(origin: Origin, limitedUse: Bool) async throws -> AppToken {
        let body = limitedUse ? Array(#"{"limitedUse":true}"#.utf8) : []
        let answer = try await send(
            "POST",
            origin.description + "/signet/v1/tokens",
            fields: limitedUse ? [("Content-Type", "application/json")] : [],
            body: body,
            sign: signer != nil
        )
        guard answer.status == 201, let object = answer.json, let token = object["token"] as? String,
            let expires = (object["expiresAt"] as? String).flatMap(Self.parseRFC3339)
        else {
            throw SignetError(
                answer.reason.flatMap(SignetError.Code.init(rawValue:)) ?? .tokenInvalid,
                "no app token: \(answer.status) \(answer.text)"
            )
        }
        return AppToken(token: token, expiresAt: expires, limitedUse: limitedUse)
    }

    static func parseRFC3339(_ text: String) -> Date? {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        if let date = formatter.date(from: text) { return date }
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.date(from: text)
    }
}

extension Duration {
    var seconds: TimeInterval {
        TimeInterval(components.seconds) + TimeInterval(components.attoseconds) / 1e18
    }
}
