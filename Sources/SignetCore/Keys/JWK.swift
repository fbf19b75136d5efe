// SPDX-License-Identifier: Apache-2.0
import Crypto
import Foundation
import SwiftASN1
import _CryptoExtras

/// A JSON Web Key (RFC 7517; OKP keys per RFC 8037). Members are base64url without padding.
public struct JWK: Codable, Sendable, Hashable {
    public var kty: String
    public var crv: String?
    public var x: String?
    public var y: String?
    public var d: String?
    public var n: String?
    public var e: String?
    public var p: String?
    public var q: String?
    public var dp: String?
    public var dq: String?
    public var qi: String?
    public var k: String?
    public var kid: String?
    public var alg: String?
    public var use: String?

    public init(kty: String) { self.kty = kty }

    /// Parses a JWK from JSON, bounded to 16 KiB.
    public init(json: some Sequence<UInt8>) throws {
        let bytes = Array(json)
        guard bytes.count <= 16 * 1024 else { throw SignetError(.invalidKey, "JWK larger than 16 KiB") }
        do {
            self = try JSONDecoder().decode(JWK.self, from: Data(bytes))
        } catch {
            throw SignetError(.invalidKey, "not a JWK: \(error)")
        }
    }

    /// Compact JSON with sorted keys.
    public var jsonString: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: (try? encoder.encode(self)) ?? Data(), as: UTF8.self)
    }

    /// The RFC 7638 thumbprint: base64url(SHA-256) of the required public members, sorted, compact.
    public var thumbprint: String {
        get throws {
            let members: [(String, String?)]
            switch kty {
            case "EC": members = [("crv", crv), ("kty", kty), ("x", x), ("y", y)]
            case "OKP": members = [("crv", crv), ("kty", kty), ("x", x)]
            case "RSA": members = [("e", e), ("kty", kty), ("n", n)]
            case "oct": members = [("k", k), ("kty", kty)]
            default: throw SignetError(.invalidKey, "no thumbprint rule for kty \(kty.debugDescription)")
            }
            var json = "{"
            for (index, (name, value)) in members.enumerated() {
                guard let value else { throw SignetError(.invalidKey, "JWK lacks required member \(name)") }
                json += (index > 0 ? "," : "") + "\"\(name)\":\"\(value)\""
            }
            json += "}"
            return Base64.urlEncode(SHA256.hash(data: Array(json.utf8)))
        }
    }

    /// The same key without private members.
    public var publicJWK: JWK {
        var copy = self
        copy.d = nil
        copy.p = nil
        copy.q = nil
        copy.dp = nil
        copy.dq = nil
        copy.qi = nil
        if kty == "oct" { copy.k = nil }
        return copy
    }

    func bytes(_ member: String?, _ name: String) throws -> [UInt8] {
        guard let member else { throw SignetError(.invalidKey, "JWK lacks member \(name)") }
        guard let bytes = Base64.urlDecode(member) else {
            throw SignetError(.invalidKey, "JWK member \(name) is not base64url")
        }
        return bytes
    }
}

extension VerificationKey {
    /// A verification key from a JWK; private members are ignored. An `oct` key yields its secret.
    public init(jwk: JWK) throws {
        do {
            switch (jwk.kty, jwk.crv) {
            case ("EC", "P-256"):
                let point = [0x04] + (try jwk.bytes(jwk.x, "x")) + (try jwk.bytes(jwk.y, "y"))
                self.init(.p256(try P256.Signing.PublicKey(x963Representation: point)))
            case ("EC", "P-384"):
                let point = [0x04] + (try jwk.bytes(jwk.x, "x")) + (try jwk.bytes(jwk.y, "y"))
                self.init(.p384(try P384.Signing.PublicKey(x963Representation: point)))
            case ("OKP", "Ed25519"):
                try self.init(ed25519Raw: try jwk.bytes(jwk.x, "x"))
            case ("RSA", _):
                self.init(.rsa(try _RSA.Signing.PublicKey(n: try jwk.bytes(jwk.n, "n"), e: try jwk.bytes(jwk.e, "e"))))
            case ("oct", _):
                self.init(.symmetric(SharedSecret(SymmetricKey(data: try jwk.bytes(jwk.k, "k")))))
            default:
                throw SignetError(.invalidKey, "unsupported JWK kty \(jwk.kty) crv \(jwk.crv ?? "-")")
            }
        } catch let error as SignetError {
            throw error
        } catch {
            throw SignetError(.invalidKey, "invalid JWK: \(error)")
        }
    }

    /// The public JWK (for HMAC, the `oct` key with its secret: keep it private).
    public var jwk: JWK {
        switch storage {
        case .symmetric(let key):
            var jwk = JWK(kty: "oct")
            jwk.k = key.key.withUnsafeBytes { Base64.urlEncode($0) }
            return jwk
        case .p256(let key): return Self.ecJWK(crv: "P-256", x963: Array(key.x963Representation))
        case .p384(let key): return Self.ecJWK(crv: "P-384", x963: Array(key.x963Representation))
        case .ed25519(let key):
            var jwk = JWK(kty: "OKP")
            jwk.crv = "Ed25519"
            jwk.x = Base64.urlEncode(key.rawRepresentation)
            return jwk
        case .rsa(let key):
            var jwk = JWK(kty: "RSA")
            if let primitives = try? key.getKeyPrimitives() {
                jwk.n = Base64.urlEncode(primitives.modulus.drop(while: { $0 == 0 }))
                jwk.e = Base64.urlEncode(primitives.publicExponent.drop(while: { $0 == 0 }))
            }
            return jwk
        }
    }

    private static func ecJWK(crv: String, x963: [UInt8]) -> JWK {
        let size = (x963.count - 1) / 2
        var jwk = JWK(kty: "EC")
        jwk.crv = crv
        jwk.x = Base64.urlEncode(x963[1...size])
        jwk.y = Base64.urlEncode(x963[(size + 1)...])
        return jwk
    }
}

extension SigningKey {
    /// A signing key from a JWK with its private members (`d`, or `k` for HMAC).
    public init(jwk: JWK) throws {
        do {
            switch (jwk.kty, jwk.crv) {
            case ("EC", "P-256"):
                self.init(.p256(try P256.Signing.PrivateKey(rawRepresentation: try jwk.bytes(jwk.d, "d"))))
            case ("EC", "P-384"):
                self.init(.p384(try P384.Signing.PrivateKey(rawRepresentation: try jwk.bytes(jwk.d, "d"))))
            case ("OKP", "Ed25519"):
                self.init(.ed25519(try Curve25519.Signing.PrivateKey(rawRepresentation: try jwk.bytes(jwk.d, "d"))))
            case ("RSA", _):
                self.init(
                    .rsa(
                        try _RSA.Signing.PrivateKey(
                            n: try jwk.bytes(jwk.n, "n"),
                            e: try jwk.bytes(jwk.e, "e"),
                            d: try jwk.bytes(jwk.d, "d"),
                            p: try jwk.bytes(jwk.p, "p"),
                            q: try jwk.bytes(jwk.q, "q")
                        )
                    )
                )
            case ("oct", _):
                try self.init(secret: try jwk.bytes(jwk.k, "k"))
            default:
                throw SignetError(.invalidKey, "unsupported JWK kty \(jwk.kty) crv \(jwk.crv ?? "-")")
            }
        } catch let error as SignetError {
            throw error
        } catch {
            throw SignetError(.invalidKey, "invalid private JWK: \(error)")
        }
        // The public members, when present, must describe the same key.
        if jwk.x != nil || jwk.n != nil {
            let expected = try VerificationKey(jwk: jwk).jwk
            let actual = verificationKey.jwk
            guard expected.x == actual.x, expected.y == actual.y, expected.n == actual.n else {
                throw SignetError(.invalidKey, "the JWK's public members do not match its private key")
            }
        }
    }

    /// The private JWK (`d`, and for RSA also `p`, `q`, `dp`, `dq`, `qi`).
    public var jwk: JWK {
        var jwk = verificationKey.jwk
        switch storage {
        case .symmetric: break
        case .p256(let key): jwk.d = Base64.urlEncode(key.rawRepresentation)
        case .p384(let key): jwk.d = Base64.urlEncode(key.rawRepresentation)
        case .ed25519(let key): jwk.d = Base64.urlEncode(key.rawRepresentation)
        case .rsa(let key):
            if let numbers = try? RSAPrivateNumbers(pkcs1: Array(key.derRepresentation)) {
                jwk.d = Base64.urlEncode(numbers.d)
                jwk.p = Base64.urlEncode(numbers.p)
                jwk.q = Base64.urlEncode(numbers.q)
                jwk.dp = Base64.urlEncode(numbers.dp)
                jwk.dq = Base64.urlEncode(numbers.dq)
                jwk.qi = Base64.urlEncode(numbers.qi)
            }
        }
        return jwk
    }
}

/// RSAPrivateKey (RFC 8017 A.1.2), read to export a private JWK.
private struct RSAPrivateNumbers {
    var d, p, q, dp, dq, qi: ArraySlice<UInt8>

    init(pkcs1 der: [UInt8]) throws {
        (d, p, q, dp, dq, qi) = try DER.sequence(try DER.parse(der), identifier: .sequence) { nodes in
            _ = try Int(derEncoded: &nodes)
            _ = try ArraySlice<UInt8>(derEncoded: &nodes)  // n
            _ = try ArraySlice<UInt8>(derEncoded: &nodes)  // e
            let values = try (0..<6).map { _ in try ArraySlice<UInt8>(derEncoded: &nodes).drop(while: { $0 == 0 }) }
            while nodes.next() != nil {}
            return (values[0], values[1], values[2], values[3], values[4], values[5])
        }
    }
}
