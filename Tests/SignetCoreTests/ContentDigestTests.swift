// SPDX-License-Identifier: Apache-2.0
import Foundation
import Testing

@testable import SignetCore

/// RFC 9530 examples from `rfc9530-content-digest.json`, errata included.
@Suite struct ContentDigestTests {
    struct Example: CustomTestStringConvertible, Sendable {
        let rfc: String
        let content: [UInt8]
        let algorithm: String
        let fieldValue: String
        let inconsistentValue: String?
        var testDescription: String { "\(rfc) \(algorithm)" }
    }

    static let examples: [Example] = {
        guard let json = try? Vectors.json("rfc9421/rfc9530-content-digest.json"),
            let list = json["examples"] as? [[String: Any]]
        else { return [] }
        return list.compactMap { example in
            guard let hex = example["content_hex"] as? String, let content = Hex.decode(hex),
                let algorithm = example["algorithm"] as? String, let value = example["field_value"] as? String
            else { return nil }
            return Example(
                rfc: example["rfc"] as? String ?? "?",
                content: content,
                algorithm: algorithm,
                fieldValue: value,
                inconsistentValue: example["rfc_field_value"] as? String
            )
        }
    }()

    @Test func allElevenExamplesAreLoaded() {
        #expect(Self.examples.count == 11)
    }

    /// A vector file that failed to load would make the tables below run no case at all.
    @Test func everyDigestExampleIsLoaded() {
        #expect(Self.examples.count == 11)
    }

    @Test(arguments: examples)
    func producesTheRFCValue(_ example: Example) throws {
        let algorithms = example.algorithm.split(separator: ",").map(String.init)
        let produced = try algorithms.map { name in
            ContentDigest.fieldValue(
                for: example.content,
                algorithm: try #require(ContentDigest.Algorithm(rawValue: name))
            )
        }
        #expect(produced.joined(separator: ", ") == example.fieldValue)
    }

    @Test(arguments: examples)
    func verifiesTheRFCValueAndRejectsOtherContent(_ example: Example) throws {
        try ContentDigest.verify(example.fieldValue, body: example.content)
        let error = #expect(throws: SignetError.self) {
            try ContentDigest.verify(example.fieldValue, body: example.content + [0x20])
        }
        #expect(error?.code == .digestMismatch)
    }

    @Test func theInconsistentTwoMemberExampleOfSection2IsRejected() throws {
        let example = try #require(Self.examples.first { $0.inconsistentValue != nil })
        let error = #expect(throws: SignetError.self) {
            try ContentDigest.verify(try #require(example.inconsistentValue), body: example.content)
        }
        #expect(error?.code == .digestMismatch)
    }

    @Test func theBrotliErratumBytesMatchButThePrintedOnesDoNot() throws {
        let json = try Vectors.json("rfc9421/rfc9530-content-digest.json")
        let b4 = try #require(
            try json.objects("examples").first { ($0["rfc"] as? String)?.hasPrefix("9530 B.4") == true }
        )
        let printed = try #require(Hex.decode(try b4.string("rfc_printed_hex")))
        let error = #expect(throws: SignetError.self) {
            try ContentDigest.verify(try b4.string("field_value"), body: printed)
        }
        #expect(error?.code == .digestMismatch)
    }

    @Test func insecureAlgorithmsAloneAreNotEnough() throws {
        let json = try Vectors.json("rfc9421/rfc9530-content-digest.json")
        let insecure = try json.object("insecure_algorithms_appendix_d")
        let body = Array(try insecure.string("input").utf8)
        let values = try #require(insecure["values"] as? [String: String])
        #expect(values.count == 6)
        for (name, value) in values {
            let error = #expect(throws: SignetError.self) { try ContentDigest.verify("\(name)=\(value)", body: body) }
            #expect(error?.code == .digestAlgorithmUnsupported)
        }
        // Next to a good sha-256 member they are ignored.
        try ContentDigest.verify("md5=\(values["md5"]!), \(ContentDigest.fieldValue(for: body))", body: body)
    }

    @Test(arguments: ["sha-256=abc", "sha-256=:not base64:", "sha-256", "sha-256=:YQ==:,", "SHA-256=:YQ==:"])
    func malformedValuesAreRejectedWithAReason(_ value: String) {
        let error = #expect(throws: SignetError.self) { try ContentDigest.verify(value, body: []) }
        #expect(error?.code == .malformedHeader || error?.code == .digestAlgorithmUnsupported)
    }
}
