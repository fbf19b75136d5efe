// SPDX-License-Identifier: Apache-2.0
import Foundation
import SignetCore

/// The repository's test vectors (`Tests/Vectors`), read for seeds.
struct TestVectors {
    let folder: URL

    func bytes(_ path: String) throws -> [UInt8] {
        Array(try Data(contentsOf: folder.appendingPathComponent(path)))
    }

    func text(_ path: String) throws -> String {
        String(decoding: try bytes(path), as: UTF8.self)
    }

    /// A JSON object of the vectors.
    func object(_ path: String) throws -> [String: Any] {
        guard let object = try JSONSerialization.jsonObject(with: Data(try bytes(path))) as? [String: Any] else {
            throw PropertyViolation(description: "\(path) is not a JSON object")
        }
        return object
    }

    /// Every file of a folder, by name.
    func files(in path: String, suffix: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: folder.appendingPathComponent(path).path)
            .filter { $0.hasSuffix(suffix) }.sorted().map { path + "/" + $0 }
    }

    /// The App Attest fixtures' CBOR objects (attestations and assertions), decoded from base64.
    func appAttestObjects() throws -> [[UInt8]] {
        try files(in: "appattest", suffix: ".json").compactMap { path in
            let object = try self.object(path)
            let text = (object["attestation_b64"] ?? object["assertion_b64"]) as? String
            return text.flatMap { Base64.decode($0) ?? Base64.urlDecode($0) }
        }
    }

    /// Every field (name lowercased, value) of the RFC 9421 example messages.
    func messageFields() throws -> [(name: String, value: String)] {
        try files(in: "rfc9421/messages", suffix: ".json").flatMap { path in
            ((try object(path)["headers"] as? [[String]]) ?? []).compactMap { pair in
                pair.count == 2 ? (pair[0].lowercased(), pair[1]) : nil
            }
        }
    }

    /// The raw HTTP/1 text of RFC 9421's example messages.
    func rawMessages() throws -> [[UInt8]] {
        let messages = (try object("rfc9421/rfc9421-appendix-b.json")["messages"] as? [String: Any]) ?? [:]
        return messages.keys.sorted().compactMap { name in
            ((messages[name] as? [String: Any])?["raw"] as? String).map { Array($0.utf8) }
        }
    }
}
