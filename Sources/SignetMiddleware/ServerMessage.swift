// SPDX-License-Identifier: Apache-2.0
import HTTPTypes
import NIOCore
import SignetCore

/// A request or response as the server holds it — HTTPTypes fields and the body's `ByteBuffer` — as
/// SignetCore reads messages (`HTTPMessageView`), so verifying and signing copy neither.
///
/// The request's target is built from the head once, with the public scheme and authority from
/// configuration when a proxy in front terminates TLS.
public struct ServerMessage: HTTPMessageView {
    public let head: HTTPMessage.Head
    public let fields: HTTPFields
    /// HTTP/1.1 carries the authority as a `Host` line; HTTPTypes moves it into the head. Seen here
    /// as the first field line, so a signature covering `host` sees what was on the wire.
    public let hostLine: String?
    public let body: ByteBuffer

    /// A request; `authority` overrides the request's own `Host` in the target (not in the fields).
    ///
    /// - Throws: `malformed_message` when neither names an authority.
    public init(request: HTTPRequest, body: ByteBuffer, scheme: String, authority: String? = nil) throws {
        guard let host = authority ?? request.authority else {
            throw SignetError(.malformedMessage, "the request has no Host")
        }
        let path = request.path ?? "/"
        let target: RequestTarget
        if path == "*" {
            target = RequestTarget(scheme: scheme, authority: host, path: "", query: nil, form: .asterisk)
        } else if let mark = path.utf8.firstIndex(of: UInt8(ascii: "?")) {
            target = RequestTarget(
                scheme: scheme,
                authority: host,
                path: String(path[..<mark]),
                query: String(path[path.utf8.index(after: mark)...]),
                form: .origin
            )
        } else {
            target = RequestTarget(scheme: scheme, authority: host, path: path, query: nil, form: .origin)
        }
        self.head = .request(method: request.method.rawValue, target: target)
        self.fields = request.headerFields
        self.hostLine = request.authority
        self.body = body
    }

    /// A response.
    public init(status: Int, fields: HTTPFields, body: ByteBuffer) {
        self.head = .response(status: status)
        self.fields = fields
        self.hostLine = nil
        self.body = body
    }

    /// Every line of `name`; `cookie`'s lines as the one line they were split from.
    public func fieldValues(_ name: String) -> [String] {
        var values: [String] = []
        if let hostLine, MessageFields.sameName("host", name) { values.append(hostLine) }
        let canonical = Self.canonical(name)
        for index in fields.indices where fields[index].name.canonicalName == canonical { values.append(fields[index].value) }
        if values.count > 1, MessageFields.sameName("cookie", name) {
            return [values.map(\.trimmingOWS).joined(separator: "; ")]
        }
        return values
    }

    /// RFC 9110 §5.3 combination of `name`'s lines, built without the array of lines
    /// ``fieldValues(_:)`` makes: a signature's two fields and its `Content-Digest` are read so on
    /// every verified request, and nearly always have one line.
    public func combinedField(_ name: String) -> String? {
        if MessageFields.sameName("host", name) || MessageFields.sameName("cookie", name) {
            let lines = fieldValues(name)
            guard !lines.isEmpty else { return nil }
            return lines.count == 1 ? lines[0].trimmingOWS : lines.map(\.trimmingOWS).joined(separator: ", ")
        }
        var combined: String?
        let canonical = Self.canonical(name)
        for index in fields.indices where fields[index].name.canonicalName == canonical {
            let value = fields[index].value.trimmingOWS
            combined = combined.map { $0 + ", " + value } ?? value
        }
        return combined
    }

    public func appendCombinedField(_ name: String, to bytes: inout [UInt8]) -> Bool {
        var found = false
        if let hostLine, MessageFields.sameName("host", name) {
            bytes += hostLine.trimmingOWS.utf8
            found = true
        }
        // Cookie lines are one cookie-string (RFC 6265 §5.4) that HTTP/2 splits (RFC 9113 §8.2.3):
        // joined by `; `, as the upstream receives them, not by `, ` as other fields are.
        let separator = MessageFields.sameName("cookie", name) ? "; " : ", "
        let canonical = Self.canonical(name)
        for index in fields.indices where fields[index].name.canonicalName == canonical {
            if found { bytes += separator.utf8 }
            found = true
            bytes += fields[index].value.trimmingOWS.utf8
        }
        return found
    }

    /// `name` as HTTPTypes keeps every field's canonical name, lowercase, so each field is compared
    /// by `==` — two small strings compared whole, nothing copied or retained — where a
    /// case-insensitive walk per field was a verify's largest cost among its field lookups. Callers
    /// nearly always pass a lowercase name already (component identifiers are lowercase).
    private static func canonical(_ name: String) -> String {
        name.utf8.contains(where: { $0 >= 0x41 && $0 <= 0x5A }) ? name.lowercased() : name
    }

    public var bodyByteCount: Int { body.readableBytes }

    public func withBodyBytes<Result>(_ use: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        try body.withUnsafeReadableBytes(use)
    }
}
