// SPDX-License-Identifier: Apache-2.0
import Foundation
import HTTPTypes
import Hummingbird
import SignetCore

/// The `client-attestation` route policy: a Client Attestation and its PoP
/// (draft-ietf-oauth-attestation-based-client-auth-11) in place of a signed request, checked on
/// every request by ``ClientAttestationVerifier``, the attested device's identity put in the
/// context (the client id as `Signet-App-Id`). A `DPoP` proof by the attested key may stand in for
/// the PoP (the draft's combined mode, §5.2).
///
/// Refusals are `401` with the draft's OAuth error in the problem's `error` member and in a
/// `WWW-Authenticate: OAuth-Client-Attestation error="…"` challenge (the draft registers no scheme;
/// RFC 9110 §15.5.2 asks every 401 for one). A route that asks for challenges hands a fresh one
/// in `OAuth-Client-Attestation-Challenge` on every answer (§6.2).
///
/// ```swift
/// router.group("oauth").add(middleware: ClientAttestationMiddleware(
///     requirement: .init(audience: "https://api.example.com"), verifier: verifier))
/// ```
public struct ClientAttestationMiddleware<Context: SignetRequestContextProtocol>: RouterMiddleware, RequestAuthenticator {
    public let requirement: ClientAttestationRequirement
    public let verifier: ClientAttestationVerifier?
    public let metrics: SignetMetrics?
    private let clock: @Sendable () -> Date

    /// - Parameters:
    ///   - requirement: The audience, and whether challenges are required.
    ///   - verifier: Checks attestations; `nil` refuses every request (no attester is configured).
    ///   - metrics: Where outcomes are counted.
    ///   - clock: The time attestations are checked at.
    public init(
        requirement: ClientAttestationRequirement,
        verifier: ClientAttestationVerifier?,
        metrics: SignetMetrics? = nil,
        clock: @escaping @Sendable () -> Date = Date.init
    ) {
        self.requirement = requirement
        self.verifier = verifier
        self.metrics = metrics
        self.clock = clock
    }

    /// The fields that never reach the upstream unless the route forwards them.
    static var carried: [HTTPField.Name] {
        [ClientAttestationVerifier.attestationField, ClientAttestationVerifier.proofField, DPoPVerifier.proofField]
    }

    public func authenticate(_ request: inout Request, context: inout Context) async throws -> Admission {
        let withheld = requirement.forward ? [] : Self.carried
        let identity: SignetIdentity
        let combined: HTTPFields?
        do {
            guard let verifier else { throw SignetError(.clientAttestationInvalid, "this server issues no client attestations") }
            (identity, combined) = try await verifier.identity(
                for: request,
                receivedTarget: context.signet.receivedTarget,
                audience: requirement.audience,
                requireChallenge: requirement.requireChallenge,
                now: clock()
            )
        } catch var refusal as ChallengedRefusal {
            // A DPoP refusal in combined mode keeps RFC 9449's challenge (`use_dpop_nonce`,
            // `invalid_dpop_proof`), as draft -11 §7.4 asks.
            if !refusal.challenges.contains(where: { $0.hasPrefix("DPoP") }) {
                refusal.challenges = Self.challenges(for: refusal.error)
            }
            refusal.withheld = withheld
            await handOutChallenge(on: &refusal.fields)
            throw refusal
        } catch let error as SignetError {
            var refusal = ChallengedRefusal(error, challenges: Self.challenges(for: error), withheld: withheld)
            await handOutChallenge(on: &refusal.fields)
            throw refusal
        }
        if !withheld.isEmpty {
            var head = request.head
            for name in withheld { head.headerFields[name] = nil }
            request = Request(head: head, body: request.body)
        }
        // Combined mode renews its DPoP nonce where due, beside the challenge a PoP would carry.
        var fields = combined ?? HTTPFields()
        await handOutChallenge(on: &fields)
        return Admission(identity, answerFields: fields)
    }

    /// On a route that asks for challenges, a fresh one on every answer (draft -11 §6.2), where
    /// none is there yet: a refusal's, and the answer to an admitted request, whichever proof it
    /// carried. None while the store cannot give the challenge key (the refusal stands as it is).
    private func handOutChallenge(on fields: inout HTTPFields) async {
        guard requirement.requireChallenge, let verifier, fields[ClientAttestationVerifier.challengeField] == nil,
            let challenge = try? await verifier.challenge(now: clock())
        else { return }
        fields[ClientAttestationVerifier.challengeField] = challenge.value
    }

    /// The challenge a refusal carries: the draft's OAuth error for a 401, none otherwise.
    static func challenges(for error: SignetError) -> [String] {
        guard error.code.httpStatus == 401 else { return [] }
        let oauth = ClientAttestationVerifier.oauthError(for: error.code) ?? "invalid_client_attestation"
        return ["OAuth-Client-Attestation error=\"\(oauth)\""]
    }
}
