// SPDX-License-Identifier: Apache-2.0
import Foundation

/// The forms a key can be written in, told apart by their first characters.
enum KeyText {
    case pem(String)
    case jwk(JWK)
    case base64Secret(String)

    init(_ text: String) throws {
        let trimmed = text.trimmingOWSAndNewlines
        if trimmed.hasPrefix("-----BEGIN") {
            self = .pem(trimmed)
        } else if trimmed.hasPrefix("{") {
            self = .jwk(try JWK(json: Array(trimmed.utf8)))
        } else {
            self = .base64Secret(trimmed)
        }
    }
}

extension SigningKey {
    /// A signing key from text in any supported form: PEM, a JWK object, or a base64 HMAC secret.
    public init(text: String) throws {
        switch try KeyText(text) {
        case .pem(let pem): try self.init(pem: pem)
        case .jwk(let jwk): try self.init(jwk: jwk)
        case .base64Secret(let secret): try self.init(base64Secret: secret)
        }
    }
}

extension VerificationKey {
    /// A verification key from text: PEM (public or private), a JWK object, or a base64 HMAC secret.
    public init(text: String) throws {
        switch try KeyText(text) {
        case .pem(let pem): try self.init(pem: pem)
        case .jwk(let jwk): try self.init(jwk: jwk)
        case .base64Secret(let secret): self = try SigningKey(base64Secret: secret).verificationKey
        }
    }
}

extension String {
    var trimmingOWSAndNewlines: String {
        String(self.drop(while: \.isWhitespace).reversed().drop(while: \.isWhitespace).reversed())
    }
}
