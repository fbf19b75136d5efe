// SPDX-License-Identifier: Apache-2.0
import HTTPTypes
import Hummingbird
import NIOCore
import SignetCore
import SignetMiddleware
import SwiftProtobuf

/// Envoy's `CheckRequest` as the request it describes, and the answer for it as a `CheckResponse`.
///
/// Read from `attributes.request.http`: the method, `path` (the target as on the request line),
/// `host`, the fields (`header_map` when Envoy sends raw headers, else `headers`, pseudo-fields
/// left out), the body (`raw_body` with `pack_as_bytes`, else `body`); and the client from
/// `attributes.source.address`. A body is announced by `Content-Digest`, `Content-Length`,
/// `Transfer-Encoding` or `size`; it is withheld when none came, when Envoy says it cut it
/// (`x-envoy-auth-partial-body: true`), or when it is shorter than its announced length.
package struct EnvoyCheck: Sendable {
    package var head: HTTPRequest
    package var body: ByteBuffer
    package var client: String?
    package var bodyWithheld: Bool
    package var bodyByteCount: Int { body.readableBytes }
    /// The names of the fields the client sent, before Envoy's and the forwarding ones were taken
    /// out: what the answer removes of them is decided on these.
    package var sentNames: [String]

    /// A `CheckRequest` as it came over the wire (the fuzz target's way in).
    ///
    /// - Throws: swift-protobuf's error for bytes that are no `CheckRequest`, else as ``init(_:)``.
    package init(checkBytes: [UInt8]) throws {
        try self.init(Envoy_Service_Auth_V3_CheckRequest(serializedBytes: checkBytes))
    }

    /// - Throws: `authorization_request_invalid` for a check that names no method, path or host,
    ///   or a field name HTTP does not allow; `path_ambiguous` for a path that normalises to another.
    init(_ check: Envoy_Service_Auth_V3_CheckRequest) throws {
        let http = check.attributes.request.http
        guard let method = HTTPRequest.Method(http.method) else {
            throw SignetError(.authorizationRequestInvalid, "the check names no method")
        }
        try AuthorizationQuestion.checkTarget(http.path)
        guard RequestTarget.isAuthority(http.host) else {
            throw SignetError(.authorizationRequestInvalid, "the check names no host")
        }
        var lines: [(String, String)] = []
        if http.hasHeaderMap, !http.headerMap.headers.isEmpty {
            lines = http.headerMap.headers.map { ($0.key, $0.rawValue.isEmpty ? $0.value : String(decoding: $0.rawValue, as: UTF8.self)) }
        } else {
            // A map: each field's lines joined by Envoy; sorted so the same check reads the same.
            lines = http.headers.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
        }
        var fields = HTTPFields()
        for (name, value) in lines where !name.hasPrefix(":") && name.lowercased() != "host" {
            guard let fieldName = HTTPField.Name(name) else {
                throw SignetError(.authorizationRequestInvalid, "the check has a field name HTTP does not allow")
            }
            fields.append(HTTPField(name: fieldName, value: value))
        }
        let bytes = http.rawBody.isEmpty ? Array(http.body.utf8) : Array(http.rawBody)
        let partial = AuthorizationQuestion.saysCut(fields)
        let announcedLength = fields[.contentLength].flatMap { Int($0) }
        let announced = fields[.contentDigest] != nil || (announcedLength ?? 0) > 0 || fields[.transferEncoding] != nil || http.size > 0
        bodyWithheld = partial || (announced && bytes.isEmpty) || bytes.count < (announcedLength ?? 0)
        sentNames = fields.map { $0.name.canonicalName.lowercased() }
        fields.removeAll { AuthorizationQuestion.isAsking($0.name) || $0.name == .contentLength || $0.name == .transferEncoding }
        // The body as it came, framed by its length: what the gates read.
        if !bytes.isEmpty { fields[.contentLength] = String(bytes.count) }
        head = HTTPRequest(method: method, scheme: http.scheme.isEmpty ? nil : http.scheme, authority: http.host, path: http.path, headerFields: fields)
        body = ByteBuffer(bytes: bytes)
        let address = check.attributes.source.address.socketAddress.address
        client = address.isEmpty ? nil : address
    }
}
