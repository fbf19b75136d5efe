// SPDX-License-Identifier: Apache-2.0
import ArgumentParser
import Foundation
import SignetCore

/// Loads keys the way the CLI's `--key` option takes them: a PEM, JWK or base64-secret file, or a
/// directory of such files named after their key ids.
enum KeyFiles {
    /// Suffixes `signet keygen` writes, in order of preference (a JWK names its algorithm); the rest
    /// of the file name is the key id.
    static let suffixes = [
        ".pub.jwk.json", ".jwk.json", ".json", ".pub.pem", ".key.pem", ".pem", ".secret.b64", ".b64",
    ]

    static func signingKey(path: String) throws -> SigningKey {
        try SigningKey(text: try CLIInput.readText(path))
    }

    /// A key ring from a file (under `keyID`) or a directory (each file under its own name).
    static func keyRing(path: String, keyID: String?, algorithm: String?) throws -> KeyRing {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw ValidationError("no key file or directory at \(path)")
        }
        var ring = KeyRing()
        if isDirectory.boolValue {
            // Each key id may have several files (PEM and JWK, public and private): read the preferred one.
            var best: [String: (rank: Int, name: String)] = [:]
            for name in try FileManager.default.contentsOfDirectory(atPath: path) {
                guard let rank = suffixes.firstIndex(where: name.hasSuffix) else { continue }
                let id = String(name.dropLast(suffixes[rank].count))
                if best[id].map({ rank < $0.rank }) ?? true { best[id] = (rank, name) }
            }
            for (id, file) in best.sorted(by: { $0.key < $1.key }) {
                ring.add(try record(path: "\(path)/\(file.name)", keyID: id, algorithm: algorithm))
            }
        } else {
            guard let keyID else { throw ValidationError("--keyid is needed with a single key file") }
            ring.add(try record(path: path, keyID: keyID, algorithm: algorithm))
        }
        return ring
    }

    private static func record(path: String, keyID: String, algorithm: String?) throws -> KeyRecord {
        let text = try CLIInput.readText(path)
        let key = try VerificationKey(text: text)
        let jwkAlg =
            text.trimmingCharacters(in: .whitespaces).hasPrefix("{") ? (try? JWK(json: Array(text.utf8)))?.alg : nil
        return KeyRecord(keyID: keyID, algorithm: algorithm ?? jwkAlg ?? key.type.defaultAlgorithm, key: key)
    }
}
