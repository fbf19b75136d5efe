// SPDX-License-Identifier: Apache-2.0
import HTTPTypes
import SignetCore
import SignetMiddleware

/// The request another proxy asks about, read from its authorization request: the method, target,
/// authority and fields the client sent, the client's address, and whether a body it announced
/// stayed behind.
///
/// Two forms, by the path asked on:
/// - **Forward auth** (`/forward-auth`: nginx `auth_request`, Caddy `forward_auth`, Traefik
///   `forwardAuth`): the original method in `X-Forwarded-Method` or `X-Original-Method` (else the
///   authorization request's own, which nginx keeps), the target in `X-Forwarded-Uri` or
///   `X-Original-URI`, the authority in `X-Forwarded-Host` (else `Host`). The client's fields come
///   as they were; a body only where the proxy sends one (Traefik's `forwardBody`).
/// - **Envoy's HTTP `ext_authz`** (`/ext-authz` + the original path, Envoy's `path_prefix`): the
///   method, authority and fields as they were; the body with `with_request_body`, and
///   `x-envoy-auth-partial-body: true` when Envoy cut it.
///
/// A body is announced by `Content-Digest` (the client signed one), or by
/// `X-Original-Content-Length` / `X-Original-Transfer-Encoding` where the proxy's configuration
/// passes them (docs/integrations.md): such a body that did not come (or, from Envoy, that it says
/// it cut) is *withheld*, and a route that checks bodies refuses the request
/// (``ExternalAuthorizationGate``). A body that came is checked against its digest as it is.
package struct AuthorizationQuestion: Sendable {
    /// The client's request as it reached the proxy, less what the proxy added to ask about it.
    package var head: HTTPRequest
    /// The client's address as the proxy names it (`X-Forwarded-For`).
    package var client: String?
    /// A body was announced and did not come whole.
    package var bodyWithheld: Bool

    static let forwardAuthPath = "/forward-auth"
    static let envoyPrefix = "/ext-authz"

    /// Reads the authorization request `request`, which brought a body when `bodyCame`.
    ///
    /// - Throws: `not_found` for a path of neither form; `authorization_request_invalid` when it
    ///   does not say, once and plainly, which request it is about; `path_ambiguous` for a target
    ///   that normalises to another.
    package init(asking request: HTTPRequest, bodyCame: Bool, trusted: TrustedProxies?) throws {
        let path = request.path ?? "/"
        let asked = String(path.prefix { $0 != "?" })
        var fields = request.headerFields
        let method: HTTPRequest.Method
        let target: String
        var authority = request.authority
        var partial = false
        if asked.lowercased() == Self.forwardAuthPath {
            // Named one way only: the proxy sets the way its configuration says and passes the
            // client's fields on, so a client's spelling of the other way must not be read instead.
            for (forwarded, original) in [(HTTPField.Name.xForwardedMethod, HTTPField.Name.xOriginalMethod), (.xForwardedURI, .xOriginalURI)]
            where fields[forwarded] != nil && fields[original] != nil {
                throw SignetError(
                    .authorizationRequestInvalid,
                    "the authorization request names the original both as \(forwarded.canonicalName) and \(original.canonicalName)")
            }
            if let named = try Self.single(.xForwardedMethod, in: fields) ?? Self.single(.xOriginalMethod, in: fields) {
                guard let parsed = HTTPRequest.Method(named) else {
                    throw SignetError(.authorizationRequestInvalid, "the original method is not a method")
                }
                method = parsed
            } else {
                method = request.method
            }
            guard let uri = try Self.single(.xForwardedURI, in: fields) ?? Self.single(.xOriginalURI, in: fields) else {
                throw SignetError(.authorizationRequestInvalid, "the authorization request names no original URI (X-Forwarded-Uri or X-Original-URI)")
            }
            target = uri
            if let host = try Self.single(.xForwardedHost, in: fields) { authority = host }
        } else if asked.lowercased() == Self.envoyPrefix || asked.lowercased().hasPrefix(Self.envoyPrefix + "/") {
            method = request.method
            let rest = String(path.dropFirst(Self.envoyPrefix.count))
            target = rest.hasPrefix("/") ? rest : "/" + rest
            partial = Self.saysCut(fields)
        } else {
            throw SignetError(.notFound, "the authorization listener answers \(Self.forwardAuthPath) and \(Self.envoyPrefix)/…")
        }
        try Self.checkTarget(target)
        guard let authority, RequestTarget.isAuthority(authority) else {
            throw SignetError(.authorizationRequestInvalid, "the authorization request names no original host (X-Forwarded-Host or Host)")
        }
        // Empty where the original had none (nginx's `$content_length`, Caddy's placeholder); a
        // value that is not a length announces a body rather than hide one.
        let announcedLength = try Self.single(.xOriginalContentLength, in: fields).map { $0.isEmpty ? 0 : Int($0) ?? 1 } ?? 0
        let announcedCoding = try Self.single(.xOriginalTransferEncoding, in: fields).map { !$0.isEmpty } ?? false
        let announced = fields[.contentDigest] != nil || announcedLength != 0 || announcedCoding
        bodyWithheld = partial || (announced && !bodyCame)
        client = TrustedProxies.forwardedClient(fields, trusted: trusted)
        fields.removeAll { Self.isAsking($0.name) }
        head = HTTPRequest(
            method: method,
            scheme: try Self.single(.xForwardedProto, in: request.headerFields),
            authority: authority,
            path: target,
            headerFields: fields
        )
    }

    /// Refuses a target the proxy would forward other than as it is judged: one not in origin form
    /// (`authorization_request_invalid`), or one that normalises to another path (`path_ambiguous`).
    ///
    /// Signet's own proxy forwards the normalised path it routed; nginx, Caddy and Envoy forward the
    /// bytes the client sent. So `/admin/x/../../scores/top`, judged as `/scores/top`, would reach an
    /// upstream that routes on the raw path as `/admin/…`: only a path that is already normalised
    /// (dot-segments resolved, unreserved escapes decoded) is judged.
    package static func checkTarget(_ target: String) throws {
        // An origin-form target: a path, perhaps a query (RFC 9112 §3.2.1).
        guard target.hasPrefix("/"), !target.utf8.contains(where: { $0 <= 0x20 || $0 == 0x7F || $0 == UInt8(ascii: "#") }) else {
            throw SignetError(.authorizationRequestInvalid, "the original URI is not a path")
        }
        guard try RoutingPath.normalize(target) == target else {
            throw SignetError(.pathAmbiguous, "the path reads as another once normalised (dot-segments, escapes), and the proxy forwards it as sent")
        }
    }

    /// Whether Envoy says it cut the body (`x-envoy-auth-partial-body: true`): any line or member
    /// saying so, so a client's own `false` beside Envoy's line cannot hide a cut body. One rule for
    /// Envoy's HTTP and gRPC questions.
    static func saysCut(_ fields: HTTPFields) -> Bool {
        FieldList.members(fields[values: .xEnvoyAuthPartialBody]).contains { $0.lowercased() == "true" }
    }

    /// Whether the proxy added the field to ask (forwarding fields, Envoy's own), not the client.
    package static func isAsking(_ name: HTTPField.Name) -> Bool {
        let name = CGIFieldName.folded(name.canonicalName)
        return name.hasPrefix("x-forwarded-") || name.hasPrefix("x-original-") || name.hasPrefix("x-envoy-")
            || ["forwarded", "x-real-ip"].contains(name)
    }

    /// The field's one value; two would leave which request is asked about to whoever reads first.
    private static func single(_ name: HTTPField.Name, in fields: HTTPFields) throws -> String? {
        let values = fields[values: name]
        guard values.count <= 1 else {
            throw SignetError(.authorizationRequestInvalid, "\(name.canonicalName) is given \(values.count) times")
        }
        return values.first
    }
}

extension HTTPField.Name {
    static let xForwardedMethod = Self("X-Forwarded-Method")!
    static let xForwardedURI = Self("X-Forwarded-Uri")!
    static let xOriginalMethod = Self("X-Original-Method")!
    static let xOriginalURI = Self("X-Original-URI")!
    static let xOriginalContentLength = Self("X-Original-Content-Length")!
    static let xOriginalTransferEncoding = Self("X-Original-Transfer-Encoding")!
    static let xEnvoyAuthPartialBody = Self("x-envoy-auth-partial-body")!
}
