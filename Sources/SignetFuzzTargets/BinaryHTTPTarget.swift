// SPDX-License-Identifier: Apache-2.0
import Crypto
import SignetCore

extension FuzzTarget {
    /// Binary HTTP (RFC 9292), what an Oblivious HTTP request carries.
    static let binaryHTTP = FuzzTarget(
        "binary-http",
        property: "a decoded message encodes (known length) to bytes that decode to the same message and encode the same",
        seeds: { vectors in
            let examples = (try vectors.object("ohttp/rfc9458-rfc9292.json")["rfc9292_section5"] as? [String: String]) ?? [:]
            let appendix = (try vectors.object("ohttp/rfc9458-rfc9292.json")["rfc9458_appendix_a"] as? [String: String]) ?? [:]
            return (examples.values.sorted() + [appendix["request"], appendix["response"]].compactMap { $0 }).compactMap(Hex.decode)
        },
        check: { bytes in
            guard let message = try? BinaryHTTPMessage(decoding: bytes) else { return }
            let written = message.encoded()
            let again = try reparsed(Hex.encode(written)) { _ in try BinaryHTTPMessage(decoding: written) }
            try expect(again == message, "\(Hex.encode(bytes)) decodes to \(message), its encoding to \(again)")
            try expect(again.encoded() == written, "the encoding of \(message) is not stable")
        }
    )

    /// Oblivious HTTP (RFC 9458): key configurations (the first byte odd) and encapsulated requests
    /// to RFC 9458 Appendix A's key (even).
    static let obliviousHTTP = FuzzTarget(
        "ohttp",
        property: "key configurations re-encode to themselves; a request opens only with its key's id and suite, and its plaintext is the ciphertext less the tag",
        seeds: { vectors in
            let appendix = (try vectors.object("ohttp/rfc9458-rfc9292.json")["rfc9458_appendix_a"] as? [String: String]) ?? [:]
            return [
                appendix["enc_request"].flatMap(Hex.decode).map { [0] + $0 },
                appendix["key_config"].flatMap(Hex.decode).map { [1] + $0 },
            ].compactMap { $0 }
        },
        check: { bytes in
            guard let kind = bytes.first else { return }
            let input = Array(bytes.dropFirst())
            if kind % 2 == 1 {
                guard let list = try? OHTTPKeyConfiguration.decodeList(input) else { return }
                let written = OHTTPKeyConfiguration.encodeList(list)
                let again = try reparsed(Hex.encode(written)) { _ in try OHTTPKeyConfiguration.decodeList(written) }
                try expect(again == list, "key configurations \(Hex.encode(input)) re-read as \(again)")
                return
            }
            guard let request = try? ObliviousRequest(decapsulating: input, keys: [appendixKey]) else { return }
            try expect(
                request.header.keyID == appendixKey.configuration.keyID && request.header.kem == appendixKey.configuration.kem
                    && appendixKey.configuration.suites.contains(request.header.suite),
                "a request opened under header \(request.header), which is not the key's")
            try expect(
                request.message.count == input.count - 7 - request.encapsulatedKey.count - 16,
                "a \(input.count)-byte request opened to \(request.message.count) bytes")
        }
    )
}

/// RFC 9458 Appendix A's gateway key (key id 1, X25519, both of its suites).
private let appendixKey = OHTTPGatewayKey(
    keyID: 1,
    privateKey: .x25519(try! Curve25519.KeyAgreement.PrivateKey(rawRepresentation: Hex.decode("3c168975674b2fa8e465970b79c8dcf09f1c741626480bd4c6162fc5b6a98e1a")!)),
    suites: [.init(kdf: 1, aead: 1), .init(kdf: 1, aead: 3)]
)
