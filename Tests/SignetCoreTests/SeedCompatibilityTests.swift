// SPDX-License-Identifier: Apache-2.0
import Foundation
import Testing

@testable import SignetCore

/// The seed articles' own numbers (`seeds.json`).
@Suite struct SeedCompatibilityTests {
    let seeds: [String: Any]

    init() throws { seeds = try Vectors.json("seeds.json") }

    @Test func digestsOfTheTestStringMatchTheArticle() throws {
        let digests = try seeds.object("digests_of_test_string")
        let input = Array(try digests.string("input_utf8").utf8)
        for function in [HashFunction.md5, .sha1, .sha256] {
            #expect(function.hex(input) == (try digests.string(function.rawValue)), "\(function)")
        }
        // The longer SHA-2 variants agree with the RFC 9530 sample values for the same bytes.
        #expect(
            HashFunction.sha512.digest(Array("{\"hello\": \"world\"}".utf8))
                == Base64.decode(
                    "WZDPaVn/7XgHaAy8pmojAkGWoRx2UFChF41A2svX+TaPm+AbwAgBWnrIiYllu7BNNyealdVLvRwEmTHWXvJwew=="
                )
        )
        #expect(HashFunction.sha384.hex([]).hasPrefix("38b060a751ac9638"))
    }

    @Test func transferMACOverOrderedFieldsWithAVersionedKey() throws {
        let transfer = try seeds.object("transfer_mac")
        let fields = try #require(transfer["fields_in_order"] as? [String])
        let expected = try transfer.string("hmac_sha256_hex")
        let mac = FieldMAC(keys: ["1": Array(try transfer.string("key_utf8").utf8), "2": Array("next-key".utf8)])
        #expect(FieldMAC.message(fields) == Array(try transfer.string("message_utf8").utf8))
        #expect(try mac.mac(fields, keyVersion: "1") == expected)
        try mac.verify(fields, mac: expected, keyVersion: "1")
        try mac.verify(fields, mac: expected.uppercased(), keyVersion: "1")

        var tampered = fields
        tampered[2] = "2300.01"
        #expect(throws: SignetError.signatureInvalid) { try mac.verify(tampered, mac: expected, keyVersion: "1") }
        #expect(throws: SignetError.signatureInvalid) { try mac.verify(fields, mac: expected, keyVersion: "2") }
        let unknown = #expect(throws: SignetError.self) { try mac.verify(fields, mac: expected, keyVersion: "9") }
        #expect(unknown?.code == .unknownKey)
        let notHex = #expect(throws: SignetError.self) { try mac.verify(fields, mac: "zz", keyVersion: "1") }
        #expect(notHex?.code == .malformedHeader)
    }

    @Test func legacyHighScoreQueryVerifies() throws {
        let legacy = try seeds.object("legacy_query_hmac")
        let key = Array(try legacy.string("key_utf8").utf8)
        let message = try legacy.string("example_message")
        let mac = try legacy.string("example_hmac_sha256_hex")
        #expect(HMACHex.sha256(key: key, message: Array(message.utf8)) == mac)

        let scheme = LegacyQueryHMAC(key: key)
        let query = scheme.query(for: message)
        #expect(query.hasSuffix("&hmac=\(mac)"))
        #expect(try scheme.verify(query: query) == message)
        // What a PHP client sends: the message percent-encoded by hand, spaces as '+'.
        #expect(
            try scheme.verify(query: "msg=%7B%22name%22%3A%22Gilgamesh%22%2C%22score%22%3A100%7D&hmac=\(mac)")
                == message
        )
    }

    @Test(arguments: [
        (
            "msg=%7B%7D&hmac=8f18d090ea4894b493c1783417fd0002f1a48d3819e46158362a7082dd651e5f",
            SignetError.Code.signatureInvalid
        ),
        ("msg=x", .signatureMissing),
        ("hmac=00", .componentMissing),
        ("msg=x&hmac=xyz", .malformedHeader),
        ("msg=x&msg=y&hmac=8f18d090ea4894b493c1783417fd0002f1a48d3819e46158362a7082dd651e5f", .malformedHeader),
    ])
    func legacyHighScoreQueryRejections(query: String, code: SignetError.Code) throws {
        let scheme = LegacyQueryHMAC(key: Array(try seeds.object("legacy_query_hmac").string("key_utf8").utf8))
        let error = #expect(throws: SignetError.self) { try scheme.verify(query: query) }
        #expect(error?.code == code)
    }
}
