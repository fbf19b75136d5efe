// SPDX-License-Identifier: Apache-2.0

/// A challenge (`WWW-Authenticate`) or credentials (`Authorization`) as RFC 9110 §11 writes both:
/// an auth scheme followed by a token68 or by a list of auth-params.
///
/// The parser is bounded (``maximumBytes``, ``maximumParameters``), refuses a parameter given twice
/// (two `response=` or two `uri=` could be read differently by two parties) and control characters,
/// and keeps parameter names lowercased.
public struct HTTPAuthentication: Sendable, Hashable {
    /// The scheme, as sent (`Digest`, `Basic`); compare it case-insensitively (``isScheme(_:)``).
    public var scheme: String
    /// The token68 form (`Basic QWxh…`), when the scheme uses it.
    public var token68: String?
    /// The auth-params in order, names lowercased, values unquoted.
    public var parameters: [(name: String, value: String)]

    public static let maximumBytes = 8 * 1024
    public static let maximumParameters = 32

    public init(scheme: String, token68: String? = nil, parameters: [(name: String, value: String)] = []) {
        self.scheme = scheme
        self.token68 = token68
        self.parameters = parameters
    }

    /// The value of parameter `name` (lowercase).
    public subscript(name: String) -> String? {
        parameters.first { $0.name == name }?.value
    }

    public func isScheme(_ name: String) -> Bool { scheme.lowercased() == name.lowercased() }

    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.scheme == rhs.scheme && lhs.token68 == rhs.token68
            && lhs.parameters.map(\.name) == rhs.parameters.map(\.name)
            && lhs.parameters.map(\.value) == rhs.parameters.map(\.value)
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(scheme)
        hasher.combine(token68)
        for parameter in parameters {
            hasher.combine(parameter.name)
            hasher.combine(parameter.value)
        }
    }

    // MARK: Parsing

    /// The credentials of one `Authorization` field value.
    ///
    /// - Throws: `malformed_header` for anything but exactly one scheme with its token68 or params.
    public init(credentials value: String) throws {
        let all = try Self.parseList(value)
        guard all.count == 1 else {
            throw SignetError(.malformedHeader, "Authorization carries \(all.count) credentials, not one")
        }
        self = all[0]
    }

    /// Every challenge in the `WWW-Authenticate` field values, in order (a value may hold several,
    /// `Digest realm="a", nonce="b", Basic realm="a"`).
    public static func challenges(_ values: [String]) throws -> [HTTPAuthentication] {
        try values.flatMap { try parseList($0) }
    }

    static func parseList(_ value: String) throws -> [HTTPAuthentication] {
        let bytes = Array(value.utf8)
        guard bytes.count <= maximumBytes else {
            throw SignetError(.malformedHeader, "the authentication field is over \(maximumBytes) bytes")
        }
        var parser = Parser(bytes: bytes)
        return try parser.list()
    }

    private struct Parser {
        let bytes: [UInt8]
        var index = 0

        init(bytes: [UInt8]) {
            self.bytes = bytes
        }

        var atEnd: Bool { index >= bytes.count }
        var current: UInt8? { atEnd ? nil : bytes[index] }

        mutating func skipWhitespace() {
            while let byte = current, byte == 0x20 || byte == 0x09 { index += 1 }
        }

        /// `#challenge`: elements separated by commas, empty elements allowed (RFC 9110 §5.6.1).
        mutating func list() throws -> [HTTPAuthentication] {
            var items: [HTTPAuthentication] = []
            var pending: HTTPAuthentication?
            var parameterCount = 0
            while true {
                skipWhitespace()
                while current == UInt8(ascii: ",") {
                    index += 1
                    skipWhitespace()
                }
                if atEnd { break }
                // A token followed by `=` continues the current item's params; otherwise a new scheme.
                let name = try token()
                let afterName = index
                skipWhitespace()
                if current == UInt8(ascii: "="), var item = pending, item.token68 == nil {
                    index += 1
                    skipWhitespace()
                    let value = try parameterValue()
                    let lowered = name.lowercased()
                    guard item[lowered] == nil else {
                        throw SignetError(.malformedHeader, "the parameter \(lowered) is given twice")
                    }
                    parameterCount += 1
                    guard parameterCount <= HTTPAuthentication.maximumParameters else {
                        throw SignetError(.malformedHeader, "more than \(HTTPAuthentication.maximumParameters) parameters")
                    }
                    item.parameters.append((lowered, value))
                    pending = item
                    try endOfElement()
                    continue
                }
                index = afterName
                if let item = pending { items.append(item) }
                var item = HTTPAuthentication(scheme: name)
                // The scheme stands alone, or is followed by 1*SP and a token68 or its first param.
                if atEnd || current == UInt8(ascii: ",") {
                    pending = item
                    continue
                }
                guard current == 0x20 else { throw SignetError(.malformedHeader, "expected a space after \(name)") }
                skipWhitespace()
                if let token68 = token68() {
                    item.token68 = token68
                    pending = item
                    try endOfElement()
                    continue
                }
                pending = item
            }
            if let item = pending { items.append(item) }
            guard !items.isEmpty else { throw SignetError(.malformedHeader, "no authentication scheme") }
            return items
        }

        /// After an element: optional whitespace, then a comma or the end.
        mutating func endOfElement() throws {
            skipWhitespace()
            guard atEnd || current == UInt8(ascii: ",") else {
                throw SignetError(.malformedHeader, "unexpected character in the authentication field")
            }
        }

        mutating func token() throws -> String {
            let start = index
            while let byte = current, Self.isTokenCharacter(byte) { index += 1 }
            guard index > start else { throw SignetError(.malformedHeader, "expected a token") }
            return String(decoding: bytes[start..<index], as: UTF8.self)
        }

        /// `token68 = 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"="`, only when what
        /// follows ends the element (else it is the name of an auth-param).
        mutating func token68() -> String? {
            let start = index
            var end = index
            while end < bytes.count, Self.isToken68Character(bytes[end]) { end += 1 }
            guard end > start else { return nil }
            while end < bytes.count, bytes[end] == UInt8(ascii: "=") { end += 1 }
            var after = end
            while after < bytes.count, bytes[after] == 0x20 || bytes[after] == 0x09 { after += 1 }
            guard after == bytes.count || bytes[after] == UInt8(ascii: ",") else { return nil }
            // `x=` with nothing after it cannot be an auth-param (a param needs a value): a token68.
            index = end
            return String(decoding: bytes[start..<end], as: UTF8.self)
        }

        mutating func parameterValue() throws -> String {
            if current == UInt8(ascii: "\"") { return try quotedString() }
            return try token()
        }

        mutating func quotedString() throws -> String {
            index += 1
            var value: [UInt8] = []
            while let byte = current {
                index += 1
                switch byte {
                case UInt8(ascii: "\""):
                    guard let text = String(strictUTF8: value) else {
                        throw SignetError(.malformedHeader, "a quoted value is not UTF-8")
                    }
                    return text
                case UInt8(ascii: "\\"):
                    guard let escaped = current, escaped == 0x09 || escaped >= 0x20, escaped != 0x7F else {
                        throw SignetError(.malformedHeader, "a bad escape in a quoted value")
                    }
                    value.append(escaped)
                    index += 1
                case 0x09, 0x20...0x7E, 0x80...0xFF:
                    value.append(byte)
                default:
                    throw SignetError(.malformedHeader, "a control character in a quoted value")
                }
            }
            throw SignetError(.malformedHeader, "an unterminated quoted value")
        }

        /// RFC 9110 §5.6.2 tchar.
        static func isTokenCharacter(_ byte: UInt8) -> Bool {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "A")...UInt8(ascii: "Z"):
                true
            default: "!#$%&'*+-.^_`|~".utf8.contains(byte)
            }
        }

        static func isToken68Character(_ byte: UInt8) -> Bool {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "A")...UInt8(ascii: "Z"):
                true
            default: "-._~+/".utf8.contains(byte)
            }
        }
    }

    // MARK: Writing

    /// A parameter to write: quoted (`realm="x"`) or as a bare token (`algorithm=SHA-256`).
    public struct Parameter: Sendable {
        public var name: String
        public var value: String
        public var quoted: Bool

        public init(_ name: String, _ value: String, quoted: Bool = true) {
            self.name = name
            self.value = value
            self.quoted = quoted
        }
    }

    /// `Scheme name="value", name=token`: a field value, with `"` and `\` escaped in quoted values.
    public static func fieldValue(scheme: String, _ parameters: [Parameter]) -> String {
        scheme + " " + list(parameters)
    }

    /// `name="value", name=token` (as `Authentication-Info` carries it, with no scheme).
    public static func list(_ parameters: [Parameter]) -> String {
        parameters.map { parameter in
            guard parameter.quoted else { return parameter.name + "=" + parameter.value }
            // By scalar, not Character: a quote followed by a combining mark is one Character.
            var escaped = String.UnicodeScalarView()
            for scalar in parameter.value.unicodeScalars {
                if scalar == "\"" || scalar == "\\" { escaped.append("\\") }
                escaped.append(scalar)
            }
            return parameter.name + "=\"" + String(escaped) + "\""
        }.joined(separator: ", ")
    }
}
