// SPDX-License-Identifier: Apache-2.0

/// The `Authorization: Digest …` credentials of one request (RFC 7616 §3.4), checked for shape:
/// every parameter a `qop` exchange needs is present once, `nc` is eight hex digits, `response`
/// has the algorithm's length.
///
/// Whether they are right — the nonce, the user, the response — is the server's to check.
public struct DigestCredentials: Sendable, Hashable {
    /// The user name, or its `userhash` when ``userhash`` is set. `username*` (RFC 8187) is decoded.
    public var username: String
    public var userhash: Bool
    public var realm: String
    public var nonce: String
    /// The request target the client computed the response over.
    public var uri: String
    /// Lowercase hex.
    public var response: String
    public var algorithm: DigestAlgorithm
    public var qop: DigestResponse.QualityOfProtection
    /// The nonce count as sent (eight hex digits), which the response covers.
    public var nc: String
    /// ``nc`` as a number: `00000001` and `1` are one count.
    public var count: UInt32
    public var cnonce: String
    public var opaque: String?

    /// Longest `cnonce` and `nonce` accepted; real clients send 16 to 64 characters.
    public static let maximumNonceBytes = 256

    /// - Throws: `malformed_header` for a missing, repeated or malformed parameter, or another
    ///   scheme; `alg_unsupported` for an algorithm that is not SHA-256, SHA-512-256 or MD5 (the
    ///   `-sess` variants included).
    public init(_ authentication: HTTPAuthentication) throws {
        guard authentication.isScheme("Digest"), authentication.token68 == nil else {
            throw SignetError(.malformedHeader, "not Digest credentials")
        }
        func required(_ name: String) throws -> String {
            guard let value = authentication[name] else {
                throw SignetError(.malformedHeader, "the Digest credentials have no \(name)")
            }
            return value
        }
        guard let algorithm = DigestAlgorithm(parameter: authentication["algorithm"]) else {
            throw SignetError(.algUnsupported, "the Digest algorithm \(authentication["algorithm"] ?? "") is not offered")
        }
        self.algorithm = algorithm
        switch authentication["userhash"]?.lowercased() {
        case nil, "false": userhash = false
        case "true": userhash = true
        default: throw SignetError(.malformedHeader, "userhash is true or false")
        }
        switch (authentication["username"], authentication["username*"]) {
        case (let name?, nil):
            username = name
        case (nil, let extended?):
            guard !userhash, let decoded = Self.extendedValue(extended) else {
                throw SignetError(.malformedHeader, "username* is UTF-8''<percent-encoded>, and never with userhash")
            }
            username = decoded
        default:
            throw SignetError(.malformedHeader, "the Digest credentials carry username or username*, exactly one")
        }
        realm = try required("realm")
        nonce = try required("nonce")
        uri = try required("uri")
        cnonce = try required("cnonce")
        opaque = authentication["opaque"]
        guard let qop = DigestResponse.QualityOfProtection(rawValue: try required("qop").lowercased()) else {
            throw SignetError(.malformedHeader, "qop is auth or auth-int")
        }
        self.qop = qop
        nc = try required("nc")
        guard nc.utf8.count == 8, let count = UInt32(nc, radix: 16), nc.utf8.allSatisfy({ Hex.isDigit($0) }) else {
            throw SignetError(.malformedHeader, "nc is eight hex digits")
        }
        self.count = count
        let response = try required("response")
        guard response.utf8.count == algorithm.hexLength, response.utf8.allSatisfy({ Hex.isDigit($0) }) else {
            throw SignetError(.malformedHeader, "response is \(algorithm.hexLength) hex digits for \(algorithm.rawValue)")
        }
        self.response = response.lowercased()
        guard !nonce.isEmpty, !cnonce.isEmpty, nonce.utf8.count <= Self.maximumNonceBytes,
            cnonce.utf8.count <= Self.maximumNonceBytes
        else { throw SignetError(.malformedHeader, "nonce and cnonce are 1 to \(Self.maximumNonceBytes) bytes") }
    }

    /// The credentials answering `challenge` for one request: `nc` and `cnonce` are the caller's
    /// (the count of requests made with this nonce, and fresh randomness); the name is sent as its
    /// `userhash` when the challenge offers it and `useUserhash` is set.
    public init(
        answering challenge: DigestChallenge,
        username: String,
        password: String,
        method: String,
        uri: String,
        body: [UInt8] = [],
        qop: DigestResponse.QualityOfProtection,
        count: UInt32,
        cnonce: String,
        useUserhash: Bool = true
    ) {
        let algorithm = challenge.algorithm
        let ha1 = DigestResponse.ha1(username: username, realm: challenge.realm, password: password, algorithm: algorithm)
        let nc = String(count, radix: 16)
        self.nc = String(repeating: "0", count: max(0, 8 - nc.count)) + nc
        self.count = count
        self.userhash = useUserhash && challenge.userhash
        self.username =
            userhash ? DigestResponse.userhash(username: username, realm: challenge.realm, algorithm: algorithm) : username
        self.realm = challenge.realm
        self.nonce = challenge.nonce
        self.uri = uri
        self.algorithm = algorithm
        self.qop = qop
        self.cnonce = cnonce
        self.opaque = challenge.opaque
        self.response = DigestResponse.response(
            ha1: ha1,
            nonce: challenge.nonce,
            nc: self.nc,
            cnonce: cnonce,
            qop: qop,
            method: method,
            uri: uri,
            body: body,
            algorithm: algorithm
        )
    }

    /// The `Authorization` field value. A name that a quoted string cannot carry as it is (outside
    /// printable ASCII) goes as `username*` (RFC 8187).
    public var fieldValue: String {
        var parameters: [HTTPAuthentication.Parameter] = []
        if !userhash, username.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value > 0x7E }) {
            parameters.append(.init("username*", "UTF-8''" + Self.percentEncoded(username), quoted: false))
        } else {
            parameters.append(.init("username", username))
        }
        parameters += [
            .init("realm", realm), .init("uri", uri), .init("algorithm", algorithm.rawValue, quoted: false),
            .init("nonce", nonce), .init("nc", nc, quoted: false), .init("cnonce", cnonce),
            .init("qop", qop.rawValue, quoted: false), .init("response", response),
        ]
        if let opaque { parameters.append(.init("opaque", opaque)) }
        if userhash { parameters.append(.init("userhash", "true", quoted: false)) }
        return HTTPAuthentication.fieldValue(scheme: "Digest", parameters)
    }

    /// RFC 8187 `attr-char`s as they are, every other byte of the UTF-8 as `%XX`.
    static func percentEncoded(_ text: String) -> String {
        FormURLEncoding.percentEncode(text.utf8) { byte in
            (byte >= 0x30 && byte <= 0x39) || (byte | 0x20 >= 0x61 && byte | 0x20 <= 0x7A) || "!#$&+-.^_`|~".utf8.contains(byte)
        }
    }

    /// RFC 8187 `ext-value`: `UTF-8'[language]'<percent-encoded UTF-8>`; `nil` for another charset
    /// or a bad escape.
    static func extendedValue(_ text: String) -> String? {
        let parts = text.split(separator: "'", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].lowercased() == "utf-8" else { return nil }
        var bytes: [UInt8] = []
        var iterator = Array(parts[2].utf8).makeIterator()
        while let byte = iterator.next() {
            if byte == UInt8(ascii: "%") {
                guard let high = iterator.next().flatMap(FormURLEncoding.hexValue),
                    let low = iterator.next().flatMap(FormURLEncoding.hexValue)
                else { return nil }
                bytes.append(high << 4 | low)
            } else {
                bytes.append(byte)
            }
        }
        return String(strictUTF8: bytes)
    }
}
