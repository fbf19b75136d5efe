// SPDX-License-Identifier: Apache-2.0
import Crypto
import Foundation
import Testing

@testable import SignetCore

/// HTTP Digest (RFC 7616) and Basic (RFC 7617): the RFCs' own examples (`rfc7616-digest.json`,
/// with erratum 4897 for §3.9.2), then the parsers' refusals.
@Suite struct DigestAuthenticationTests {
    let vectors: [[String: Any]]
    let basicVectors: [[String: Any]]

    init() throws {
        let file = try Vectors.json("rfc7616-digest.json")
        vectors = try file.objects("vectors")
        basicVectors = try file.objects("basic_vectors")
    }

    @Test func everyDigestExampleIsReproducedFromItsInputs() throws {
        #expect(vectors.count == 4)
        for vector in vectors {
            let id = try vector.string("id")
            let algorithm = try #require(DigestAlgorithm(parameter: try vector.string("algorithm")), "\(id)")
            let username = try vector.string("username")
            let realm = try vector.string("realm")
            let ha1 = DigestResponse.ha1(username: username, realm: realm, password: try vector.string("password"), algorithm: algorithm)
            let response = DigestResponse.response(
                ha1: ha1,
                nonce: try vector.string("nonce"),
                nc: try vector.string("nc"),
                cnonce: try vector.string("cnonce"),
                qop: try #require(.init(rawValue: try vector.string("qop"))),
                method: try vector.string("method"),
                uri: try vector.string("uri"),
                algorithm: algorithm
            )
            #expect(response == (try vector.string("expected_response")), "\(id)")
            if let userhash = vector["expected_userhash"] as? String {
                #expect(DigestResponse.userhash(username: username, realm: realm, algorithm: algorithm) == userhash, "\(id)")
            }
        }
    }

    @Test func theRFCsAuthorizationFieldsParseIntoTheirParameters() throws {
        for vector in vectors {
            guard let field = vector["authorization"] as? String else { continue }
            let credentials = try DigestCredentials(HTTPAuthentication(credentials: field))
            #expect(credentials.username == (try vector.string("username")))
            #expect(credentials.uri == (try vector.string("uri")))
            #expect(credentials.nonce == (try vector.string("nonce")))
            #expect(credentials.cnonce == (try vector.string("cnonce")))
            #expect(credentials.count == 1 && credentials.nc == "00000001")
            #expect(credentials.response == (try vector.string("expected_response")))
            #expect(credentials.algorithm.rawValue == (try vector.string("algorithm")))
        }
    }

    @Test func theRFCsChallengesParseWithTheirQuotedCommaLists() throws {
        let challenge = try vectors[1].string("challenge")
        let parsed = try DigestChallenge(#require(HTTPAuthentication.challenges([challenge]).first))
        #expect(parsed.algorithm == .sha256)
        #expect(parsed.qop == [.auth, .authInt])
        #expect(parsed.realm == "http-auth@example.org")
        // RFC 7616 §3.9.1 sends both challenges; one field value may carry both, and a Basic one.
        let both = try HTTPAuthentication.challenges([challenge + ", " + (try vectors[0].string("challenge")) + ", Basic realm=\"x\""])
        #expect(both.map(\.scheme) == ["Digest", "Digest", "Basic"])
        #expect(try DigestChallenge(both[1]).algorithm == .md5)
    }

    @Test func section392UsesRealSHA512_256AndTheExtendedUserName() throws {
        let vector = try #require(vectors.first { ($0["id"] as? String)?.contains("3.9.2") == true })
        // The RFC's printed values come from SHA-512 truncated, not SHA-512/256 (erratum 4897).
        let printed = try vector.string("rfc_printed_userhash_WRONG")
        let truncated = Hex.encode(SHA512.hash(data: Array("Jäsøn Doe:api@example.org".utf8))).prefix(64)
        #expect(String(truncated) == printed)
        #expect(DigestResponse.userhash(username: "Jäsøn Doe", realm: "api@example.org", algorithm: .sha512_256) != printed)
        // username* (RFC 8187) decodes to the same name.
        let extended = try vector.string("username_star_form")
        let field = "Digest \(extended), realm=\"api@example.org\", uri=\"/doe.json\", algorithm=SHA-512-256, "
            + "nonce=\"n\", nc=00000001, cnonce=\"c\", qop=auth, response=\"\(String(repeating: "a", count: 64))\""
        #expect(try DigestCredentials(HTTPAuthentication(credentials: field)).username == "Jäsøn Doe")
    }

    @Test func basicExamplesParseAndWriteBack() throws {
        #expect(basicVectors.count == 2)
        for vector in basicVectors {
            let field = try vector.string("authorization")
            let credentials = try BasicCredentials(HTTPAuthentication(credentials: field))
            #expect(credentials.username == (try vector.string("user")))
            #expect(credentials.password == (try vector.string("password")))
            #expect(credentials.fieldValue == field)
        }
    }

    /// A quote followed by a combining mark is one Swift `Character`: escaping by Character left the
    /// quote bare and the field unreadable. Escaped by scalar, it reads back.
    @Test func aQuoteBeforeACombiningMarkIsEscaped() throws {
        let value = "a\"\u{301}b\\\u{301}"
        let field = HTTPAuthentication.fieldValue(scheme: "Digest", [.init("realm", value)])
        #expect(try HTTPAuthentication(credentials: field)["realm"] == value)
    }

    // MARK: Refusals

    static let zeros: String = String(repeating: "0", count: 64)
    static let good: String =
        "Digest username=\"Mufasa\", realm=\"r\", uri=\"/\", algorithm=SHA-256, nonce=\"n\", nc=00000001, cnonce=\"c\", qop=auth, response=\"\(zeros)\""

    /// Each is ``good`` with one thing changed: (what, field, expected code).
    static let refusals: [(String, String, String)] = {
        let ones: String = String(repeating: "1", count: 64)
        let gs: String = String(repeating: "g", count: 64)
        var rows: [(String, String, String)] = []
        func with(_ old: String, _ new: String) -> String { good.replacingOccurrences(of: old, with: new) }
        rows.append(("a parameter twice", good + ", response=\"\(ones)\"", "malformed_header"))
        rows.append(("no response", with(", response=\"\(zeros)\"", ""), "malformed_header"))
        rows.append(("nc not eight hex digits", with("nc=00000001", "nc=1"), "malformed_header"))
        rows.append(("nc with a sign", with("nc=00000001", "nc=+0000001"), "malformed_header"))
        rows.append(("a short response", with(zeros, "00"), "malformed_header"))
        rows.append(("a non-hex response", with(zeros, gs), "malformed_header"))
        rows.append(("no qop (RFC 2069)", with(", qop=auth", ""), "malformed_header"))
        rows.append(("a -sess algorithm", with("SHA-256", "SHA-256-sess"), "alg_unsupported"))
        rows.append(("an unknown algorithm", with("SHA-256", "SHA-1"), "alg_unsupported"))
        rows.append(("username and username*", good + ", username*=UTF-8''x", "malformed_header"))
        rows.append(("username* in Latin-1", with("username=\"Mufasa\"", "username*=ISO-8859-1''x"), "malformed_header"))
        rows.append(("an unterminated quote", "Digest username=\"Mufasa", "malformed_header"))
        rows.append(("a control character", "Digest username=\"Mu\u{1}fasa\"", "malformed_header"))
        rows.append(("two schemes", good + ", Basic QWxh", "malformed_header"))
        rows.append(("a qop of neither kind", with("qop=auth", "qop=integrity"), "malformed_header"))
        return rows
    }()

    @Test(arguments: refusals)
    func malformedDigestCredentialsAreRefusedWithTheirCode(_ name: String, _ field: String, _ code: String) throws {
        let error = #expect(throws: SignetError.self, "\(name)") {
            try DigestCredentials(HTTPAuthentication(credentials: field))
        }
        #expect(error?.code.rawValue == code, "\(name)")
    }

    @Test func aGoodFieldParsesSoTheRefusalsAboveAreAboutTheirOneChange() throws {
        let credentials = try DigestCredentials(HTTPAuthentication(credentials: Self.good))
        #expect(credentials.algorithm == .sha256 && credentials.qop == .auth)
    }

    @Test func oversizedFieldsAndTooManyParametersAreRefused() {
        let long = "Digest username=\"" + String(repeating: "a", count: HTTPAuthentication.maximumBytes) + "\""
        #expect(throws: SignetError(.malformedHeader, "")) { try HTTPAuthentication(credentials: long) }
        let many = "Digest " + (0...HTTPAuthentication.maximumParameters).map { "p\($0)=x" }.joined(separator: ", ")
        #expect(throws: SignetError(.malformedHeader, "")) { try HTTPAuthentication(credentials: many) }
    }

    @Test(arguments: ["Basic !!!", "Basic " + Base64.encode(Array("no-colon".utf8)), "Basic " + Base64.encode([0x61, 0x3A, 0xFF]),
        "Basic " + Base64.encode(Array("a:b\u{0}c".utf8)), "Bearer abc"])
    func malformedBasicCredentialsAreRefused(_ field: String) {
        #expect(throws: SignetError(.malformedHeader, "")) { try BasicCredentials(HTTPAuthentication(credentials: field)) }
    }

    // MARK: Nonces and stored hashes

    @Test func nonceVerifiesUnderItsSecretAndRealmOnly() throws {
        let secret = SymmetricKey(size: .bits256)
        let issued = Date(timeIntervalSince1970: 1_800_000_000.123)
        let nonce = DigestNonce.mint(secret: secret, realm: "bank", now: issued)
        let checked = try DigestNonce(verifying: nonce.value, secret: secret, realm: "bank")
        #expect(abs(checked.issued.timeIntervalSince(issued)) < 0.001)
        #expect(DigestNonce.mint(secret: secret, realm: "bank", now: issued).value != nonce.value)
        let refusals: [(String, SymmetricKey, String)] = [
            (nonce.value, SymmetricKey(size: .bits256), "bank"),
            (nonce.value, secret, "other"),
            (String(nonce.value.dropLast()) + (nonce.value.last == "A" ? "B" : "A"), secret, "bank"),
            (String(nonce.value.dropLast(4)), secret, "bank"),
            ("not a nonce", secret, "bank"),
        ]
        for (value, key, realm) in refusals {
            #expect(throws: SignetError(.digestNonceInvalid, "")) { try DigestNonce(verifying: value, secret: key, realm: realm) }
        }
    }

    @Test func passwordHashRoundTripsAsAPHCStringAndRefusesOtherPasswords() throws {
        let hash = try PasswordHash(password: "Circle of Life", salt: Array("saltsaltsaltsalt".utf8), iterations: 210_000)
        let stored = hash.description
        #expect(stored.hasPrefix("$pbkdf2-sha256$i=210000$"))
        let read = try PasswordHash(phc: stored)
        #expect(read == hash)
        #expect(read.verify("Circle of Life"))
        #expect(!read.verify("Circle Of Life"))
        // Python's hashlib.pbkdf2_hmac('sha256', b'Circle of Life', b'saltsaltsaltsalt', 210000).
        #expect(Hex.encode(hash.hash) == "7d114711f16fbd93daa08f393b3452a6bc1a8ce6c2e9ddc2aec2fd93bdef6cfa")
    }

    @Test(arguments: ["$pbkdf2-sha256$i=1000$c2FsdA$" + String(repeating: "A", count: 43), "$pbkdf2-sha1$i=600000$c2FsdA$AAAA",
        "pbkdf2-sha256$i=600000$c2FsdA$AAAA", "$pbkdf2-sha256$600000$c2FsdA$" + String(repeating: "A", count: 43), ""])
    func storedHashesOutsideTheFormatAreRefused(_ text: String) {
        #expect(throws: SignetError(.invalidKey, "")) { try PasswordHash(phc: text) }
    }
}
