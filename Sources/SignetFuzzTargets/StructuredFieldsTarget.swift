// SPDX-License-Identifier: Apache-2.0
import SignetCore

extension FuzzTarget {
    /// RFC 9651 structured fields: the first byte picks dictionary, list or item.
    static let structuredFields = FuzzTarget(
        "structured-fields",
        property: "a parsed dictionary, list or item serialises, and the serialisation parses to the same value",
        seeds: { vectors in
            let samples = [
                "a=1, b=?0;x, c=(\"s\" tok);p=:AQID:", "sig1=(\"@method\" \"@authority\");created=1618884473;keyid=\"k\"",
                "1.5, @1659578233, %\"caf%c3%a9\"", "(1 2);q=0.5, token, ?1", "\"quoted \\\\ \\\" string\"",
            ]
            var seeds = samples.enumerated().map { [UInt8($0.offset % 3)] + Array($0.element.utf8) }
            for (name, value) in try vectors.messageFields() where ["signature-input", "signature", "content-digest"].contains(name) {
                seeds.append([0] + Array(value.utf8))
            }
            return seeds
        },
        check: { bytes in
            guard let kind = bytes.first, let value = text(Array(bytes.dropFirst())) else { return }
            switch kind % 3 {
            case 0:
                guard let parsed = try? StructuredFieldParser.parseDictionary(value) else { return }
                let written = try serialised { try StructuredFieldSerializer.serialize(parsed) }
                let again = try reparsed(written) { try StructuredFieldParser.parseDictionary($0) }
                try expect(
                    again.keys == parsed.keys && again.entries.map(\.member) == parsed.entries.map(\.member),
                    "dictionary \(value.debugDescription) re-read differently from \(written.debugDescription)")
            case 1:
                guard let parsed = try? StructuredFieldParser.parseList(value) else { return }
                let written = try serialised { try StructuredFieldSerializer.serialize(parsed) }
                let again = try reparsed(written) { try StructuredFieldParser.parseList($0) }
                try expect(again == parsed, "list \(value.debugDescription) re-read differently from \(written.debugDescription)")
            default:
                guard let parsed = try? StructuredFieldParser.parseItem(value) else { return }
                let written = try serialised { try StructuredFieldSerializer.item(parsed) }
                let again = try reparsed(written) { try StructuredFieldParser.parseItem($0) }
                try expect(again == parsed, "item \(value.debugDescription) re-read differently from \(written.debugDescription)")
            }
        }
    )
}

/// A serialisation of a parsed value: it must not fail (what was read can be written).
func serialised(_ write: () throws -> String) throws -> String {
    do { return try write() } catch { throw PropertyViolation(description: "a parsed value does not serialise: \(error)") }
}

/// A re-parse of a serialisation: it must not fail (what was written can be read).
func reparsed<Value>(_ text: String, _ parse: (String) throws -> Value) throws -> Value {
    do { return try parse(text) } catch {
        throw PropertyViolation(description: "the serialisation \(text.debugDescription) does not parse: \(error)")
    }
}
