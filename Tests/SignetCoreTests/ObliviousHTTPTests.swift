// SPDX-License-Identifier: Apache-2.0
import Crypto
import Foundation
import Testing

@testable import SignetCore

/// RFC 9458 Appendix A byte for byte on the gateway's side, RFC 9292 §5's messages, RFC 9180's
/// vectors for every suite offered, and each way an encapsulated request can be wrong.
@Suite struct ObliviousHTTPTests {
    static func hex(_ text: String) -> [UInt8] {
        let digits = Array(text.filter { !$0.isWhitespace }.utf8)
        return stride(from: 0, to: digits.count - 1, by: 2).map { UInt8(String(decoding: digits[$0...$0 + 1], as: UTF8.self), radix: 16)! }
    }

    static func appendixA() throws -> [String: String] {
        try #require(try Vectors.json("ohttp/rfc9458-rfc9292.json")["rfc9458_appendix_a"] as? [String: String])
    }

    static func rfcGatewayKey() throws -> OHTTPGatewayKey {
        let vector = try appendixA()
        let key = try Curve25519.KeyAgreement.PrivateKey(rawRepresentation: hex(vector["skR"]!))
        return OHTTPGatewayKey(
            keyID: 1,
            privateKey: .x25519(key),
            suites: [
                .init(kdf: OHTTPAlgorithms.kdfHKDFSHA256, aead: OHTTPAlgorithms.aeadAES128GCM),
                .init(kdf: OHTTPAlgorithms.kdfHKDFSHA256, aead: OHTTPAlgorithms.aeadChaCha20Poly1305),
            ]
        )
    }

    @Test func rfc9458AppendixAKeyConfigurationRequestAndResponse() throws {
        let vector = try Self.appendixA()
        let key = try Self.rfcGatewayKey()
        #expect(key.configuration.encoded() == Self.hex(vector["key_config"]!))
        #expect(try OHTTPKeyConfiguration(decoding: Self.hex(vector["key_config"]!)) == key.configuration)

        let request = try ObliviousRequest(decapsulating: Self.hex(vector["enc_request"]!), keys: [key])
        #expect(request.message == Self.hex(vector["request"]!))
        #expect(request.encapsulatedKey == Self.hex(vector["pkE"]!))
        #expect(request.header.keyID == 1 && request.header.suite.aead == OHTTPAlgorithms.aeadAES128GCM)

        // The response nonce is the first 16 bytes of the RFC's answer; the rest must follow from it.
        let expected = Self.hex(vector["enc_response"]!)
        let response = try request.encapsulateResponse(Self.hex(vector["response"]!), responseNonce: Array(expected[..<16]))
        #expect(response == expected)

        // The messages inside are the RFC's Binary HTTP, in the truncated form.
        let inner = try BinaryHTTPMessage(decoding: request.message)
        #expect(inner.head == .request(method: "GET", scheme: "https", authority: "example.com", path: "/"))
        #expect(inner.encoded() == request.message)
        let answer = try BinaryHTTPMessage(decoding: Self.hex(vector["response"]!))
        #expect(answer.head == .response(status: 200) && answer.fields.isEmpty && answer.content.isEmpty)
        #expect(answer.encoded() == Self.hex(vector["response"]!))
    }

    @Test func rfc9292Section5Messages() throws {
        let vectors = try #require(try Vectors.json("ohttp/rfc9458-rfc9292.json")["rfc9292_section5"] as? [String: String])
        let requestBytes = Self.hex(vectors["known_length_request"]!)
        let request = try BinaryHTTPMessage(decoding: requestBytes)
        #expect(request.head == .request(method: "GET", scheme: "https", authority: "", path: "/hello.txt"))
        #expect(request.fields.map(\.name) == ["user-agent", "host", "accept-language"])
        #expect(request.fields[1].value == "www.example.com")
        #expect(request.encoded(truncatingEmptySections: false) == requestBytes)

        let response = try BinaryHTTPMessage(decoding: Self.hex(vectors["known_length_response"]!))
        #expect(response.head == .response(status: 200))
        #expect(String(decoding: response.content, as: UTF8.self) == "This content contains CRLF.\r\n")
        #expect(response.trailers == [.init("trailer", "text")])
        #expect(response.encoded() == Self.hex(vectors["known_length_response"]!))

        // Indeterminate length, with two interim responses.
        let streamed = try BinaryHTTPMessage(decoding: Self.hex(vectors["indeterminate_length_response"]!))
        #expect(streamed.informational.map(\.status) == [102, 103])
        #expect(streamed.informational[0].fields == [.init("running", "\"sleep 15\"")])
        #expect(streamed.head == .response(status: 200))
        #expect(streamed.fields.first?.name == "date" && streamed.fields.count == 8)
        #expect(String(decoding: streamed.content, as: UTF8.self) == "Hello World! My content includes a trailing CRLF.\r\n")
        #expect(streamed.trailers.isEmpty)
    }

    /// The CFRG's JSON (RFC 9180's vectors) for the six suites offered, through the ciphersuites
    /// Signet hands swift-crypto: every listed encryption opened in order, every export derived.
    @Test func rfc9180VectorsForEveryOfferedSuite() throws {
        let data = try Vectors.data("hpke/cfrg-base-offered-suites.json")
        let vectors = try #require(try JSONSerialization.jsonObject(with: data) as? [[String: Any]])
        var checked: Set<OHTTPKeyConfiguration.SymmetricSuite> = []
        var kems: Set<UInt16> = []
        for vector in vectors {
            let kem = UInt16(vector["kem_id"] as! Int), kdf = UInt16(vector["kdf_id"] as! Int), aead = UInt16(vector["aead_id"] as! Int)
            let suite = try OHTTPAlgorithms.ciphersuite(kem: kem, suite: .init(kdf: kdf, aead: aead))
            let info = Data(Self.hex(vector["info"] as! String))
            let enc = Data(Self.hex(vector["enc"] as! String))
            var recipient: HPKE.Recipient
            if kem == OHTTPAlgorithms.kemX25519 {
                let key = try Curve25519.KeyAgreement.PrivateKey(rawRepresentation: Self.hex(vector["skRm"] as! String))
                recipient = try HPKE.Recipient(privateKey: key, ciphersuite: suite, info: info, encapsulatedKey: enc)
            } else {
                let key = try P256.KeyAgreement.PrivateKey(rawRepresentation: Self.hex(vector["skRm"] as! String))
                recipient = try HPKE.Recipient(privateKey: key, ciphersuite: suite, info: info, encapsulatedKey: enc)
            }
            for encryption in vector["encryptions"] as! [[String: String]] {
                let opened = try recipient.open(Self.hex(encryption["ct"]!), authenticating: Self.hex(encryption["aad"]!))
                #expect(Array(opened) == Self.hex(encryption["pt"]!))
            }
            for export in vector["exports"] as! [[String: Any]] {
                let value = try recipient.exportSecret(
                    context: Self.hex(export["exporter_context"] as! String),
                    outputByteCount: export["L"] as! Int
                )
                #expect(value.withUnsafeBytes { Array($0) } == Self.hex(export["exported_value"] as! String))
            }
            checked.insert(.init(kdf: kdf, aead: aead))
            kems.insert(kem)
        }
        #expect(vectors.count == 6 && checked == Set(OHTTPAlgorithms.allSuites))
        #expect(kems == [OHTTPAlgorithms.kemX25519, OHTTPAlgorithms.kemP256])
    }

    /// The first value of each name in a vector block, hex lines joined.
    static func values(_ block: String) -> [String: String] {
        var values: [String: String] = [:]
        var current: String?
        for line in block.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("### ") { break }
            if let colon = line.firstIndex(of: ":"), line[..<colon].allSatisfy({ $0.isLetter || $0 == "_" }) {
                let name = String(line[..<colon])
                current = values[name] == nil ? name : nil
                if let current { values[current] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces) }
            } else if let current, line.allSatisfy(\.isHexDigit), !line.isEmpty {
                values[current, default: ""] += line
            } else {
                current = nil
            }
        }
        return values
    }

    @Test(arguments: [
        (OHTTPAlgorithms.aeadAES128GCM, true), (OHTTPAlgorithms.aeadAES256GCM, true),
        (OHTTPAlgorithms.aeadChaCha20Poly1305, true), (OHTTPAlgorithms.aeadAES128GCM, false),
        (OHTTPAlgorithms.aeadAES256GCM, false), (OHTTPAlgorithms.aeadChaCha20Poly1305, false),
    ])
    func aClientAndTheGatewayRoundTripEverySuite(_ aead: UInt16, _ x25519: Bool) throws {
        let key = OHTTPGatewayKey(
            keyID: 7,
            privateKey: x25519 ? .x25519(.init()) : .p256(.init())
        )
        let listed = try OHTTPKeyConfiguration.decodeList(OHTTPKeyConfiguration.encodeList([key.configuration]))
        #expect(listed == [key.configuration])
        let message = BinaryHTTPMessage(
            head: .request(method: "POST", scheme: "https", authority: "api.example.com", path: "/v1/scores?game=1"),
            fields: [.init("Content-Type", "application/json")],
            content: Array("{\"score\":42}".utf8)
        ).encoded()
        let sent = try ObliviousClientRequest(
            encapsulating: message,
            to: listed[0],
            suite: .init(kdf: OHTTPAlgorithms.kdfHKDFSHA256, aead: aead)
        )
        let received = try ObliviousRequest(decapsulating: sent.bytes, keys: [key])
        #expect(received.message == message)
        let answer = BinaryHTTPMessage(head: .response(status: 201), content: Array("ok".utf8)).encoded()
        let opened = try sent.openResponse(try received.encapsulateResponse(answer))
        #expect(try BinaryHTTPMessage(decoding: opened).head == .response(status: 201))

        // A tampered response does not open.
        var tampered = try received.encapsulateResponse(answer)
        tampered[tampered.count - 1] ^= 1
        #expect(throws: SignetError(.decapsulationFailed, "")) { try sent.openResponse(tampered) }
    }

    @Test func wrongRequestsAreRefusedWithTheirReason() throws {
        let key = try Self.rfcGatewayKey()
        let good = Self.hex(try Self.appendixA()["enc_request"]!)
        func refused(_ bytes: [UInt8], keys: [OHTTPGatewayKey]? = nil) -> String? {
            do {
                _ = try ObliviousRequest(decapsulating: bytes, keys: keys ?? [key])
                return nil
            } catch let error as SignetError {
                return error.code.rawValue
            } catch {
                return "\(error)"
            }
        }
        #expect(refused(good) == nil)
        var otherID = good
        otherID[0] = 2
        #expect(refused(otherID) == "ohttp_key_unknown")
        var otherSuite = good
        otherSuite[6] = 2  // AES-256-GCM: not in the RFC key's configuration
        #expect(refused(otherSuite) == "ohttp_key_unknown")
        var tampered = good
        tampered[tampered.count - 1] ^= 0x01
        #expect(refused(tampered) == "decapsulation_failed")
        #expect(refused(Array(good.prefix(6))) == "decapsulation_failed")
        #expect(refused(Array(good.prefix(7 + 32 + 15))) == "decapsulation_failed")
        #expect(refused([]) == "decapsulation_failed")
        // Another key with the same id cannot open it.
        #expect(refused(good, keys: [OHTTPGatewayKey(keyID: 1, privateKey: .x25519(.init()))]) == "decapsulation_failed")

        // Small-order X25519 points as `enc` with a ciphertext that does not match: refused either way.
        let smallOrder = [
            [UInt8](repeating: 0, count: 32),
            [1] + [UInt8](repeating: 0, count: 31),
            Self.hex("e0eb7a7c3b41b8ae1656e3faf19fc46ada098deb9c32b1fd866205165f49b800"),
            Self.hex("5f9c95bca3508c24b1d0b1559c83ef5b04445cc4581c8e86d8224eddd09f1157"),
            Self.hex("ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f"),
        ]
        for point in smallOrder {
            #expect(refused(Array(good.prefix(7)) + point + Array(good.suffix(from: 39))) == "decapsulation_failed")
        }
    }

    /// The attacker's request: a small-order `enc`, and a ciphertext sealed under the shared secret
    /// an all-zero Diffie-Hellman output gives — valid HPKE, with no private key involved.
    @Test func anAllZeroSharedSecretIsRefused() throws {
        // First the written-out sender against RFC 9180 A.1.1, so the attack below is real HPKE.
        let text = try Vectors.text("hpke/rfc9180-appendix-a.md")
        let a11 = Self.values(try #require(text.components(separatedBy: "### Base Setup Information").dropFirst().first))
        let skE = try Curve25519.KeyAgreement.PrivateKey(rawRepresentation: Self.hex(a11["skEm"]!))
        let pkR = try Curve25519.KeyAgreement.PublicKey(rawRepresentation: Self.hex(a11["pkRm"]!))
        let dh = try skE.sharedSecretFromKeyAgreement(with: pkR).withUnsafeBytes { Array($0) }
        let reference = HPKEBaseSender(dh: dh, enc: Self.hex(a11["enc"]!), recipientPublicKey: Self.hex(a11["pkRm"]!), info: Self.hex(a11["info"]!))
        #expect(try reference.seal(Self.hex(a11["pt"]!), aad: Self.hex(a11["aad"]!)) == Self.hex(a11["ct"]!))
        #expect(reference.export(Self.hex(a11["exporter_context"] ?? ""), length: 32) == Self.hex(a11["exported_value"]!))

        let key = try Self.rfcGatewayKey()
        let header: [UInt8] = [1, 0x00, 0x20, 0x00, 0x01, 0x00, 0x01]
        let info = Array("message/bhttp request".utf8) + [0] + header
        let message = BinaryHTTPMessage(head: .request(method: "GET", scheme: "https", authority: "a", path: "/")).encoded()
        let high: [UInt8] = [UInt8](repeating: 0xFF, count: 30) + [0x7F]
        let smallOrder: [[UInt8]] = [
            [UInt8](repeating: 0, count: 32), [1] + [UInt8](repeating: 0, count: 31),
            Self.hex("e0eb7a7c3b41b8ae1656e3faf19fc46ada098deb9c32b1fd866205165f49b800"),
            Self.hex("5f9c95bca3508c24b1d0b1559c83ef5b04445cc4581c8e86d8224eddd09f1157"),
            [0xEC] + high, [0xED] + high, [0xEE] + high,
        ]
        // Each is of small order: X25519 with any key gives zeros (the premise, checked).
        for point in smallOrder {
            let product = try? Curve25519.KeyAgreement.PrivateKey().sharedSecretFromKeyAgreement(
                with: Curve25519.KeyAgreement.PublicKey(rawRepresentation: point)
            )
            #expect(product.map { $0.withUnsafeBytes { $0.allSatisfy { $0 == 0 } } } ?? true)
        }
        // With the top bit set too, which X25519 ignores.
        for enc in smallOrder + smallOrder.map({ Array($0.dropLast()) + [$0[31] | 0x80] }) {
            let attacker = HPKEBaseSender(dh: [UInt8](repeating: 0, count: 32), enc: enc, recipientPublicKey: key.configuration.publicKey, info: info)
            let forged = header + enc + (try attacker.seal(message))
            #expect(throws: SignetError(.decapsulationFailed, "")) { try ObliviousRequest(decapsulating: forged, keys: [key]) }
        }
    }

    @Test func binaryHTTPRefusesWhatCouldNotBeForwardedSafely() throws {
        func request(fields: [(String, String)], path: String = "/") -> [UInt8] {
            var bytes: [UInt8] = [0]
            for text in ["GET", "https", "example.com", path] { bytes += [UInt8(text.utf8.count)] + Array(text.utf8) }
            var section: [UInt8] = []
            for (name, value) in fields {
                section += [UInt8(name.utf8.count)] + Array(name.utf8) + [UInt8(value.utf8.count)] + Array(value.utf8)
            }
            return bytes + [UInt8(section.count)] + section
        }
        func reason(_ bytes: [UInt8], limits: BinaryHTTPMessage.Limits = .standard) -> String? {
            do {
                _ = try BinaryHTTPMessage(decoding: bytes, limits: limits)
                return nil
            } catch let error as SignetError {
                return error.code.rawValue
            } catch {
                return "\(error)"
            }
        }
        #expect(reason(request(fields: [("accept", "*/*")])) == nil)
        #expect(reason(request(fields: [("x-a", "1\r\nx-injected: 1")])) == "malformed_message")
        #expect(reason(request(fields: [("x a", "1")])) == "malformed_message")
        #expect(reason(request(fields: [("x-a", "a\u{0}b")])) == "malformed_message")
        #expect(reason(request(fields: [], path: "/a b")) == "malformed_message")
        #expect(reason(request(fields: [], path: "a")) == "malformed_message")
        #expect(reason(request(fields: [("a", "1"), ("b", "2")]), limits: .init(maximumFieldCount: 1)) == "header_too_large")
        #expect(reason(request(fields: [("accept", "*/*")]) + [0, 0, 0, 0]) == nil, "zero padding")
        #expect(reason(request(fields: [("accept", "*/*")]) + [0, 0, 7]) == "malformed_message", "padding that is not zeros")
        #expect(reason(Array(request(fields: [("accept", "*/*")]).dropLast(2))) == "malformed_message", "truncated inside a section")
        #expect(reason([9]) == "malformed_message", "unknown framing")
        #expect(reason([0x40]) == "malformed_message", "a varint cut short")
        // A length that claims more than there is.
        #expect(reason([0, 0x43, 0x47]) == "malformed_message")
        #expect(reason([1, 0x40, 0x63]) == "malformed_message", "status 99")
    }
}
