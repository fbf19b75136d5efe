// SPDX-License-Identifier: Apache-2.0
import Foundation
import HTTPTypes
import SignetCore
import SignetMiddleware

/// The header fields the gateway sends upstream: the client's, less everything that could speak for
/// the gateway, plus the gateway's own identity and forwarding fields — one `HTTPFields`, filtered
/// in place, from the client's request to the upstream's (and back, for the response).
///
/// The identity fields: `Signet-Trust-Level`, and `Signet-Key-Id`, `Signet-Device`, `Signet-User`,
/// `Signet-Risk-Metric`, `Signet-App-Id`, `Signet-App-Category`, `Signet-App-Version`,
/// `Signet-Agent` and `Signet-Integrity-Flags` where they apply; on a `monitor` route, `Signet-Verdict`.
///
/// Removed from what the client sent:
/// - every field whose name, lowercased with `_` read as `-`, starts with `signet-`: CGI-style
///   servers (PHP, WSGI, Rack) read `Signet_Key_Id` as `Signet-Key-Id`;
/// - the forwarding fields (`Forwarded`, `X-Forwarded-*`, `X-Real-IP` and the other client-address
///   fields frameworks read), replaced by the gateway's own so the upstream sees the peer the gateway
///   saw;
/// - fields that make frameworks act on another method or URL than the one routed and signed
///   (`X-HTTP-Method-Override` and kin, `X-Original-URL`, `X-Rewrite-URL`);
/// - hop-by-hop fields, and every field `Connection` names (RFC 9110 §7.6.1).
enum ForwardedFields {
    /// Hop-by-hop fields, and those the gateway writes itself: `Host` and `Content-Length` for the
    /// upstream, and `Expect`, answered already (the gateway reads the whole body before forwarding).
    static let hopByHop: Set<String> = [
        "connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "proxy-connection", "te",
        "trailer", "transfer-encoding", "upgrade", "host", "content-length", "expect",
    ]

    /// The fields the upstream receives, written once into fields of their own: the client's kept
    /// ones first, then `requestID` (`X-Request-Id`, where the gateway made it), the identity and
    /// forwarding fields, and `contentLength` last: filtering a copy of the client's fields and appending to it copied
    /// each field twice, which was a third of a proxied request's reference counting.
    static func outbound(
        _ fields: HTTPFields,
        identity: SignetIdentity?,
        verdict: String? = nil,
        client: String?,
        scheme: String,
        authority: String?,
        requestID: String? = nil,
        contentLength: String? = nil
    ) -> HTTPFields {
        let connectionListed = listed(in: fields[values: .connection])
        let kept = { (field: HTTPField) -> Bool in
            let name = field.name.canonicalName
            let folded = CGIFieldName.folded(name)
            return !isRemoved(name, folded: folded) && !connectionListed.contains(folded)
        }
        var out = HTTPFields()
        out.reserveCapacity(fields.count + 16)
        for field in fields where kept(field) { out.append(field) }
        // Judged as one of the client's fields, as it was when it was set among them.
        if let requestID {
            let field = HTTPField(name: RequestCorrelation.requestIDField, value: requestID)
            if kept(field) { out.append(field) }
        }
        appendIdentity(identity, verdict: verdict, to: &out)
        var forwarded: [String] = []
        if let client {
            out.append(HTTPField(name: .xForwardedFor, value: client))
            forwarded.append("for=" + (client.contains(":") ? "\"[\(client)]\"" : client))
        }
        out.append(HTTPField(name: .xForwardedProto, value: scheme))
        forwarded.append("proto=" + scheme)
        if let authority, RequestTarget.isAuthority(authority) {
            out.append(HTTPField(name: .xForwardedHost, value: authority))
            forwarded.append("host=\"\(authority)\"")
        }
        out.append(HTTPField(name: .forwarded, value: forwarded.joined(separator: ";")))
        if let contentLength { out.append(HTTPField(name: .contentLength, value: contentLength)) }
        return out
    }

    /// The identity fields for `identity` (none without one) and, on a `monitor` route, the verdict:
    /// what the upstream learns of the client, from this proxy or, through the authorization
    /// listener, from another.
    static func appendIdentity(_ identity: SignetIdentity?, verdict: String?, to fields: inout HTTPFields) {
        if let identity {
            if !identity.keyID.isEmpty { fields.append(HTTPField(name: .signetKeyID, value: identity.keyID)) }
            fields.append(HTTPField(name: .signetTrustLevel, value: identity.trustLevel.rawValue))
            if let device = identity.deviceID { fields.append(HTTPField(name: .signetDevice, value: device)) }
            if let user = identity.user { fields.append(HTTPField(name: .signetUser, value: fieldText(user))) }
            if let risk = identity.riskMetric { fields.append(HTTPField(name: .signetRiskMetric, value: String(risk))) }
            if let app = identity.appID { fields.append(HTTPField(name: .signetAppID, value: fieldText(app))) }
            if let category = identity.appBuild?.category {
                fields.append(HTTPField(name: .signetAppCategory, value: category.name))
            }
            if let version = identity.appBuild?.bundleVersion {
                fields.append(HTTPField(name: .signetAppVersion, value: fieldText(version)))
            }
            if let agent = identity.agent { fields.append(HTTPField(name: .signetAgent, value: fieldText(agent))) }
            if !identity.integrityFlags.isEmpty {
                fields.append(HTTPField(name: .signetIntegrityFlags, value: identity.integrityFlags.joined(separator: ", ")))
            }
        }
        if let verdict { fields.append(HTTPField(name: .signetVerdict, value: verdict)) }
    }

    /// Whether the client's field `name` (lowercase) is removed from every request, whatever
    /// `Connection` says.
    static func isRemoved(_ name: String) -> Bool {
        isRemoved(name, folded: CGIFieldName.folded(name))
    }

    /// ``isRemoved(_:)`` with the name folded already (`CGIFieldName.folded`).
    private static func isRemoved(_ name: String, folded: String) -> Bool {
        // Dropped as nginx does by default (`underscores_in_headers off`): CGI-style servers read
        // `X_Amount` as `X-Amount`, so an uncovered twin of a covered field would be read in its place.
        if name.utf8.contains(UInt8(ascii: "_")) { return true }
        return folded.hasPrefix("signet-") || isForwarding(folded) || hopByHop.contains(folded)
    }

    /// Whether a signature may not cover the field `name`: one the upstream would not receive as
    /// the client sent it. `Host` and `Content-Length` are written again by the gateway: the body's
    /// true length, and the upstream's own authority with the public one in `X-Forwarded-Host` —
    /// what a signature binds of the target is `@authority` or `@target-uri`, which the standard
    /// rules require, so a covered `Host` adds nothing the upstream could be misled by.
    static func isNotDelivered(_ name: String) -> Bool {
        name != "host" && name != "content-length" && isRemoved(name)
    }

    /// The upstream's response fields less those that stay on their hop (hop-by-hop, or named in
    /// `Connection`).
    ///
    /// Written into fields of their own with room for what the gateway adds to an answer (its
    /// length, `Date`, `Server`): filtering a copy and appending to it copied each field twice.
    static func inbound(_ fields: HTTPFields) -> HTTPFields {
        let connectionListed = listed(in: fields[values: .connection])
        var out = HTTPFields()
        out.reserveCapacity(fields.count + 4)
        for field in fields {
            let name = CGIFieldName.folded(field.name.canonicalName)
            if hopByHop.contains(name) || connectionListed.contains(name) { continue }
            out.append(field)
        }
        return out
    }

    /// Printable ASCII as it is; `%` and every other byte of the UTF-8 percent-encoded, so a user
    /// name (`Jäsøn Doe`) reaches the upstream as one unambiguous field value (`J%C3%A4s%C3%B8n Doe`).
    static func fieldText(_ text: String) -> String {
        FormURLEncoding.percentEncode(text.utf8) { $0 >= 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "%") }
    }

    /// Whether a client's field `name` (lowercase) would mislead the upstream about who the client
    /// is or what it asked for, where another proxy forwards the request: what ``isRemoved`` removes
    /// for the client (`Signet-*` and `_` spellings, the method and URL overrides, the client-address
    /// fields), less hop-by-hop fields and the two that proxy writes itself (`X-Forwarded-For`,
    /// `X-Forwarded-Proto`). What Envoy's gRPC answer removes (``EnvoyCheck``).
    static func misleadsUpstream(_ name: String) -> Bool {
        let folded = CGIFieldName.folded(name)
        return isRemoved(name) && !hopByHop.contains(folded) && folded != "x-forwarded-for" && folded != "x-forwarded-proto"
    }

    /// Fields that speak for the gateway about the client, or redirect the framework behind it.
    static let spoofable: Set<String> = [
        "forwarded", "x-forwarded", "x-real-ip", "x-client-ip", "true-client-ip", "cf-connecting-ip",
        "x-cluster-client-ip", "client-ip", "fastly-client-ip", "x-original-forwarded-for",
        "x-http-method-override", "x-http-method", "x-method-override", "x-original-url", "x-rewrite-url",
        "front-end-https", "x-original-uri", "x-host",
    ]

    private static func isForwarding(_ name: String) -> Bool {
        spoofable.contains(name) || name.hasPrefix("x-forwarded-")
    }

    private static func listed(in values: [String]) -> Set<String> {
        Set(FieldList.members(values).map(CGIFieldName.folded))
    }
}

extension HTTPField.Name {
    static let signetKeyID = Self("Signet-Key-Id")!
    static let signetTrustLevel = Self("Signet-Trust-Level")!
    static let signetDevice = Self("Signet-Device")!
    static let signetUser = Self("Signet-User")!
    static let signetRiskMetric = Self("Signet-Risk-Metric")!
    static let signetAppID = Self("Signet-App-Id")!
    static let signetAppCategory = Self("Signet-App-Category")!
    static let signetAppVersion = Self("Signet-App-Version")!
    static let signetAgent = Self("Signet-Agent")!
    static let signetIntegrityFlags = Self("Signet-Integrity-Flags")!
    static let signetVerdict = Self("Signet-Verdict")!
    static let xForwardedFor = Self("X-Forwarded-For")!
    static let xForwardedProto = Self("X-Forwarded-Proto")!
    static let xForwardedHost = Self("X-Forwarded-Host")!
    static let forwarded = Self("Forwarded")!
    static let signature = Self("Signature")!
    static let signatureInput = Self("Signature-Input")!
    static let contentDigest = Self("Content-Digest")!
}
