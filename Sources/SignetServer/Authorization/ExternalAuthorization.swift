// SPDX-License-Identifier: Apache-2.0
import HTTPTypes
import Hummingbird
import SignetCore
import SignetMiddleware

/// The authorization listener's answers to another proxy: `200` with the identity fields to copy
/// upstream when the route's gate lets the request through, or the refusal the proxy would
/// have sent, with its reason code also in `Signet-Reason` (nginx's `auth_request` passes a 401 or
/// 403 on but not its body; `auth_request_set` can read the field).
enum ExternalAuthorization {
    /// What the proxy copies upstream: the identity fields, and on a `monitor` route the verdict —
    /// every one of ``identityNames``, empty where it does not apply. A proxy that copies fields by
    /// name then overwrites a client's own spelling of each (Caddy 2.6, Debian's, writes its
    /// placeholder's text for a field the answer lacks); nginx sends no empty field.
    static func allowed(context: SignetRequestContext) -> Response {
        var fields = HTTPFields()
        ForwardedFields.appendIdentity(context.signet.identity, verdict: context.signet.verdict, to: &fields)
        for name in identityNames where fields[name] == nil { fields[name] = "" }
        return Response(status: .ok, headers: fields)
    }

    /// The answer to a question that could not be read (`not_found`, `authorization_request_invalid`,
    /// `path_ambiguous`): counted as a refusal, its code also in `Signet-Reason`. Made before the
    /// access log, which logs a request only once it is known which one is asked about.
    static func unreadable(_ error: SignetError, method: String, source: String?, debug: Bool, metrics: SignetMetrics) -> Response {
        metrics.recordRefusal(error.code, method: method, path: "(question)", keyID: nil, source: source)
        var response = ProblemResponse.make(error, debug: debug)
        response.headers[.signetReason] = error.code.rawValue
        return response
    }

    /// The fields an allowed answer carries for the upstream.
    static let identityNames: [HTTPField.Name] = [
        .signetKeyID, .signetTrustLevel, .signetDevice, .signetUser, .signetRiskMetric, .signetAppID,
        .signetAppCategory, .signetAppVersion, .signetAgent, .signetIntegrityFlags, .signetVerdict,
    ]
}

extension HTTPField.Name {
    static let signetReason = Self("Signet-Reason")!
}
