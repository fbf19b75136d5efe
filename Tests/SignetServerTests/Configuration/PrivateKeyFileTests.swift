// SPDX-License-Identifier: Apache-2.0
import Crypto
import Foundation
import Testing

@testable import SignetServer

/// Instances starting together on one volume end up with one key, whoever wrote it.
@Suite struct PrivateKeyFileTests {
    @Test func concurrentFirstStartsAllReadTheOneKeyThatWasWritten() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("signet-keyfile-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("tokens.pem").path
        let texts = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<16 {
                group.addTask {
                    try PrivateKeyFile.loadOrCreate(path, what: "a test key", at: "tokens.keyFile") { P256.Signing.PrivateKey().pemRepresentation }
                }
            }
            return try await group.reduce(into: Set<String>()) { $0.insert($1) }
        }
        #expect(texts.count == 1)
        #expect(texts.first == String(decoding: FileManager.default.contents(atPath: path) ?? Data(), as: UTF8.self))
        let mode = try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int
        #expect(mode == 0o600)
        // No temporary file is left behind.
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["tokens.pem"])
        // The device CA is a pair: instances starting together all load the one pair one of them wrote.
        let caFile = folder.appendingPathComponent("ca.pem").path
        let caKey = folder.appendingPathComponent("ca.key").path
        let serials = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<8 {
                group.addTask {
                    let ca = try DeviceCertificateAuthority.loadOrCreate(certificateFile: caFile, keyFile: caKey, validityDays: 30)
                    return try ca.issuer.certificatePEM
                }
            }
            return try await group.reduce(into: Set<String>()) { $0.insert($1) }
        }
        #expect(serials.count == 1, "\(serials)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted() == ["ca.key", "ca.pem", "tokens.pem"])
        // A file that cannot be made or read is the operator's to fix, at the key that names it.
        let nowhere = folder.appendingPathComponent("missing/tokens.pem").path
        let unwritable = #expect(throws: ConfigurationError.self) {
            try PrivateKeyFile.loadOrCreate(nowhere, what: "a test key", at: "tokens.keyFile") { "" }
        }
        #expect(unwritable?.path == "tokens.keyFile" && unwritable?.kind == .file, "\(String(describing: unwritable))")
        let unreadable = #expect(throws: ConfigurationError.self) { try PrivateKeyFile.loadOrCreate(nowhere, what: "a test key", at: "tokens.retiredKeys[0].keyFile", create: false) { "" } }
        #expect(unreadable?.path == "tokens.retiredKeys[0].keyFile" && unreadable?.message.contains(nowhere) == true)
    }
}
