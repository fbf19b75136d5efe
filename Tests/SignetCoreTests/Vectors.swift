// SPDX-License-Identifier: Apache-2.0
import Foundation
import SignetCore

/// The known-answer vectors the repository keeps (`Tests/Vectors`, provenance in its README), or
/// another copy named by `SIGNET_VECTORS`.
enum Vectors {
    static let root: URL = {
        if let path = ProcessInfo.processInfo.environment["SIGNET_VECTORS"] {
            return URL(fileURLWithPath: path)
        }
        // Tests/SignetCoreTests/Vectors.swift → Tests/Vectors
        return URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Vectors")
    }()

    static func data(_ path: String) throws -> Data {
        try Data(contentsOf: root.appendingPathComponent(path))
    }

    static func text(_ path: String) throws -> String {
        String(decoding: try data(path), as: UTF8.self)
    }

    static func json(_ path: String) throws -> [String: Any] {
        guard let object = try JSONSerialization.jsonObject(with: try data(path)) as? [String: Any] else {
            throw VectorError("\(path) is not a JSON object")
        }
        return object
    }

    /// Parses one of the vectors' raw HTTP messages.
    static func message(_ raw: String, scheme: String = "https") throws -> HTTPMessage {
        var codec = HTTP1MessageCodec()
        codec.defaultScheme = scheme
        return try codec.decode(Array(raw.utf8))
    }

    /// RFC 9421 test key `name` (B.1) as a verification key.
    static func publicKey(_ name: String) throws -> VerificationKey {
        if name == "test-shared-secret" {
            return try SigningKey(base64Secret: try text("rfc9421/keys/test-shared-secret.b64")).verificationKey
        }
        return try VerificationKey(pem: try text("rfc9421/keys/\(name).pub.pem"))
    }

    static func privateKey(_ name: String) throws -> SigningKey {
        if name == "test-shared-secret" {
            return try SigningKey(base64Secret: try text("rfc9421/keys/test-shared-secret.b64"))
        }
        return try SigningKey(pem: try text("rfc9421/keys/\(name).key.pem"))
    }

    /// The algorithm the RFC uses each test key with.
    static let algorithmOfKey: [String: String] = [
        "test-key-rsa": "rsa-v1_5-sha256",
        "test-key-rsa-pss": "rsa-pss-sha512",
        "test-key-ecc-p256": "ecdsa-p256-sha256",
        "test-key-ed25519": "ed25519",
        "test-shared-secret": "hmac-sha256",
    ]

    static func keyRing(_ names: [String] = Array(algorithmOfKey.keys)) throws -> KeyRing {
        KeyRing(try names.map { KeyRecord(keyID: $0, algorithm: algorithmOfKey[$0]!, key: try publicKey($0)) })
    }
}

struct VectorError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

extension Dictionary where Key == String, Value == Any {
    func string(_ key: String) throws -> String {
        guard let value = self[key] as? String else { throw VectorError("missing string \(key)") }
        return value
    }
    func object(_ key: String) throws -> [String: Any] {
        guard let value = self[key] as? [String: Any] else { throw VectorError("missing object \(key)") }
        return value
    }
    func objects(_ key: String) throws -> [[String: Any]] {
        guard let value = self[key] as? [[String: Any]] else { throw VectorError("missing array \(key)") }
        return value
    }
}
