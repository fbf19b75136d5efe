// SPDX-License-Identifier: Apache-2.0
import Foundation
import HTTPTypes
import Hummingbird
import SignetCore

/// The `app-token` and `firebase-app-check` route policies: a bearer token in place of a signed
/// request, checked on every request under the middleware, its identity put in the context.
///
/// `Signet-Token` is read first when the route takes app tokens, then `X-Firebase-AppCheck` when it
/// takes those; a field given twice is refused (two values could be read differently upstream).
/// The gateway removes every `Signet-*` field before the upstream; the App Check field stays, for
/// backends that check it again. On a route with ``TokenAcceptance/dpop`` the token comes from
/// `Authorization: DPoP` or `Signet-Token` with a `DPoP` proof (``DPoPVerifier``); both are removed
/// before the upstream, and refusals carry `WWW-Authenticate: DPoP`.
/// A route that consumes App Check tokens (``TokenAcceptance/consumeFirebase``) takes each once.
///
/// ```swift
/// router.group("api").add(middleware: TokenAccessMiddleware(
///     acceptance: .init(appToken: true, firebaseAppCheck: false), appTokens: verifier))
/// ```
public struct TokenAccessMiddleware<Context: SignetRequestContextProtocol>: RouterMiddleware, RequestAuthenticator {
    public static var appTokenField: HTTPField.Name { HTTPField.Name("Signet-Token")! }
    public static var firebaseField: HTTPField.Name { HTTPField.Name("X-Firebase-AppCheck")! }

    public let acceptance: TokenAcceptance
    public let appTokens: AppTokenVerifier?
    public let firebase: (any ExternalTokenVerifier)?
    /// Checks the proofs of routes whose tokens are DPoP-bound (``TokenAcceptance/dpop``).
    public let dpop: DPoPVerifier?
    public let metrics: SignetMetrics?
    private let clock: @Sendable () -> Date

    /// - Parameters:
    ///   - acceptance: Which tokens the route takes.
    ///   - appTokens: Checks Signet app tokens; `nil` refuses them.
    ///   - firebase: Checks Firebase App Check tokens; `nil` refuses them.
    ///   - dpop: Checks DPoP proofs, on a route whose acceptance asks for them.
    ///   - metrics: Where outcomes are counted.
    ///   - clock: The time tokens are checked at.
    public init(
        acceptance: TokenAcceptance,
        appTokens: AppTokenVerifier?,
        firebase: (any ExternalTokenVerifier)? = nil,
        dpop: DPoPVerifier? = nil,
        metrics: SignetMetrics? = nil,
        clock: @escaping @Sendable () -> Date = Date.init
    ) {
        self.acceptance = acceptance
        self.appTokens = appTokens
        self.firebase = firebase
        self.dpop = dpop
        self.metrics = metrics
        self.clock = clock
    }

    public func authenticate(_ request: inout Request, context: inout Context) async throws -> Admission {
        if acceptance.appToken, let requirement = acceptance.dpop {
            // The upstream learns the device from the identity fields; the token and its proof
            // stay at the gateway, as `Signet-Token` does — on a monitored route's refusal too.
            var withheld = [DPoPVerifier.proofField]
            if Self.scheme(of: request.headers) == "dpop" { withheld.append(.authorization) }
            let admission: Admission
            do {
                admission = try await boundToken(request, context: context, requirement: requirement)
            } catch var refusal as ChallengedRefusal {
                refusal.withheld = withheld
                throw refusal
            } catch let error as SignetError {
                // Every refusal withholds the token and proof (a monitored `risk_metric_exceeded`
                // is forwarded too); only a 401 asks for DPoP.
                let challenges = error.code.httpStatus == 401 ? [DPoPVerifier.challenge(error: "invalid_token")] : []
                throw ChallengedRefusal(error, challenges: challenges, withheld: withheld)
            }
            var head = request.head
            for name in withheld { head.headerFields[name] = nil }
            request = Request(head: head, body: request.body)
            return admission
        }
        if acceptance.appToken, let token = try Self.single(Self.appTokenField, in: request.headers) {
            guard let appTokens else { throw SignetError(.tokenInvalid, "this server issues no app tokens") }
            return Admission(try await appTokens.identity(for: token, audience: acceptance.audience, now: clock()))
        } else if acceptance.firebaseAppCheck, let token = try Self.single(Self.firebaseField, in: request.headers) {
            guard let firebase else { throw SignetError(.tokenInvalid, "this server takes no App Check tokens") }
            return Admission(try await firebase.identity(for: token, now: clock(), consume: acceptance.consumeFirebase))
        }
        let names = [acceptance.appToken ? "Signet-Token" : nil, acceptance.firebaseAppCheck ? "X-Firebase-AppCheck" : nil]
        throw SignetError(.tokenMissing, "this route needs a token in \(names.compactMap { $0 }.joined(separator: " or "))")
    }

    /// An app token with the DPoP proof of the key it is bound to: the token from
    /// `Authorization: DPoP` (RFC 9449 §7.1) or `Signet-Token`, one of them.
    private func boundToken(_ request: Request, context: Context, requirement: DPoPRequirement) async throws -> Admission {
        let authorization = try Self.single(.authorization, in: request.headers)
        let scheme = Self.scheme(of: request.headers)
        let carried = scheme == "dpop" ? authorization.map { String($0.drop(while: { $0 != " " })).trimmingOWS } : nil
        let field = try Self.single(Self.appTokenField, in: request.headers)
        guard carried == nil || field == nil else {
            throw SignetError(.tokenInvalid, "the token is given in both Authorization and Signet-Token")
        }
        guard let token = carried ?? field, !token.isEmpty else {
            let error = SignetError(
                .tokenMissing,
                scheme == "bearer"
                    ? "this route's tokens are DPoP-bound: send Authorization: DPoP with a proof, not Bearer"
                    : "this route needs a DPoP-bound token in Authorization: DPoP or Signet-Token"
            )
            throw ChallengedRefusal(error, challenges: [DPoPVerifier.challenge()])
        }
        guard let appTokens, let dpop else { throw SignetError(.tokenInvalid, "this server issues no app tokens") }
        let now = clock()
        var renewal = HTTPFields()
        do {
            let identity = try await appTokens.identity(for: token, audience: acceptance.audience, now: now) { claims in
                renewal = try await dpop.check(
                    request,
                    receivedTarget: context.signet.receivedTarget,
                    accessToken: token,
                    boundTo: claims.cnf.jkt,
                    requireNonce: requirement.requireNonce,
                    now: now
                )
            }
            return Admission(identity, answerFields: renewal)
        } catch let error as SignetError where error.code.httpStatus == 401 {
            // A refused token on a DPoP route asks for DPoP, as RFC 9449 §7.1's resource servers do.
            throw ChallengedRefusal(error, challenges: [DPoPVerifier.challenge(error: "invalid_token")])
        }
    }

    /// The scheme of the one `Authorization` field, lowercased.
    static func scheme(of fields: HTTPFields) -> String? {
        let values = fields[values: .authorization]
        guard values.count == 1 else { return nil }
        return values[0].trimmingOWS.prefix(while: { $0 != " " }).lowercased()
    }

    static func single(_ name: HTTPField.Name, in fields: HTTPFields) throws -> String? {
        let values = fields[values: name]
        guard values.count <= 1 else { throw SignetError(.tokenInvalid, "\(name) is given more than once") }
        // An empty field is no token (as no field at all). Trimmed of OWS byte by byte: Foundation's
        // `trimmingCharacters(in:)` went through NSString and UTF-16 on Linux, 27 µs of a token's
        // verify (issue 39's profile).
        let value = values.first?.trimmingOWS
        return value?.isEmpty == false ? value : nil
    }
}
