// SPDX-License-Identifier: Apache-2.0
import Foundation
import Testing

@testable import SignetCore

/// RFC 9651 parsing and serialisation: round trips, strictness and bounds.
@Suite struct StructuredFieldTests {
    @Test(arguments: [
        ("a=1, b=2;x=1;y=2, c=(a b c)", "a=1, b=2;x=1;y=2, c=(a b c)"),
        ("a=1,    b=2;x=1;y=2,   c=(a   b   c)", "a=1, b=2;x=1;y=2, c=(a b c)"),
        ("a, b=?0, c=?1;p", "a, b=?0, c;p"),
        ("d=1.5, e=-0.250, f=123456789012.123", "d=1.5, e=-0.25, f=123456789012.123"),
        ("s=\"q\\\"uo\\\\te\", t=foo/bar:baz, u=*x", "s=\"q\\\"uo\\\\te\", t=foo/bar:baz, u=*x"),
        ("b=:aGVsbG8=:, d=@1659578233, p=%\"f%c3%bc%c3%bc\"", "b=:aGVsbG8=:, d=@1659578233, p=%\"f%c3%bc%c3%bc\""),
        ("x=()", "x=()"),
        ("x=(1 2);p=\"v\"", "x=(1 2);p=\"v\""),
    ])
    func dictionariesReserialiseCanonically(input: String, canonical: String) throws {
        let dictionary = try StructuredFieldParser.parseDictionary(input)
        #expect(try StructuredFieldSerializer.serialize(dictionary) == canonical)
    }

    @Test func membersKeepTheirRawText() throws {
        let dictionary = try StructuredFieldParser.parseDictionary(
            "sig1=(\"@method\"  \"@path\");created=1, sig2=(\"@status\")"
        )
        #expect(dictionary["sig1"]?.rawValue == "(\"@method\"  \"@path\");created=1")
        #expect(dictionary["sig2"]?.rawValue == "(\"@status\")")
    }

    @Test func aRepeatedKeyKeepsItsPlaceAndTakesTheLastValue() throws {
        let dictionary = try StructuredFieldParser.parseDictionary("a=1, b=2, a=3")
        #expect(dictionary.keys == ["a", "b"])
        #expect(try StructuredFieldSerializer.serialize(dictionary) == "a=3, b=2")
    }

    @Test(arguments: [
        "A=1", "a=1,", "a=1,,b=2", "a=(1 2", "a=\"unterminated", "a=\"bad\\escape\"", "a=\"tab\there\"",
        "a=:bad base64:", "a=?2", "a=1234567890123456", "a=1234567890123.1", "a=1.2345", "a=1.", "a=%\"%zz\"",
        "a=%\"%c3\"", "a=@1.5", "a=1 b=2", "a=(1,2)", "a=é", "a=1;P=2",
    ])
    func invalidFieldsAreRejected(_ input: String) {
        let error = #expect(throws: SignetError.self) { try StructuredFieldParser.parseDictionary(input) }
        #expect(error?.code == .malformedHeader)
    }

    @Test func theParserIsBoundedInMembers() {
        let many = (0...StructuredFieldParser.maximumMembers).map { "k\($0)=1" }.joined(separator: ", ")
        let error = #expect(throws: SignetError.self) { try StructuredFieldParser.parseDictionary(many) }
        #expect(error?.code == .malformedHeader)
        let wide =
            "a=(" + Array(repeating: "1", count: StructuredFieldParser.maximumMembers + 1).joined(separator: " ") + ")"
        #expect(throws: SignetError.self) { try StructuredFieldParser.parseDictionary(wide) }
    }

    @Test func signatureFieldsAreBoundedWhileTheyAreParsedAndAcceptedAtTheLimits() throws {
        let limits = SignatureFields.Limits.standard
        func fields(_ input: String, _ signature: String) -> MessageFields {
            var fields = MessageFields()
            fields.append(name: "Signature-Input", value: input)
            fields.append(name: "Signature", value: signature)
            return fields
        }
        func components(_ count: Int) -> String { "(" + (0..<count).map { "\"x-\($0)\"" }.joined(separator: " ") + ")" }
        // At each limit: parsed (by the fast path or the general one alike).
        #expect(try SignatureFields(fields("a=\(components(limits.components))", "a=:AAAA:")).entries[0].parameters.components.count == 64)
        let eight = (0..<limits.signatures).map { "s\($0)=(\"@method\")" }.joined(separator: ",")
        let eightSignatures = (0..<limits.signatures).map { "s\($0)=:AAAA:" }.joined(separator: ",")
        #expect(try SignatureFields(fields(eight, eightSignatures)).entries.count == 8)
        let sixteen = "a=(\"@method\")" + (0..<limits.parameters).map { ";p\($0)" }.joined()
        #expect(try SignatureFields(fields(sixteen, "a=:AAAA:")).entries.count == 1)
        // One past each: malformed_header, naming the limit.
        let refused = [
            fields("a=\(components(limits.components + 1))", "a=:AAAA:"),
            fields(eight + ",s8=(\"@method\")", eightSignatures + ",s8=:AAAA:"),
            fields(sixteen + ";p16", "a=:AAAA:"),
            fields("a=(\"@method\";" + (0...limits.parameters).map { "p\($0)" }.joined(separator: ";") + ")", "a=:AAAA:"),
            fields("a=(\"x\" \"x\")", "a=:AAAA:"),
        ]
        for fields in refused {
            let error = #expect(throws: SignetError.self) { try SignatureFields(fields) }
            #expect(error?.code == .malformedHeader, "\(String(describing: error))")
        }
    }

    @Test func aRepeatedKeyAmongManyIsFoundByIndexAndStillTakesItsFirstPlace() throws {
        let input = (0..<500).map { "k\($0 % 50)=\($0)" }.joined(separator: ",")
        let dictionary = try StructuredFieldParser.parseDictionary(input)
        #expect(dictionary.keys == (0..<50).map { "k\($0)" })
        #expect(dictionary["k7"]?.rawValue == "457")
        let item = try StructuredFieldParser.parseItem("1" + (0..<300).map { ";p\($0 % 3)=\($0)" }.joined())
        #expect(item.parameters.entries.map(\.key) == ["p0", "p1", "p2"])
        #expect(item.parameters["p2"] == .integer(299))
    }

    @Test func randomBytesNeverCrashTheParser() {
        var generator = SplitMix64(seed: 9421)
        let alphabet = Array("ab=;,()\"\\:?*@%-.1 \t09AZ/+é".utf8)
        for _ in 0..<20_000 {
            let length = Int(generator.next() % 40)
            let bytes = (0..<length).map { _ in alphabet[Int(generator.next() % UInt64(alphabet.count))] }
            let text = String(decoding: bytes, as: UTF8.self)
            if let parsed = try? StructuredFieldParser.parseDictionary(text) {
                // Whatever parses must serialise and parse back to the same value.
                if let again = try? StructuredFieldSerializer.serialize(parsed) {
                    #expect(
                        (try? StructuredFieldParser.parseDictionary(again))?.entries.map(\.member)
                            == parsed.entries.map(\.member)
                    )
                }
            }
            _ = try? StructuredFieldParser.parseList(text)
        }
    }
}

/// A small deterministic generator so fuzz-style tests are reproducible.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

@Suite struct Base64Tests {
    @Test func roundTripsEveryLength() {
        var generator = SplitMix64(seed: 4648)
        for length in 0..<70 {
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let encoded = Base64.encode(bytes)
            #expect(Base64.decode(encoded) == bytes)
            #expect(Base64.urlDecode(Base64.urlEncode(bytes)) == bytes)
            // Structured fields tolerate a missing padding (RFC 9651 §4.2.7).
            #expect(Base64.decode(Array(encoded.utf8).filter { $0 != UInt8(ascii: "=") }, lenient: true) == bytes)
        }
    }

    @Test(arguments: ["YQ", "YQ=", "Y===", "YR==", "Y Q==", "YQ==YQ==", "=YQ=", "A"])
    func strictDecodingRejectsNonCanonicalInput(_ text: String) {
        #expect(Base64.decode(text) == nil)
    }

    /// The byte-wise base64url decoder takes exactly what the string-replacing one before it took
    /// (the URL alphabet, padding optional but whole where given, unused bits zero), on encodings
    /// and on strings a client could send.
    @Test func urlDecodingAgreesWithReplacingTheAlphabet() {
        func reference(_ text: String) -> [UInt8]? {
            guard !text.contains("+"), !text.contains("/") else { return nil }
            var standard = text.replacing("-", with: "+").replacing("_", with: "/")
            guard !standard.contains("=") || standard.count % 4 == 0 else { return nil }
            while standard.count % 4 != 0 { standard += "=" }
            return Base64.decode(standard)
        }
        var generator = SplitMix64(seed: 7515)
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_+/= .é")
        for round in 0..<4000 {
            let text: String
            if round % 2 == 0 {
                let bytes = (0..<Int.random(in: 0...40, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
                var encoded = Base64.urlEncode(bytes)
                #expect(!encoded.contains("=") && !encoded.contains("+") && !encoded.contains("/"))
                #expect(Base64.urlDecode(encoded) == bytes)
                // With its padding, or with one character changed.
                if round % 4 == 0 { while encoded.utf8.count % 4 != 0 { encoded += "=" } }
                if round % 8 == 2, !encoded.isEmpty {
                    var characters = Array(encoded)
                    characters[Int.random(in: 0..<characters.count, using: &generator)] = alphabet.randomElement(using: &generator)!
                    encoded = String(characters)
                }
                text = encoded
            } else {
                text = String((0..<Int.random(in: 0...12, using: &generator)).map { _ in alphabet.randomElement(using: &generator)! })
            }
            #expect(Base64.urlDecode(text) == reference(text), "\(text)")
        }
    }

    @Test func rfc4648TestVectors() {
        for (plain, encoded) in [
            ("", ""), ("f", "Zg=="), ("fo", "Zm8="), ("foo", "Zm9v"), ("foob", "Zm9vYg=="), ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ] {
            #expect(Base64.encode(Array(plain.utf8)) == encoded)
            #expect(Base64.decode(encoded) == Array(plain.utf8))
        }
    }
}
