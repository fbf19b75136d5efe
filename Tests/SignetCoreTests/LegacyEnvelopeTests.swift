// SPDX-License-Identifier: Apache-2.0
import Crypto
import Foundation
import SignetCore
import Testing

/// RNCryptor v3's published vectors (key, password and key-derivation files) and the JSON envelope,
/// with every altered byte refused under one reason code.
@Suite struct LegacyEnvelopeTests {
    /// The vector files' records: `name: value` lines, a blank line between records.
    static func records(_ file: String) throws -> [[String: String]] {
        var records: [[String: String]] = []
        var current: [String: String] = [:]
        for line in try Vectors.text("rncryptor/\(file)").split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("#") { continue }
            guard let colon = line.firstIndex(of: ":") else {
                if !current.isEmpty { records.append(current) }
                current = [:]
                continue
            }
            current[String(line[..<colon])] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        if !current.isEmpty { records.append(current) }
        return records.filter { $0["version"] == "3" }
    }

    static func hex(_ text: String?) -> [UInt8] {
        let digits = Array((text ?? "").filter(\.isHexDigit).utf8)
        return stride(from: 0, to: digits.count - 1, by: 2).map {
            UInt8(String(decoding: digits[$0...$0 + 1], as: UTF8.self), radix: 16)!
        }
    }

    static func refusesEveryAlteredByte(_ data: [UInt8], keys: [EnvelopeKey]) {
        for index in data.indices {
            var altered = data
            altered[index] ^= 0x01
            let error = #expect(throws: SignetError.self) { try RNCryptorV3.open(altered, keys: keys) }
            #expect(error?.code == .envelopeInvalid, "byte \(index)")
        }
        #expect(throws: SignetError.self) { try RNCryptorV3.open(Array(data.dropLast()), keys: keys) }
    }

    @Test func keyVectors() throws {
        let records = try Self.records("v3-key")
        #expect(records.count >= 4)
        for record in records {
            let key = try EnvelopeKey(
                version: "",
                encryptionKey: Self.hex(record["enc_key_hex"]),
                macKey: Self.hex(record["hmac_key_hex"])
            )
            let expected = Self.hex(record["ciphertext_hex"])
            let plaintext = Self.hex(record["plaintext_hex"])
            #expect(try RNCryptorV3.seal(plaintext, key: key, iv: Self.hex(record["iv_hex"])) == expected, "\(record["title"]!)")
            #expect(try RNCryptorV3.open(expected, keys: [key]).plaintext == plaintext)
            Self.refusesEveryAlteredByte(expected, keys: [key])
        }
    }

    @Test func passwordVectors() throws {
        let records = try Self.records("v3-password")
        #expect(records.count >= 4)
        for record in records {
            let expected = Self.hex(record["ciphertext_hex"])
            let salts = try #require(RNCryptorV3.salts(of: expected))
            #expect(salts.encryption == Self.hex(record["enc_salt_hex"]) && salts.mac == Self.hex(record["hmac_salt_hex"]))
            let key = try RNCryptorV3.key(password: Array(record["password"]!.utf8), salts: salts)
            let plaintext = Self.hex(record["plaintext_hex"])
            #expect(try RNCryptorV3.seal(plaintext, key: key, passwordSalts: salts, iv: Self.hex(record["iv_hex"])) == expected)
            #expect(try RNCryptorV3.open(expected, keys: [key]).plaintext == plaintext, "\(record["title"]!)")
        }
        // The wrong password is the same refusal as any other.
        let first = Self.hex(try #require(records.first)["ciphertext_hex"])
        let wrong = try RNCryptorV3.key(password: Array("not it".utf8), salts: RNCryptorV3.salts(of: first)!)
        #expect(throws: SignetError(.envelopeInvalid, "")) { try RNCryptorV3.open(first, keys: [wrong]) }
    }

    @Test func keyDerivationVectors() throws {
        let records = try Self.records("v3-kdf")
        #expect(records.count >= 3)
        for record in records {
            let salt = Self.hex(record["salt_hex"])
            let key = try RNCryptorV3.key(password: Array(record["password"]!.utf8), salts: (salt, salt))
            #expect(key.encryptionKey.withUnsafeBytes { Array($0) } == Self.hex(record["key_hex"]), "\(record["title"]!)")
        }
    }

    @Test func theJSONEnvelopeChecksItsMACBeforeDecryptingAndPicksTheKeyByVersion() throws {
        let v1 = try EnvelopeKey(version: "1", encryptionKey: Array(repeating: 1, count: 32), macKey: Array(repeating: 2, count: 32))
        let v2 = try EnvelopeKey(version: "2", encryptionKey: Array(repeating: 3, count: 32), macKey: Array(repeating: 4, count: 32))
        let plaintext = Array(#"{"to":"1234","from":"4321","amount":"2300.00"}"#.utf8)
        let sealed = try JSONEnvelope.seal(plaintext, key: v2)
        let opened = try JSONEnvelope.open(sealed, keys: [v1, v2])
        #expect(opened.plaintext == plaintext && opened.key.version == "2")

        // Custom member names, no version member: the first key.
        let names = JSONEnvelope.FieldNames(mac: "hmac", iv: "nonce", payload: "data", version: nil)
        let custom = try JSONEnvelope.seal(plaintext, key: v1, names: names)
        #expect(try JSONEnvelope.open(custom, keys: [v1], names: names).plaintext == plaintext)

        var object = try #require(try JSONSerialization.jsonObject(with: Data(sealed)) as? [String: String])
        func refused(_ change: (inout [String: String]) -> Void) throws -> Bool {
            var copy = object
            change(&copy)
            let bytes = Array(try JSONSerialization.data(withJSONObject: copy))
            return (try? JSONEnvelope.open(bytes, keys: [v1, v2])) == nil
        }
        #expect(try refused { $0["version"] = "3" })
        #expect(try refused { $0["version"] = "1" })
        #expect(try refused { $0["mac"] = Base64.encode([UInt8](repeating: 0, count: 32)) })
        #expect(try refused { $0["iv"] = Base64.encode([UInt8](repeating: 0, count: 16)) })
        #expect(try refused { $0["payload"] = String($0["payload"]!.dropLast(4)) })
        #expect(try refused { $0["mac"] = nil })
        #expect(try refused { $0["payload"] = "not base64!" })
        object["extra"] = "ignored"
        #expect(try !refused { _ in })
        #expect(throws: SignetError(.envelopeInvalid, "")) { try JSONEnvelope.open(Array("[]".utf8), keys: [v1]) }
    }
}
