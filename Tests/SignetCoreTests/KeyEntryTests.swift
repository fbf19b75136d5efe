// SPDX-License-Identifier: Apache-2.0
import Crypto
import Foundation
import Testing

@testable import SignetCore

/// Keys that need no private key, or are no point at all, are refused wherever a key enters: raw
/// bytes, JWK and PEM (SPKI).
@Suite struct KeyEntryTests {
    /// Every encoding of the eight small-order points (both signs of x, and y + p where it fits in
    /// 255 bits), computed with Python from the curve equation, plus other non-canonical y (≥ p).
    static let refusedEd25519: [String] = [
        "0000000000000000000000000000000000000000000000000000000000000000",
        "0000000000000000000000000000000000000000000000000000000000000080",
        "0100000000000000000000000000000000000000000000000000000000000000",
        "0100000000000000000000000000000000000000000000000000000000000080",
        "26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05",
        "26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc85",
        "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a",
        "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac03fa",
        "ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
        "ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff",
        "edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
        "edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff",
        "eeffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
        "eeffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff",
        // Non-canonical but not small order: y = p + 2 … 2^255 − 1.
        "efffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
        "ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
    ]

    @Test(arguments: refusedEd25519)
    func ed25519KeysOfSmallOrderOrNonCanonicalAreRefusedInEveryForm(_ hex: String) throws {
        let raw = Self.bytes(hex: hex)
        #expect(throws: SignetError(.invalidKey, "")) { try VerificationKey(ed25519Raw: raw) }
        var jwk = JWK(kty: "OKP")
        jwk.crv = "Ed25519"
        jwk.x = Base64.urlEncode(raw)
        #expect(throws: SignetError(.invalidKey, "")) { try VerificationKey(jwk: jwk) }
        // SPKI: SEQUENCE { SEQUENCE { OID 1.3.101.112 } BIT STRING { 00 ‖ key } }
        let spki: [UInt8] = [0x30, 0x2a, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x03, 0x21, 0x00] + raw
        let pem = "-----BEGIN PUBLIC KEY-----\n\(Data(spki).base64EncodedString())\n-----END PUBLIC KEY-----\n"
        #expect(throws: SignetError(.invalidKey, "")) { try VerificationKey(pem: pem) }
    }

    /// The twin: real keys in the same three forms are taken.
    @Test func ed25519KeysOfLargeOrderAreTaken() throws {
        for _ in 0..<32 {
            let key = Curve25519.Signing.PrivateKey().publicKey
            let raw = Array(key.rawRepresentation)
            #expect(try VerificationKey(ed25519Raw: raw).type == .ed25519)
            let entered = try VerificationKey(ed25519Raw: raw)
            #expect(try VerificationKey(jwk: entered.jwk).type == .ed25519)
            let spki = try #require(entered.spkiDER)
            let pem = "-----BEGIN PUBLIC KEY-----\n\(Data(spki).base64EncodedString())\n-----END PUBLIC KEY-----\n"
            #expect(try VerificationKey(pem: pem).type == .ed25519)
        }
    }

    /// The forged-signature attack the check stops: under the identity point, R = identity and S = 0
    /// verify for any message in a cofactored or lax verifier. Whatever BoringSSL decides, the key
    /// never gets that far.
    @Test func theIdentityPointCannotBecomeAKeyRecord() throws {
        let identity = [0x01] + [UInt8](repeating: 0, count: 31)
        let error = #expect(throws: SignetError.self) { try VerificationKey(ed25519Raw: identity) }
        #expect(error?.code == .invalidKey)
        #expect(error?.reason.contains("small order") == true)
    }

    @Test func p256PointsOffTheCurveOrAtInfinityAreRefused() throws {
        let good = Array(P256.Signing.PrivateKey().publicKey.x963Representation)
        var offCurve = good
        offCurve[64] ^= 0x01
        for bad in [offCurve, [0x00], [0x04] + [UInt8](repeating: 0, count: 64), Array(good.prefix(33))] {
            #expect(throws: SignetError(.invalidKey, "")) { try VerificationKey(p256X963: bad) }
        }
        var jwk = try VerificationKey(p256X963: good).jwk
        jwk.y = Base64.urlEncode(Array(offCurve[33...]))
        #expect(throws: SignetError(.invalidKey, "")) { try VerificationKey(jwk: jwk) }
        jwk.x = Base64.urlEncode([UInt8](repeating: 0, count: 32))
        jwk.y = Base64.urlEncode([UInt8](repeating: 0, count: 32))
        #expect(throws: SignetError(.invalidKey, "")) { try VerificationKey(jwk: jwk) }
        // SPKI with the off-curve point.
        let spkiPrefix: [UInt8] = [
            0x30, 0x59, 0x30, 0x13, 0x06, 0x07, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01, 0x06, 0x08, 0x2a, 0x86,
            0x48, 0xce, 0x3d, 0x03, 0x01, 0x07, 0x03, 0x42, 0x00,
        ]
        let pem = "-----BEGIN PUBLIC KEY-----\n\(Data(spkiPrefix + offCurve).base64EncodedString(options: .lineLength64Characters))\n-----END PUBLIC KEY-----\n"
        #expect(throws: SignetError(.invalidKey, "")) { try VerificationKey(pem: pem) }
        // The twin: the genuine point in each form.
        #expect(try VerificationKey(p256X963: good).type == .p256)
        let genuinePEM = "-----BEGIN PUBLIC KEY-----\n\(Data(spkiPrefix + good).base64EncodedString(options: .lineLength64Characters))\n-----END PUBLIC KEY-----\n"
        #expect(try VerificationKey(pem: genuinePEM).type == .p256)
    }

    static func bytes(hex: String) -> [UInt8] {
        var out: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            out.append(UInt8(hex[index..<next], radix: 16)!)
            index = next
        }
        return out
    }
}
