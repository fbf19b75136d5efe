// SPDX-License-Identifier: Apache-2.0
import Hummingbird
import SignetCore
import SignetMiddleware

/// The seed high-score scheme (`msg` + hex `hmac` query parameters under a shared key) on the routes
/// configured for it. It has no replay protection of its own: apps already shipped with it keep
/// working while they move to signatures. The upstream receives the query rebuilt from what was
/// verified (`msg` and `hmac` only), never the query as sent.
struct LegacyQueryHMACMiddleware<Context: SignetRequestContextProtocol>: RouterMiddleware, RequestAuthenticator {
    let keyID: String
    /// The configured secret, `nil` when no shared secret has this key id.
    let secret: [UInt8]?
    let metrics: SignetMetrics?

    func authenticate(_ request: inout Request, context: inout Context) async throws -> Admission {
        guard let secret else {
            throw SignetError(.unknownKey, "no shared secret \(keyID.debugDescription) is configured")
        }
        let legacy = LegacyQueryHMAC(key: secret)
        let message = try legacy.verify(query: request.uri.query ?? "")
        var head = request.head
        head.path = request.uri.path + "?" + legacy.query(for: message)
        request = Request(head: head, body: request.body)
        return Admission(SignetIdentity(deviceID: nil, keyID: keyID, trustLevel: .sharedSecret, algorithm: "legacy-query-hmac"))
    }
}
