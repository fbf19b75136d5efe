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
    /// Bound to the device key (RFC 9449): sent only with a DPoP proof, never as a bearer token.
    public let dpopBound: Bool
}

/// App tokens: asked for with a signed request (or over mutual TLS), cached per origin and kind
/// (bearer or DPoP-bound), renewed
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
    ///   - dpopBound: Ask for a token bound to the device key (RFC 9449 §5, a proof on the request),
    ///     which works only with a DPoP proof: what ``SignetClientConfiguration/dpopPaths`` use.
    public func appToken(origin: Origin? = nil, limitedUse: Bool = false, dpopBound: Bool = false) async throws -> AppToken {
        let origin = origin ?? configuration.origins[0]
        if limitedUse { return try await fetchAppToken(origin: origin, limitedUse: true, dpopBound: dpopBound) }
        let slot = AppTokenSlot(origin: origin, dpopBound: dpopBound)
        if let cached = appTokens[slot], cached.expiresAt.timeIntervalSince(gatewayNow) > configuration.appTokenRenewal.seconds {
            return cached
        }
        if let pending = appTokenFetches[slot] { return try await pending.value }
        let generation = signerGeneration
        let task = Task { try await fetchAppToken(origin: origin, limitedUse: false, dpopBound: dpopBound) }
        appTokenFetches[slot] = task
        let token: AppToken
        do {
            token = try await task.value
        } catch {
            if signerGeneration == generation { appTokenFetches[slot] = nil }
            throw error
        }
        // One fetched for a signer replaced meanwhile is bound to the old key: neither kept nor given.
        guard signerGeneration == generation else { return try await appToken(origin: origin, dpopBound: dpopBound) }
        appTokenFetches[slot] = nil
        appTokens[slot] = token
        return token
    }

    /// Forgets the cached tokens of `origin` (the next request fetches one).
    public func dropAppToken(origin: Origin? = nil) {
        let origin = origin ?? configuration.origins[0]
        for bound in [false, true] { appTokens[AppTokenSlot(origin: origin, dpopBound: bound)] = nil }
    }

    func usesAppToken(_ target: RequestTarget) -> Bool {
        !Self.isSignetEndpoint(target) && Self.path(of: target, isUnder: configuration.appTokenPaths)
    }

    /// Signet's own endpoints (`/signet/…`), which no route covers: the requests that fetch tokens
    /// and attestations are never sent with one, whatever prefix the paths name (`/` would
    /// otherwise make a fetch wait on itself).
    static func isSignetEndpoint(_ target: RequestTarget) -> Bool {
        target.pathValue.lowercased().hasPrefix("/signet/")
    }

    static func path(of target: RequestTarget, isUnder prefixes: [String]) -> Bool {
        let path = target.pathValue.lowercased()
        return prefixes.contains { prefix in
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
        let bound = try HTTPMessage.request(method: method, uri: url).target.map { Self.path(of: $0, isUnder: configuration.dpopPaths) } ?? false
        var renewed = false
        var nonceFollowed = false
        while true {
            let token = try await appToken(origin: origin, dpopBound: bound)
            var withToken = fields
            if bound {
                withToken.set(name: "Authorization", value: "DPoP " + token.token)
                withToken.set(name: "DPoP", value: try dpopProof(method: method, url: url, accessToken: token.token, origin: origin))
            } else {
                withToken.set(name: "Signet-Token", value: token.token)
            }
            let response = try await send(method, url, fields: withToken, body: body, sign: false)
            if bound, let nonce = response.fields["DPoP-Nonce"] { dpopNonces[origin] = nonce }
            // RFC 9449 §9: a gateway that wants a nonce hands one out with the refusal; once.
            if bound, !nonceFollowed, response.gatewayRefusal == .dpopNonceRequired, response.fields["DPoP-Nonce"] != nil {
                nonceFollowed = true
                continue
            }
            guard !renewed, response.status == 401, ["token_expired", "token_invalid"].contains(response.reason ?? "") else {
                return response
            }
            appTokens[AppTokenSlot(origin: origin, dpopBound: bound)] = nil
            renewed = true
        }
    }

    /// A DPoP proof (RFC 9449) by this client's device key for a request to `url` carrying
    /// `accessToken`, with the latest nonce `origin` handed out: for the gateway's DPoP routes
    /// (sent on ``SignetClientConfiguration/dpopPaths`` on their own) and for other servers that
    /// take tokens bound to the device key.
    ///
    /// - Throws: `alg_unsupported` when the signer cannot make proofs (an App Attest key, a shared
    ///   secret, no signer yet).
    public func dpopProof(method: String, url: String, accessToken: String?, origin: Origin? = nil) throws -> String {
        guard let signer = signer as? any DPoPSigning else {
            throw SignetError(.algUnsupported, "this client's signer cannot make DPoP proofs: a device key is needed")
        }
        let nonce = dpopNonces[origin ?? configuration.origins[0]]
        return try signer.dpopProof(method: method, url: url, accessToken: accessToken, nonce: nonce, now: gatewayNow)
    }

    private func fetchAppToken(origin: Origin, limitedUse: Bool, dpopBound: Bool) async throws -> AppToken {
        let body = limitedUse ? Array(#"{"limitedUse":true}"#.utf8) : []
        let url = origin.description + "/signet/v1/tokens"
        var fields: MessageFields = limitedUse ? [("Content-Type", "application/json")] : []
        if dpopBound { fields.append(name: "DPoP", value: try dpopProof(method: "POST", url: url, accessToken: nil, origin: origin)) }
        let answer = try await send("POST", url, fields: fields, body: body, sign: signer != nil)
        guard answer.status == 201, let object = answer.json, let token = object["token"] as? String,
            let expires = (object["expiresAt"] as? String).flatMap(Self.parseRFC3339)
        else {
            throw SignetError(
                answer.reason.flatMap(SignetError.Code.init(rawValue:)) ?? .tokenInvalid,
                "no app token: \(answer.status) \(answer.text)"
            )
        }
        return AppToken(token: token, expiresAt: expires, limitedUse: limitedUse, dpopBound: object["tokenType"] as? String == "DPoP")
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
