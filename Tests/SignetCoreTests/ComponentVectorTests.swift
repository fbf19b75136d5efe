// SPDX-License-Identifier: Apache-2.0
import Foundation
import Testing

@testable import SignetCore

/// RFC 9421 §2.1–2.3 component values, from `rfc9421-components.json`.
@Suite struct ComponentVectorTests {
    struct Case: CustomTestStringConvertible, Sendable {
        let section: String
        let message: String
        let scheme: String
        let identifier: String
        let expectedLine: String
        var testDescription: String { "§\(section) \(identifier)" }
    }

    static let all: [Case] = {
        guard let file = try? Vectors.json("rfc9421/rfc9421-components.json"),
            let examples = file["examples"] as? [[String: Any]]
        else { return [] }
        return examples.compactMap { example in
            guard example["invalid"] == nil, let message = example["message"] as? String,
                let identifier = example["component_identifier"] as? String,
                let line = example["expected_line"] as? String
            else { return nil }
            return Case(
                section: example["rfc_section"] as? String ?? "?",
                message: message,
                scheme: example["scheme"] as? String ?? "https",
                identifier: identifier,
                expectedLine: line
            )
        }
    }()

    /// Messages that are only field lines get a status line so they parse as responses.
    static func message(_ text: String, scheme: String) throws -> HTTPMessage {
        let firstLine = text.prefix { $0 != "\n" }
        let hasStartLine = firstLine.hasPrefix("HTTP/") || firstLine.hasSuffix("HTTP/1.1")
        return try Vectors.message(hasStartLine ? text : "HTTP/1.1 200 OK\n" + text, scheme: scheme)
    }

    @Test func theVectorFileHasAllThirtySixCases() {
        #expect(Self.all.count == 36)
    }

    /// A vector file that failed to load would make the table below run no case at all.
    @Test func everyComponentCaseIsLoaded() {
        #expect(Self.all.count == 36)
    }

    @Test(arguments: all)
    func componentLineMatchesTheRFC(_ vector: Case) throws {
        let message = try Self.message(vector.message, scheme: vector.scheme)
        let component = try ComponentIdentifier(parsing: vector.identifier)
        #expect(component.description == vector.identifier)
        if component.parameters["tr"] != nil {
            // Trailers are out of scope: a clear, stable refusal instead of a wrong value.
            let error = #expect(throws: SignetError.self) {
                try ComponentResolver(message: message, relatedRequest: nil).values(for: component)
            }
            #expect(error?.code == .componentUnsupported)
            return
        }
        let values = try ComponentResolver(message: message, relatedRequest: nil).values(for: component)
        #expect(values.map { "\(vector.identifier): \($0)" } == [vector.expectedLine])
    }

    @Test func queryParameterValuesAreReencodedNeverRaw() throws {
        let file = try Vectors.json("rfc9421/rfc9421-components.json")
        let negative = try #require(try file.objects("examples").first { $0["invalid"] as? Bool == true })
        let message = try Vectors.message(
            "GET /parameters?var=this%20is%20a%20big%0Amultiline%20value&bar=with+plus+whitespace HTTP/1.1\nHost: www.example.com"
        )
        let values = try ComponentResolver(message: message, relatedRequest: nil).values(for: .queryParameter("var"))
        #expect("\"@query-param\";name=\"var\": \(values[0])" != (try negative.string("expected_line")))
        #expect(!values[0].contains("\n"))
    }

    @Test func signatureParamsLineIsTheSignersTextVerbatim() throws {
        let file = try Vectors.json("rfc9421/rfc9421-components.json")
        let example = try #require(
            try file.objects("examples").first { $0["component_identifier"] as? String == "\"@signature-params\"" }
        )
        let expected = try example.string("expected_value")
        let fields: MessageFields = [("Signature-Input", "sig1=" + expected), ("Signature", "sig1=:AAAA:")]
        let entry = try #require(try SignatureFields(fields).entries.first)
        #expect(try entry.parameters.serialized == expected)
        // A member with unusual but valid spacing and order stays exactly as sent.
        let odd = "(\"@method\"  \"@path\");keyid=\"k\";created=1618884475;nonce=\"n\""
        let oddEntry = try #require(
            try SignatureFields([("Signature-Input", "a=" + odd), ("Signature", "a=:AAAA:")]).entries.first
        )
        #expect(try oddEntry.parameters.serialized == odd)
    }

    @Test func repeatedQueryParameterGivesOneLinePerValue() throws {
        let message = try Vectors.message("GET /p?a=1&b=2&a=3 HTTP/1.1\nHost: example.com")
        let parameters = SignatureParameters(components: [.queryParameter("a")], created: 1)
        let base = try SignatureBase(message: message, parameters: parameters)
        #expect(base.text.hasPrefix("\"@query-param\";name=\"a\": 1\n\"@query-param\";name=\"a\": 3\n"))
    }

    @Test(arguments: [
        ("\"x-missing\"", SignetError.Code.componentMissing),
        ("\"@query-param\";name=\"nope\"", .componentMissing),
        ("\"@status\"", .malformedHeader),
        ("\"@unknown\"", .componentUnsupported),
        ("\"host\";bs;sf", .malformedHeader),
        ("\"host\";req", .malformedHeader),
        ("\"x-list\";key=\"a\"", .malformedHeader),
        ("\"x-list\";sf", .malformedHeader),
        ("\"x-dict\";key=\"zz\"", .componentMissing),
        ("\"host\";foo", .componentUnsupported),
    ])
    func missingOrMisusedComponentsAreErrorsNeverEmptyStrings(identifier: String, code: SignetError.Code) throws {
        let message = try Vectors.message("GET /p HTTP/1.1\nHost: example.com\nX-Dict: a=1\nX-List: 1, (2")
        let component = try ComponentIdentifier(parsing: identifier)
        let error = #expect(throws: SignetError.self) {
            try ComponentResolver(message: message, relatedRequest: nil).values(for: component)
        }
        #expect(error?.code == code)
    }
}
