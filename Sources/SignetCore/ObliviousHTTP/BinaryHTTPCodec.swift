// SPDX-License-Identifier: Apache-2.0

extension BinaryHTTPMessage {
    private enum Framing: UInt64 {
        case knownLengthRequest = 0
        case knownLengthResponse = 1
        case indeterminateLengthRequest = 2
        case indeterminateLengthResponse = 3

        var isRequest: Bool { self == .knownLengthRequest || self == .indeterminateLengthRequest }
        var isKnownLength: Bool { self == .knownLengthRequest || self == .knownLengthResponse }
    }

    /// Decodes a Binary HTTP message, either framing.
    ///
    /// - Throws: `malformed_message` naming what is wrong; `header_too_large` past the limits.
    public init(decoding bytes: [UInt8], limits: Limits = .standard) throws {
        var reader = ByteReader(bytes)
        guard let framing = Framing(rawValue: try reader.varint()) else {
            throw SignetError(.malformedMessage, "unknown Binary HTTP framing indicator")
        }
        var decoder = Decoder(reader: reader, limits: limits, knownLength: framing.isKnownLength)
        let head: Head
        var informational: [InformationalResponse] = []
        if framing.isRequest {
            head = try decoder.requestControlData()
        } else {
            while true {
                let status = try decoder.reader.varint()
                if (100...199).contains(status) {
                    guard informational.count < limits.maximumInformationalResponses else {
                        throw SignetError(.malformedMessage, "more than \(limits.maximumInformationalResponses) interim responses")
                    }
                    informational.append(InformationalResponse(status: Int(status), fields: try decoder.fieldSection()))
                } else if (200...599).contains(status) {
                    head = .response(status: Int(status))
                    break
                } else {
                    throw SignetError(.malformedMessage, "status \(status) is not an HTTP status")
                }
            }
        }
        // A message may end after any section; what is left out is empty (RFC 9292 §3.8).
        let fields = decoder.reader.isAtEnd ? [] : try decoder.fieldSection()
        let content = decoder.reader.isAtEnd ? [] : try decoder.content()
        let trailers = decoder.reader.isAtEnd ? [] : try decoder.fieldSection()
        // Padding: zeros only.
        while !decoder.reader.isAtEnd {
            guard try decoder.reader.byte() == 0 else {
                throw SignetError(.malformedMessage, "bytes after the trailer section that are not padding")
            }
        }
        self.init(head: head, informational: informational, fields: fields, content: content, trailers: trailers)
    }

    /// The known-length encoding. Trailing empty sections are left out (RFC 9292 §3.8) unless
    /// `truncatingEmptySections` is `false`.
    public func encoded(truncatingEmptySections: Bool = true) -> [UInt8] {
        var bytes: [UInt8] = []
        switch head {
        case .request(let method, let scheme, let authority, let path):
            QUICVarint.append(Framing.knownLengthRequest.rawValue, to: &bytes)
            for text in [method, scheme, authority, path] { Self.appendPrefixed(Array(text.utf8), to: &bytes) }
        case .response(let status):
            QUICVarint.append(Framing.knownLengthResponse.rawValue, to: &bytes)
            for interim in informational {
                QUICVarint.append(UInt64(interim.status), to: &bytes)
                Self.appendFieldSection(interim.fields, to: &bytes)
            }
            QUICVarint.append(UInt64(status), to: &bytes)
        }
        let keep = truncatingEmptySections
            ? (!trailers.isEmpty ? 3 : !content.isEmpty ? 2 : !fields.isEmpty ? 1 : 0)
            : 3
        if keep >= 1 { Self.appendFieldSection(fields, to: &bytes) }
        if keep >= 2 { Self.appendPrefixed(content, to: &bytes) }
        if keep >= 3 { Self.appendFieldSection(trailers, to: &bytes) }
        return bytes
    }

    private static func appendPrefixed(_ value: [UInt8], to bytes: inout [UInt8]) {
        QUICVarint.append(UInt64(value.count), to: &bytes)
        bytes += value
    }

    private static func appendFieldSection(_ fields: [Field], to bytes: inout [UInt8]) {
        var section: [UInt8] = []
        for field in fields {
            appendPrefixed(Array(field.name.utf8), to: &section)
            appendPrefixed(Array(field.value.utf8), to: &section)
        }
        appendPrefixed(section, to: &bytes)
    }

    /// The decoding state: where in the bytes, and how many field lines so far.
    private struct Decoder {
        var reader: ByteReader
        let limits: Limits
        let knownLength: Bool
        var fieldCount = 0

        mutating func requestControlData() throws -> Head {
            let method = try text(allowed: Self.isTokenByte, what: "method")
            let scheme = try text(allowed: { Self.isTokenByte($0) }, what: "scheme")
            let authority = try text(allowed: Self.isTargetByte, what: "authority", allowEmpty: true)
            let path = try text(allowed: Self.isTargetByte, what: "path", allowEmpty: true)
            guard !method.isEmpty, !scheme.isEmpty else {
                throw SignetError(.malformedMessage, "a request needs a method and a scheme")
            }
            guard path.isEmpty || path.hasPrefix("/") || path == "*" else {
                throw SignetError(.malformedMessage, "the path must start with / or be *")
            }
            return .request(method: method, scheme: scheme, authority: authority, path: path)
        }

        mutating func fieldSection() throws -> [Field] {
            if knownLength {
                let section = try reader.lengthPrefixed(limit: limits.maximumFieldSectionBytes)
                var inner = ByteReader(Array(section))
                var fields: [Field] = []
                while !inner.isAtEnd {
                    try countField()
                    fields.append(try Self.field(&inner, nameLength: try inner.varint(), limits: limits))
                }
                return fields
            }
            var fields: [Field] = []
            let start = reader.offset
            while true {
                let nameLength = try reader.varint()
                if nameLength == 0 { return fields }
                try countField()
                fields.append(try Self.field(&reader, nameLength: nameLength, limits: limits))
                guard reader.offset - start <= limits.maximumFieldSectionBytes else {
                    throw SignetError(.headerTooLarge, "a field section exceeds \(limits.maximumFieldSectionBytes) bytes")
                }
            }
        }

        private mutating func countField() throws {
            fieldCount += 1
            guard fieldCount <= limits.maximumFieldCount else {
                throw SignetError(.headerTooLarge, "more than \(limits.maximumFieldCount) field lines")
            }
        }

        private static func field(_ source: inout ByteReader, nameLength: UInt64, limits: Limits) throws -> Field {
            guard nameLength > 0, nameLength <= UInt64(limits.maximumFieldSectionBytes) else {
                throw SignetError(.malformedMessage, "a field name is empty or too long")
            }
            let name = try source.take(Int(nameLength))
            guard name.allSatisfy(Self.isTokenByte) else {
                throw SignetError(.malformedMessage, "a field name is not a token")
            }
            let value = try source.lengthPrefixed(limit: limits.maximumFieldSectionBytes)
            guard !value.contains(where: { $0 == 0 || $0 == 0x0A || $0 == 0x0D }),
                let text = String(strictUTF8: value)
            else {
                throw SignetError(.malformedMessage, "a field value holds CR, LF, NUL or bytes that are not UTF-8")
            }
            return Field(String(decoding: name, as: UTF8.self), text)
        }

        mutating func content() throws -> [UInt8] {
            if knownLength { return Array(try reader.lengthPrefixed(limit: reader.remaining)) }
            var content: [UInt8] = []
            while true {
                let chunk = try reader.lengthPrefixed(limit: reader.remaining)
                if chunk.isEmpty { return content }
                content += chunk
            }
        }

        private mutating func text(
            allowed: (UInt8) -> Bool,
            what: String,
            allowEmpty: Bool = false
        ) throws -> String {
            let bytes = try reader.lengthPrefixed(limit: limits.maximumControlDataBytes)
            guard bytes.allSatisfy(allowed) else {
                throw SignetError(.malformedMessage, "the \(what) holds characters it may not")
            }
            return String(decoding: bytes, as: UTF8.self)
        }

        /// RFC 9110 §5.6.2 tchar.
        static func isTokenByte(_ byte: UInt8) -> Bool {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"):
                true
            default:
                Array("!#$%&'*+-.^_`|~".utf8).contains(byte)
            }
        }

        /// Visible ASCII: no space, no control characters, nothing that could split a request line.
        static func isTargetByte(_ byte: UInt8) -> Bool { (0x21...0x7E).contains(byte) }
    }
}
