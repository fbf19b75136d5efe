// SPDX-License-Identifier: Apache-2.0
import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import SignetCore
import SignetStore

/// Checks the DPoP proof (RFC 9449) that comes with a token bound to a key: the proof itself
/// (`DPoPProof`), that its key is the token's (`cnf.jkt`), the server's nonce where the route asks
/// for one, and — only after all of that passed — its `jti` claimed once in the store, across
/// instances.
///
/// Refusals carry RFC 9449 §7.1's `WWW-Authenticate: DPoP` challenge, with `error` and the
/// algorithms taken, and a fresh `DPoP-Nonce` where a nonce is missing or old (§9), so a client
/// library retries on its own.
public struct DPoPVerifier: Sendable {
    /// How old a proof's `iat` may be.
    public let proofLifetime: TimeInterval
    /// How long a server nonce is taken; one past half of it is renewed on the answer.
    public let nonceLifetime: TimeInterval
    public let clockSkew: TimeInterval
    /// The scheme and authority of the URI a proof's `htu` names: the gateway's public ones.
    public let publicScheme: String
    public let publicAuthority: String?
    let nonces: any NonceStore
    let nonceKey: SharedServerKey

    /// The nonce-store namespace of proof ids (no key id starts with `:`).
    static let claimNamespace = ":dpop"
    static var nonceSecretName: String { "dpop-nonce-key" }
    public static var proofField: HTTPField.Name { HTTPField.Name("DPoP")! }
    public static var nonceField: HTTPField.Name { HTTPField.Name("DPoP-Nonce")! }

    public init(
        store: any NonceStore & ServerSecretStore,
        publicScheme: String,
        publicAuthority: String?,
        proofLifetime: TimeInterval = 60,
        nonceLifetime: TimeInterval = 300,
        clockSkew: TimeInterval = 30
    ) {
        self.nonces = store
        self.nonceKey = SharedServerKey(name: Self.nonceSecretName, store: store)
        self.publicScheme = publicScheme
        self.publicAuthority = publicAuthority
        self.proofLifetime = proofLifetime
        self.nonceLifetime = nonceLifetime
        self.clockSkew = clockSkew
    }

    /// The challenge of a route that takes DPoP-bound tokens, with `error` when there is one.
    public static func challenge(error: String? = nil) -> String {
        (error.map { "DPoP error=\"\($0)\", " } ?? "DPoP ") + "algs=\"\(DPoPProof.algorithmNames)\""
    }

    /// Checks the request's proof for `accessToken`, bound to the key whose thumbprint is `jkt`.
    ///
    /// - Parameters:
    ///   - request: The request, with its `DPoP` field.
    ///   - receivedTarget: The target as the client sent it, when routing normalised it.
    ///   - accessToken: The token the request carries, which `ath` must hash; `nil` for the
    ///     request that asks for a token.
    ///   - jkt: The thumbprint the token is bound to (`cnf.jkt`).
    ///   - requireNonce: The proof must carry a current nonce of this gateway's.
    ///   - now: The time the request is judged at.
    /// - Returns: The fields to set on the answer: a fresh `DPoP-Nonce` once the proof's is past
    ///   half its lifetime; none otherwise.
    /// - Throws: ``ChallengedRefusal`` with a `dpop_*` code.
    public func check(
        _ request: Request,
        receivedTarget: String?,
        accessToken: String?,
        boundTo jkt: String,
        requireNonce: Bool,
        now: Date
    ) async throws -> HTTPFields {
        let proof = try self.proof(request, receivedTarget: receivedTarget, accessToken: accessToken, now: now)
        guard ConstantTime.equals(Array(proof.thumbprint.utf8), Array(jkt.utf8)) else {
            throw ChallengedRefusal(
                SignetError(.dpopKeyMismatch, "the proof is signed by another key than the one the token is bound to"),
                challenges: [Self.challenge(error: "invalid_token")]
            )
        }
        let renewal = requireNonce ? try await currentNonce(in: proof, now: now) : HTTPFields()
        try await claim(proof, now: now)
        return renewal
    }

    /// Refuses `proof` unless it carries a current nonce of this gateway's (RFC 9449 §9): with a
    /// fresh one in `DPoP-Nonce` and `error="use_dpop_nonce"`.
    ///
    /// - Returns: The fields to set on the answer: a fresh `DPoP-Nonce` once the proof's is past
    ///   half its lifetime; none otherwise.
    public func currentNonce(in proof: DPoPProof, now: Date) async throws -> HTTPFields {
        let key = try await nonceKey.key()
        guard let nonce = proof.nonce,
            let issued = ServerNonce.issued(verifying: nonce, .dpop, secret: key, lifetime: nonceLifetime, clockSkew: clockSkew, now: now)
        else {
            var refusal = ChallengedRefusal(
                SignetError(.dpopNonceRequired, "this route needs a current server nonce in the proof: use the DPoP-Nonce of this answer"),
                challenges: [Self.challenge(error: "use_dpop_nonce")]
            )
            refusal.fields[Self.nonceField] = ServerNonce.mint(.dpop, secret: key, now: now).value
            throw refusal
        }
        var renewal = HTTPFields()
        if now.timeIntervalSince(issued) > nonceLifetime / 2 {
            renewal[Self.nonceField] = ServerNonce.mint(.dpop, secret: key, now: now).value
        }
        return renewal
    }

    /// A fresh nonce of this gateway's, as `DPoP-Nonce` carries it.
    public func freshNonce(now: Date) async throws -> String {
        ServerNonce.mint(.dpop, secret: try await nonceKey.key(), now: now).value
    }

    /// The request's one `DPoP` proof, checked for this request as RFC 9449 §4.3 says: the first
    /// step of ``check(_:receivedTarget:accessToken:boundTo:requireNonce:now:)``, the key, nonce
    /// and claim left to the caller. A client attestation in combined mode
    /// (draft-ietf-oauth-attestation-based-client-auth-11 §5.2) checks its own key and the nonce
    /// (``currentNonce(in:now:)``) between this and ``claim(_:now:)``.
    ///
    /// - Throws: ``ChallengedRefusal`` with a `dpop_*` code.
    public func proof(_ request: Request, receivedTarget: String?, accessToken: String?, now: Date) throws -> DPoPProof {
        let values = request.headers[values: Self.proofField]
        guard let proofText = values.first else {
            throw ChallengedRefusal(SignetError(.dpopProofMissing, "this route's tokens need a DPoP proof"), challenges: [Self.challenge()])
        }
        guard values.count == 1 else { throw refusal(SignetError(.dpopProofInvalid, "DPoP is given more than once")) }
        // The URI the proof must name is built from parts a client sends: each must be what it
        // says, or `Host: gw/admin?` would move a proof for `/admin` onto any path.
        let path = receivedTarget ?? request.head.path ?? "/"
        guard let authority = publicAuthority ?? request.head.authority, RequestTarget.isAuthority(authority),
            path.hasPrefix("/"), !path.contains("#")
        else {
            throw refusal(SignetError(.dpopProofInvalid, "the request's Host or target cannot be compared with a proof's htu"))
        }
        let proof: DPoPProof
        do {
            proof = try DPoPProof(
                verifying: proofText,
                method: request.method.rawValue,
                targetURI: publicScheme + "://" + authority + path,
                accessToken: accessToken,
                now: now,
                lifetime: proofLifetime,
                clockSkew: clockSkew
            )
        } catch let error as SignetError {
            throw refusal(error)
        }
        return proof
    }

    /// Claims `proof`'s `jti` once across instances, keyed by its key's thumbprint: the last step,
    /// after every other check passed.
    ///
    /// - Throws: ``ChallengedRefusal`` with `dpop_proof_replayed`.
    public func claim(_ proof: DPoPProof, now: Date) async throws {
        let claimed = try await nonces.claim(
            keyID: Self.claimNamespace,
            nonce: proof.thumbprint + "." + proof.jti,
            until: proof.issued.addingTimeInterval(proofLifetime + 2 * clockSkew),
            now: now
        )
        guard claimed else { throw refusal(SignetError(.dpopProofReplayed, "this DPoP proof was used before")) }
    }

    private func refusal(_ error: SignetError) -> ChallengedRefusal {
        ChallengedRefusal(error, challenges: [Self.challenge(error: "invalid_dpop_proof")])
    }
}
