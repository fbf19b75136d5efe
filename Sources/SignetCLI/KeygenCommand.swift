// SPDX-License-Identifier: Apache-2.0
import ArgumentParser
import Crypto
import Foundation
import SignetCore

struct KeygenCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keygen",
        abstract: "Generate a key pair (PEM and JWK) or an HMAC secret, and print its key id.",
        discussion: """
            Asymmetric keys are written as NAME.key.pem (PKCS#8), NAME.pub.pem (SPKI), NAME.jwk.json \
            (private) and NAME.pub.jwk.json; an HMAC secret as NAME.secret.b64. The key id is the RFC 7638 \
            JWK thumbprint (random for HMAC) unless --kid gives one. NAME defaults to the key id, so a \
            directory of generated keys is a key directory for `signet verify --key DIR`. \
            With --alg hpke-x25519 or hpke-p256, an Oblivious HTTP key for the gateway: NAME.key.pem (PKCS#8, \
            for ohttp.keys[].keyFile) and NAME.ohttp-keys (its key configuration, application/ohttp-keys, to \
            compile into apps or pass to `signet request --ohttp-keys`); NAME defaults to ohttp-ID, ID being --ohttp-key-id.
            """
    )

    @Option(
        help: "ed25519, ecdsa-p256-sha256, ecdsa-p384-sha384, rsa-pss-sha512, rsa-v1_5-sha256, hmac-sha256, or hpke-x25519 / hpke-p256 for Oblivious HTTP."
    )
    var alg: String

    @Option(help: "The Oblivious HTTP key id, 0 to 255 (with --alg hpke-*); --kid names signing keys.")
    var ohttpKeyId: Int?

    @Option(help: "Directory to write into.")
    var out: String = "."

    @Option(name: [.customLong("kid"), .customLong("keyid")], help: "Key id to use instead of the thumbprint.")
    var kid: String?

    @Option(help: "File name stem (default: the key id).")
    var name: String?

    @Option(help: "RSA modulus size in bits.")
    var rsaBits: Int = 2048

    @Flag(help: "Replace existing files.")
    var force = false

    func run() throws {
        if alg.hasPrefix("hpke-") { return try writeObliviousKey() }
        guard let algorithm = SignatureAlgorithms.standard[alg] else {
            throw ValidationError(
                "unknown algorithm \(alg); one of \(SignatureAlgorithms.standard.names.joined(separator: ", "))"
            )
        }
        let key = try SigningKey.generate(algorithm.keyType, rsaBits: rsaBits)
        var publicJWK = key.verificationKey.jwk
        let keyID: String
        if let kid {
            keyID = kid
        } else if algorithm.keyType == .symmetric {
            keyID = "hmac-" + Nonce.random().prefix(12)
        } else {
            keyID = try publicJWK.thumbprint
        }
        // Like `mkdir -p`: a missing output folder is made, not an error.
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
        let stem = CLIInput.path(in: out, name ?? keyID)
        var written: [String] = []
        if algorithm.keyType == .symmetric {
            let secret = Base64.encode(Base64.urlDecode(publicJWK.k ?? "") ?? [])
            try CLIInput.write(secret + "\n", to: stem + ".secret.b64", private: true, force: force)
            written.append(stem + ".secret.b64")
        } else {
            publicJWK.kid = keyID
            publicJWK.alg = algorithm.name
            var privateJWK = key.jwk
            privateJWK.kid = keyID
            privateJWK.alg = algorithm.name
            try CLIInput.write(key.pemRepresentation ?? "", to: stem + ".key.pem", private: true, force: force)
            try CLIInput.write(
                key.verificationKey.pemRepresentation ?? "",
                to: stem + ".pub.pem",
                private: false,
                force: force
            )
            try CLIInput.write(privateJWK.jsonString + "\n", to: stem + ".jwk.json", private: true, force: force)
            try CLIInput.write(publicJWK.jsonString + "\n", to: stem + ".pub.jwk.json", private: false, force: force)
            written += [".key.pem", ".pub.pem", ".jwk.json", ".pub.jwk.json"].map { stem + $0 }
        }
        print("keyid: \(keyID)")
        print("alg: \(algorithm.name)")
        for path in written { print("wrote: \(path)") }
    }

    /// An HPKE key pair for the gateway's Oblivious HTTP endpoint.
    private func writeObliviousKey() throws {
        let privateKey: OHTTPGatewayKey.PrivateKey
        switch alg {
        case "hpke-x25519": privateKey = .x25519(.init())
        case "hpke-p256": privateKey = .p256(.init())
        default: throw ValidationError("unknown algorithm \(alg); hpke-x25519 or hpke-p256")
        }
        guard let keyId = ohttpKeyId else { throw ValidationError("--alg \(alg) needs --ohttp-key-id (0 to 255)") }
        guard (0...255).contains(keyId) else { throw ValidationError("--ohttp-key-id is 0 to 255") }
        let key = OHTTPGatewayKey(keyID: UInt8(keyId), privateKey: privateKey)
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
        let stem = CLIInput.path(in: out, name ?? "ohttp-\(keyId)")
        try CLIInput.write(privateKey.pemRepresentation, to: stem + ".key.pem", private: true, force: force)
        try CLIInput.write(
            OHTTPKeyConfiguration.encodeList([key.configuration]),
            to: stem + ".ohttp-keys",
            private: false,
            force: force
        )
        print("key-id: \(keyId)")
        print("alg: \(alg)")
        print("wrote: \(stem).key.pem")
        print("wrote: \(stem).ohttp-keys")
    }
}
