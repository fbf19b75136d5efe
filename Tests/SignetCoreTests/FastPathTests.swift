// SPDX-License-Identifier: Apache-2.0
import Crypto
import Foundation
import Testing

@testable import SignetCore

/// The verifier's fast paths against the general code they stand in for: same answer on every input
/// the fast path takes, and the general path's answer (or error) on every input it declines.
@Suite struct FastPathTests {
    static let signature = "sig1=:dGhlIHNpZ25hdHVyZSBieXRlcw==:"

    /// Shapes real signers send: the scanner must take these (or the fast path is dead code).
    @Test(arguments: [
        #"sig1=("@method" "@target-uri" "content-digest" "content-type");created=1700000000;keyid="k";nonce="n1""#,
        #"sig1=("@method" "@authority" "@path");created=1618884473;keyid="test-key-rsa-pss";alg="rsa-pss-sha512""#,
        #"sig1=();created=1;expires=2;tag="app""#,
        #"  sig1=("date")  ;created=5"#.replacingOccurrences(of: ")  ;", with: ");") + " \t",
        #"sig1=(  "@method"   "@path");created=1;created=2"#,
        #"*x=("@method");nonce="a b c""#.replacingOccurrences(of: "*x", with: "sig1"),
    ])
    func commonShapesTakeTheFastPathWithTheGeneralAnswer(input: String) throws {
        let fast = try #require(SingleSignatureScanner.entry(input: input, signature: Self.signature))
        let general = try SignatureFields.parse(input: input, signature: Self.signature)
        #expect(general == [fast])
    }

    /// Everything unusual is declined, and the general path decides (accepting or refusing).
    @Test(arguments: [
        #"sig1=("@query-param";name="id");created=1"#,  // component parameters
        #"sig1=("a\"b");created=1"#,  // an escape
        #"sig1=("Content-Type");created=1"#,  // uppercase: refused by the general path
        #"sig1=("@method" "@method");created=1"#,  // a duplicate: refused by the general path
        #"sig1=("@method");created=1.5"#,  // decimal
        #"sig1=("@method");created=-1"#,
        #"sig1=("@method");created="1""#,  // wrong type: refused by the general path
        #"sig1=("@method");keyid=token"#,
        #"sig1=("@method");keyid=:AAAA:"#,
        #"sig1=("@method");unknown=1"#,
        #"sig1=("@method");created"#,
        #"sig1=("@method"), sig2=("@path")"#,  // several signatures
        #"sig1=("@method";created=1"#,  // unterminated
        #"sig1=("@method")x"#,
        #"sig1=("@method")\#t;created=1"#,  // HTAB before parameters
        #"sig1="@method""#,  // not an inner list
        #"SIG=("@method")"#,
        #"sig1=("@method");created=1234567890123456"#,  // 16 digits
        #"sig1=("@method"\#t"@path")"#,
    ])
    func unusualShapesGoToTheGeneralPath(input: String) {
        #expect(SingleSignatureScanner.entry(input: input, signature: Self.signature) == nil)
    }

    @Test(arguments: [
        "sig2=:AAAA:",  // another label
        "sig1=:AAAA:;p=1",  // member parameters
        "sig1=:AAAA:, sig2=:AAAA:",
        "sig1=:AA*A:",  // not base64: refused by the general path
        "sig1=:AAAA",
        "sig1=AAAA",
    ])
    func unusualSignatureFieldsGoToTheGeneralPath(signature: String) {
        #expect(SingleSignatureScanner.entry(input: #"sig1=("@method")"#, signature: signature) == nil)
    }

    /// Every RFC 9421 vector's signature fields give the same entries through the verifier's front
    /// door (fast path first) as through the general parser alone.
    @Test func vectorSignaturesParseTheSameEitherWay() throws {
        var compared = 0
        var fast = 0
        for vector in try SignatureVectorTests.load() {
            guard let input = vector.signatureInput, let signature = vector.signature else { continue }
            let fields: MessageFields = [("Signature-Input", input), ("Signature", signature)]
            #expect(try SignatureFields(fields).entries == SignatureFields.parse(input: input, signature: signature))
            compared += 1
            if SingleSignatureScanner.entry(input: input, signature: signature) != nil { fast += 1 }
        }
        #expect(compared >= 10)
        #expect(fast >= 5)
    }

    /// The padded-key HMAC against swift-crypto's, across the key lengths RFC 2104 treats differently.
    @Test(arguments: [0, 1, 32, 63, 64, 65, 131, 200])
    func hmacMatchesSwiftCrypto(keyLength: Int) {
        let key = SymmetricKey(data: (0..<keyLength).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 1) })
        let secret = SharedSecret(key)
        for length in [0, 1, 55, 56, 64, 119, 120, 250, 1000] {
            let message = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 13) }
            let expected = Array(HMAC<SHA256>.authenticationCode(for: message, using: key))
            #expect(secret.authenticationCode(for: message) == expected, "key \(keyLength) B, message \(length) B")
        }
    }

    /// RFC 4231 §4.7, test case 6: a 131-byte key (hashed first) and a 54-byte message.
    @Test func hmacKnownAnswerWithAKeyLongerThanTheBlock() {
        let secret = SharedSecret(SymmetricKey(data: [UInt8](repeating: 0xAA, count: 131)))
        let mac = secret.authenticationCode(for: Array("Test Using Larger Than Block-Size Key - Hash Key First".utf8))
        #expect(Hex.encode(mac) == "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54")
    }

    @Test(arguments: ["", "QQ", "QQ==", "QUI=", "QUJD", "QUJDRA", "AAAA////++++", "YW55IGNhcm5hbCBwbGVhcw=="])
    func base64DecodesAsFoundationDoes(text: String) {
        let padded = text + String(repeating: "=", count: (4 - text.count % 4) % 4)
        #expect(Base64.decode(Array(text.utf8), lenient: true) == Data(base64Encoded: padded).map(Array.init))
    }

    @Test(arguments: ["QQ=A", "Q===", "Q", "QUJD*", "QU JD", "QUJDRR=="])
    func base64RefusesWhatTheAlphabetForbids(text: String) {
        #expect(Base64.decode(Array(text.utf8), lenient: false) == nil)
    }
}
