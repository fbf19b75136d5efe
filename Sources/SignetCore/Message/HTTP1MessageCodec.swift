// SPDX-License-Identifier: Apache-2.0

/// Reads and writes HTTP/1.1 message text: the file format of `signet sign` and `signet verify`.
///
/// A request starts with its request line (origin-form with a `Host` field, or absolute-form), a
/// response with its status line; then field lines, an empty line and the body. CRLF and LF line
/// ends are both accepted. Obsolete line folding is replaced by one space (RFC 9112 §5.2).
public struct HTTP1MessageCodec: Sendable {
    /// Most bytes accepted before the empty line that ends the header section.
    public var maximumHeaderBytes = 64 * 1024
    /// Most field lines accepted.
    public var maximumFieldLines = 256
    /// Most body bytes accepted.
    public var maximumBodyBytes = 16 * 1024 * 1024
    /// The scheme given to origin-form requests, which do not carry one.
    public var defaultScheme = "https"

    public init() {}

    public func decode(_ bytes: [UInt8]) throws -> HTTPMessage {
        let (headerEnd, bodyStart) = try locateHeaderEnd(bytes)
        guard headerEnd <= maximumHeaderBytes else {
            throw SignetError(.headerTooLarge, "header section exceeds \(maximumHeaderBytes) bytes")
        }
        // Split bytes, not Characters: Swift treats "\r\n" as one Character.
        var lines = bytes[..<headerEnd].split(separator: 0x0A, omittingEmptySubsequences: false).map { line in
            String(decoding: line.last == 0x0D ? line.dropLast() : line, as: UTF8.self)
        }
        guard !lines.isEmpty, !lines[0].isEmpty else { throw SignetError(.malformedMessage, "missing start line") }
        let startLine = lines.removeFirst()
        let fields = try decodeFields(lines)
        guard bytes.count - bodyStart <= maximumBodyBytes else {
            throw SignetError(.bodyTooLarge, "body exceeds \(maximumBodyBytes) bytes")
        }
        var body = Array(bytes[bodyStart...])
        if let length = fields["content-length"] {
            guard let expected = Int(length), expected >= 0 else {
                throw SignetError(.malformedMessage, "invalid Content-Length \(length.debugDescription)")
            }
            // Editors add a final newline after a body; drop it when Content-Length says so.
            while body.count > expected, body.last == 0x0A || body.last == 0x0D { body.removeLast() }
            guard body.count == expected else {
                throw SignetError(.malformedMessage, "body has \(body.count) bytes, Content-Length says \(expected)")
            }
        }
        return HTTPMessage(head: try decodeHead(startLine, fields: fields), fields: fields, body: body)
    }

    public func encode(_ message: HTTPMessage, lineEnding: String = "\r\n") -> [UInt8] {
        var text: String
        switch message.head {
        case .request(let method, let target):
            text = "\(method) \(target.requestTargetValue) HTTP/1.1" + lineEnding
            if target.form != .absolute, !message.fields.contains("host") {
                text += "Host: \(target.authority)" + lineEnding
            }
        case .response(let status):
            text = "HTTP/1.1 \(status) \(Self.reasonPhrase(status))" + lineEnding
        }
        for field in message.fields { text += "\(field.name): \(field.value)" + lineEnding }
        text += lineEnding
        return Array(text.utf8) + message.body
    }

    // MARK: Parts

    private func locateHeaderEnd(_ bytes: [UInt8]) throws -> (headerEnd: Int, bodyStart: Int) {
        var index = 0
        let limit = min(bytes.count, maximumHeaderBytes + 4)
        while index < limit {
            if bytes[index] == 0x0A {
                if index + 1 < bytes.count, bytes[index + 1] == 0x0A { return (index, index + 2) }
                if index + 2 < bytes.count, bytes[index + 1] == 0x0D, bytes[index + 2] == 0x0A {
                    return (index, index + 3)
                }
            }
            index += 1
        }
        if bytes.count > maximumHeaderBytes {
            throw SignetError(.headerTooLarge, "header section exceeds \(maximumHeaderBytes) bytes")
        }
        // No empty line: a message with no body, possibly without a final newline.
        var end = bytes.count
        while end > 0, bytes[end - 1] == 0x0A || bytes[end - 1] == 0x0D { end -= 1 }
        return (end, bytes.count)
    }

    private func decodeFields(_ lines: [String]) throws -> MessageFields {
        var fields: [MessageFields.Field] = []
        for line in lines {
            if line.first == " " || line.first == "\t" {
                guard !fields.isEmpty else {
                    throw SignetError(.malformedMessage, "continuation line before any field")
                }
                // obs-fold: the fold and surrounding whitespace become one SP (none at either end:
                // folded onto an empty value, or an empty continuation, adds no space to trim later).
                let folded = [fields[fields.count - 1].value.trimmingOWS, line.trimmingOWS].filter { !$0.isEmpty }
                fields[fields.count - 1].value = folded.joined(separator: " ")
                continue
            }
            guard let colon = line.firstIndex(of: ":") else {
                throw SignetError(.malformedMessage, "field line without ':': \(line.debugDescription)")
            }
            let name = String(line[..<colon])
            guard !name.isEmpty, name.utf8.allSatisfy(\.isTChar) else {
                throw SignetError(.malformedMessage, "invalid field name \(name.debugDescription)")
            }
            fields.append(.init(name: name, value: String(line[line.index(after: colon)...]).trimmingOWS))
            guard fields.count <= maximumFieldLines else {
                throw SignetError(.headerTooLarge, "more than \(maximumFieldLines) field lines")
            }
        }
        return MessageFields(fields)
    }

    private func decodeHead(_ line: String, fields: MessageFields) throws -> HTTPMessage.Head {
        let parts = line.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false).map(String.init)
        if parts[0].hasPrefix("HTTP/") {
            // Three digits, 100 to 599 (RFC 9112 §4, RFC 9110 §15): `Int` alone would take "+20",
            // "-01" and "043", which would be written back as another status line.
            guard parts.count >= 2, parts[1].utf8.count == 3, parts[1].utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
                let status = Int(parts[1]), (100...599).contains(status)
            else {
                throw SignetError(.malformedMessage, "invalid status line \(line.debugDescription)")
            }
            return .response(status: status)
        }
        guard parts.count == 3, parts[2].hasPrefix("HTTP/"), !parts[0].isEmpty, parts[0].utf8.allSatisfy(\.isTChar)
        else { throw SignetError(.malformedMessage, "invalid request line \(line.debugDescription)") }
        let target = try RequestTarget(requestTarget: parts[1], host: fields["host"], scheme: defaultScheme)
        // RFC 9112 §3.2: every HTTP/1.1 request has a Host field, and only CONNECT names just an authority.
        guard target.form == .absolute || fields.contains("host") else {
            throw SignetError(.malformedMessage, "request has no Host field")
        }
        guard (target.form == .authority) == (parts[0] == "CONNECT") else {
            throw SignetError(.malformedMessage, "invalid request target \(parts[1].debugDescription) for \(parts[0])")
        }
        return .request(method: parts[0], target: target)
    }

    static func reasonPhrase(_ status: Int) -> String {
        switch status {
        case 200: "OK"
        case 201: "Created"
        case 204: "No Content"
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 500: "Internal Server Error"
        case 503: "Service Unavailable"
        default: ""
        }
    }
}
