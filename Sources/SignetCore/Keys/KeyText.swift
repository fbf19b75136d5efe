// SPDX-License-Identifier: Apache-2.0
import Foundation

extension SigningKey {
    /// A signing key from text in any supported form: PEM, a JWK object, or a base64 HMAC secret.
    public init(text: String) throws {
        let trimmed = text.trimmingOWSAndNewlines
        if trimmed.hasPrefix("-----BEGIN") {
            try self.init(pem: trimmed)
        } else if trimmed.hasPrefix("{") {
            try self.init(jwk: try JWK(json: Array(trimmed.utf8)))
        } else {
            try self.init(base64Secret: trimmed)
        }
    }
}

extension VerificationKey {
    /// A verification key from text: PEM (public or private), a JWK object, or a base64 HMAC secret.
    public init(text: String) throws {
        let trimmed = text.trimmingOWSAndNewlines
        if trimmed.hasPrefix("-----BEGIN") {
            try self.init(pem: trimmed)
        } else if trimmed.hasPrefix("{") {
            try self.init(jwk: try JWK(json: Array(trimmed.utf8)))
        } else {
            self = try SigningKey(base64Secret: trimmed).verificationKey
        }
    }
}

extension String {
    var trimmingOWSAndNewlines: String {
        String(self.drop(while: \.isWhitespace).reversed().drop(while: \.isWhitespace).reversed())
    }
}
