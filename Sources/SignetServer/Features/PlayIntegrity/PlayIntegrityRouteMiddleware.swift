// SPDX-License-Identifier: Apache-2.0
import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import SignetAndroid
import SignetCore
import SignetMiddleware

/// What admits a request to a `play-integrity` route: the request's RFC 9421 signature by any
/// registered key, then a Play Integrity token in `Signet-Integrity-Token` (classic, or standard
/// with `Signet-Integrity-Token-Type: standard`) whose nonce — request hash, for a standard one —
/// is the base64url SHA-256 of that signature's base. The verdict is thus for this request and no
/// other: a token cannot be moved to another request, and the signature's nonce makes every base
/// unique.
///
/// The app signs first (the client SDK gives the base), requests the token with its digest, then
/// sends both. The signature must be a registered device's and carry a nonce (claimed before the
/// token is judged: a refused token costs the app a new signature and a new token). A verdict costs a call to Google from the app (classic) or from the gateway
/// (standard) per request: meant for the few routes worth it (a purchase, a withdrawal).
struct PlayIntegrityRouteMiddleware: RouterMiddleware, RequestAuthenticator {
    typealias Context = SignetRequestContext

    let verifier: SignetRequestVerifier
    let check: AndroidAttestationRegistrar.PlayIntegrityCheck
    let metrics: SignetMetrics?
    let clock: @Sendable () -> Date
    /// Standard tokens decoded per key per minute.
    let perKey: SharedSourceLimiter
    /// The same per client address: free device keys do not multiply a client's allowance.
    let perSource: SharedSourceLimiter
    /// All clients together (`standard.decodesPerMinute`), under Google's daily quota.
    let overall: SharedSourceLimiter

    static let tokenField = HTTPField.Name("Signet-Integrity-Token")!
    static let typeField = HTTPField.Name("Signet-Integrity-Token-Type")!

    /// The nonce a request's token must carry: base64url (no padding) of SHA-256 of the signature base.
    static func nonce(forSignatureBase base: [UInt8]) -> String {
        Base64.urlEncode(Array(SHA256.hash(data: base)))
    }

    func authenticate(_ request: inout Request, context: inout Context) async throws -> Admission {
        // Refused before any cryptography: a request without a token costs what an unsigned one does.
        let tokens = request.headers[values: Self.tokenField]
        guard let token = tokens.first else {
            throw SignetError(.tokenMissing, "this route needs a Play Integrity token in Signet-Integrity-Token")
        }
        guard tokens.count == 1 else { throw SignetError(.malformedHeader, "Signet-Integrity-Token is given more than once") }
        let standard: Bool
        switch request.headers[values: Self.typeField] {
        case [], ["classic"]: standard = false
        case ["standard"]: standard = true
        default: throw SignetError(.malformedHeader, "Signet-Integrity-Token-Type is classic or standard")
        }
        let started = ContinuousClock.now
        if !context.signet.isComplete {
            try await verifier.screen(request, receivedTarget: context.signet.receivedTarget, requirement: .trustLevel(.deviceKey), now: clock())
        }
        let message = try await verifier.message(for: &request, receivedTarget: context.signet.receivedTarget)
        // Judged when the body is complete: window, nonce claim and the token's age alike.
        let now = clock()
        // A registered device (not a shared secret), whose signature carries a nonce: the nonce is
        // claimed once, so a base — and the verdict bound to it — is never accepted twice.
        let verified = try await verifier.verifySignature(message: message, requirement: .trustLevel(.deviceKey), now: now)
        guard verified.nonce != nil else {
            throw SignetError(.nonceMissing, "a play-integrity route needs a signature with a nonce")
        }
        // A standard token costs a call to Google from the gateway, against a daily quota: bounded per key.
        // Past any bound: `429 rate_limited` with Retry-After; classic tokens (decoded here) go on.
        if standard {
            try await perKey.admit(verified.keyID, now: now, refusing: "too many Play Integrity decodes for this key")
            try await perSource.admit(context.clientAddress, now: now, refusing: "too many Play Integrity decodes from this client")
            try await overall.admit("all", now: now, refusing: "this gateway's Play Integrity decodes for this minute are spent")
        }
        let verdict = try await check.verdict(token, standard: standard, nonce: Self.nonce(forSignatureBase: verified.signatureBaseBytes), now: now)
        metrics?.recordVerification(ContinuousClock.now - started)
        context.signet.verifiedMessage = message
        var identity = SignetIdentity(verified)
        // A flagging policy's findings reach the upstream, which decides: the registration's, then
        // this request's that are new.
        for flag in check.policy.environment.flags(verdict) where !identity.integrityFlags.contains(flag) {
            identity.integrityFlags.append(flag)
        }
        return Admission(identity)
    }
}
