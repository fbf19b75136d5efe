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
/// backends that check it again.
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
    public let metrics: SignetMetrics?
    private let clock: @Sendable () -> Date

    /// - Parameters:
    ///   - acceptance: Which tokens the route takes.
    ///   - appTokens: Checks Signet app tokens; `nil` refuses them.
    ///   - firebase: Checks Firebase App Check tokens; `nil` refuses them.
    ///   - metrics: Where outcomes are counted.
    ///   - clock: The time tokens are checked at.
    public init(
        acceptance: TokenAcceptance,
        appTokens: AppTokenVerifier?,
        firebase: (any ExternalTokenVerifier)? = nil,
        metrics: SignetMetrics? = nil,
        clock: @escaping @Sendable () -> Date = Date.init
    ) {
        self.acceptance = acceptance
        self.appTokens = appTokens
        self.firebase = firebase
        self.metrics = metrics
        self.clock = clock
    }

    public func authenticate(_ request: inout Request, context: inout Context) async throws -> Admission {
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

    static func single(_ name: HTTPField.Name, in fields: HTTPFields) throws -> String? {
        let values = fields[values: name]
        guard values.count <= 1 else { throw SignetError(.tokenInvalid, "\(name) is given more than once") }
        // An empty field is no token (as no field at all).
        let value = values.first?.trimmingCharacters(in: .whitespaces)
        return value?.isEmpty == false ? value : nil
    }
}
