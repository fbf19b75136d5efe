// SPDX-License-Identifier: Apache-2.0
import Foundation
import SignetCore
import SignetTestSupport
import Testing

/// Signet against an independent RFC 9421 implementation: pyauth's http-message-signatures 3.0.0,
/// which `.ci/run` installs. Each direction, each algorithm, with Content-Digest.
@Suite(.enabled(if: Interop.available, "python with http-message-signatures is not installed (set SIGNET_PYTHON)"))
struct InteropTests {
    static let algorithms: [(String, KeyType)] = [
        ("hmac-sha256", .symmetric), ("ecdsa-p256-sha256", .p256), ("ed25519", .ed25519), ("rsa-pss-sha512", .rsa),
    ]

    struct Wire: Codable {
        var method: String
        var url: String
        var headers: [[String]]
        var body_b64: String
        var nonce: String?
    }

    static func keyFiles(_ key: SigningKey, in dir: URL) throws -> (privateFile: String, publicFile: String) {
        if key.type == .symmetric {
            let secret = Base64.encode(Base64.urlDecode(key.verificationKey.jwk.k!)!)
            try Data(secret.utf8).write(to: dir.appendingPathComponent("secret.b64"))
            return ("secret.b64", "secret.b64")
        }
        try Data(key.pemRepresentation!.utf8).write(to: dir.appendingPathComponent("key.pem"))
        try Data(key.verificationKey.pemRepresentation!.utf8).write(to: dir.appendingPathComponent("pub.pem"))
        return ("key.pem", "pub.pem")
    }

    static func request() throws -> HTTPMessage {
        try HTTPMessage.request(
            method: "POST",
            uri: "https://api.example.com/v1/scores?game=42&mode=ranked",
            fields: [("Content-Type", "application/json")],
            body: Array("{\"name\":\"Gilgamesh\",\"score\":100}".utf8)
        )
    }

    @Test(arguments: 0..<algorithms.count)
    func signetSignsAndPyauthVerifies(_ index: Int) async throws {
        let (alg, type) = Self.algorithms[index]
        let dir = try SignetProcess.temporaryDirectory()
        let key = try SigningKey.generate(type)
        let files = try Self.keyFiles(key, in: dir)
        let signer = MessageSigner(key: key, keyID: "interop", algorithm: try SignatureAlgorithms.standard.require(alg))
        let signed = try signer.sign(
            try Self.request(),
            components: [.method, .targetURI, .contentDigest, "content-type"],
            created: Date(),
            nonce: "signet-\(alg)"
        )
        let wire = Wire(
            method: "POST",
            url: signed.target!.targetURI,
            headers: signed.fields.lines.map { [$0.name, $0.value] },
            body_b64: Base64.encode(signed.body)
        )
        try JSONEncoder().encode(wire).write(to: dir.appendingPathComponent("m.json"))
        let verdict = try await Interop.peer(["verify", alg, files.publicFile, "interop", "m.json"], in: dir)
        #expect(verdict["ok"] as? Bool == true, "\(verdict)")
        #expect(verdict["body_verified"] as? Bool == true)
        #expect(verdict["nonce"] as? String == "signet-\(alg)")

        // And pyauth rejects what Signet would reject: a body changed under the signed digest.
        var tampered = wire
        tampered.body_b64 = Base64.encode(Array("{\"name\":\"Gilgamesh\",\"score\":999}".utf8))
        try JSONEncoder().encode(tampered).write(to: dir.appendingPathComponent("t.json"))
        #expect(
            try await Interop.peer(["verify", alg, files.publicFile, "interop", "t.json"], in: dir)["ok"] as? Bool == false
        )
    }

    @Test(arguments: 0..<algorithms.count)
    func pyauthSignsAndSignetVerifies(_ index: Int) async throws {
        let (alg, type) = Self.algorithms[index]
        let dir = try SignetProcess.temporaryDirectory()
        let key = try SigningKey.generate(type)
        let files = try Self.keyFiles(key, in: dir)
        let request = try Self.request()
        let wire = Wire(
            method: "POST",
            url: request.target!.targetURI,
            headers: [["Content-Type", "application/json"]],
            body_b64: Base64.encode(request.body),
            nonce: "pyauth-\(alg)"
        )
        try JSONEncoder().encode(wire).write(to: dir.appendingPathComponent("m.json"))
        let output = try await Interop.peerOutput(["sign", alg, files.privateFile, "interop", "m.json"], in: dir)
        let signed = try JSONDecoder().decode(Wire.self, from: Data(output.utf8))
        let message = try HTTPMessage.request(
            method: signed.method,
            uri: signed.url,
            fields: MessageFields(signed.headers.map { MessageFields.Field(name: $0[0], value: $0[1]) }),
            body: Base64.decode(signed.body_b64)!
        )
        let ring = KeyRing([KeyRecord(keyID: "interop", algorithm: alg, key: key.verificationKey)])
        let verifier = MessageVerifier(keys: ring, nonces: MemoryNonceStore())
        let verified = try await verifier.verify(message, now: Date())
        #expect(verified.nonce == "pyauth-\(alg)")
        #expect(verified.covers(.contentDigest))
        #expect(verified.algorithm == alg)
        // The replay is caught by Signet's nonce store.
        let error = await #expect(throws: SignetError.self) { try await verifier.verify(message, now: Date()) }
        #expect(error?.code == .nonceReplayed)
    }
}

enum Interop {
    static let available = PythonPeer.available("http_message_signatures, requests")

    static func peerOutput(_ arguments: [String], in dir: URL) async throws -> String {
        try await PythonPeer.run("pyauth_peer.py", arguments, in: dir)
    }

    static func peer(_ arguments: [String], in dir: URL) async throws -> [String: Any] {
        let output = try await peerOutput(arguments, in: dir)
        return (try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any]) ?? [:]
    }
}

struct VectorError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
