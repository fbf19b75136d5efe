// SPDX-License-Identifier: Apache-2.0
import Foundation

/// A compact JSON object written member by member, strings escaped by `JSONEncoder`.
struct JSONObjectWriter {
    private var members: [String] = []
    private static let encoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .withoutEscapingSlashes
        return encoder
    }()

    mutating func add(_ name: String, _ value: String) {
        addRaw(name, String(decoding: (try? Self.encoder.encode(value)) ?? Data("\"\"".utf8), as: UTF8.self))
    }

    mutating func addRaw(_ name: String, _ json: String) {
        members.append("\"\(name)\":\(json)")
    }

    var bytes: [UInt8] { Array(("{" + members.joined(separator: ",") + "}").utf8) }
}
