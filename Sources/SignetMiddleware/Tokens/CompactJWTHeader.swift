// SPDX-License-Identifier: Apache-2.0
import Foundation
import SignetCore

/// The protected header of a compact JWS, read before any key is chosen: bounded, three parts,
/// no `crit` (RFC 7515 §4.1.11: an extension we do not know must make the token invalid).
public struct CompactJWTHeader: Sendable {
    /// Tokens are a few hundred bytes; a large one is refused before any decoding.
    public static let maximumTokenBytes = 8192

    public var alg: String?
    public var kid: String?
    public var typ: String?

    /// Reads the header of `token`; `code` (`token_invalid`) naming it as `what` for anything but
    /// a bounded three-part JWS with a JSON object header, no `crit`, and the type `type` — or,
    /// with `type` `nil`, no `typ` other than JWT. A token of one type never passes as another
    /// (an app token is no client attestation).
    public init(_ token: String, type: String? = nil, refusing code: SignetError.Code = .tokenInvalid, _ what: String = "token") throws {
        guard token.utf8.count <= Self.maximumTokenBytes else {
            throw SignetError(code, "the \(what) is longer than \(Self.maximumTokenBytes) bytes")
        }
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, !parts[2].isEmpty, let bytes = Base64.urlDecode(String(parts[0])),
            let object = try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any]
        else {
            throw SignetError(code, "the \(what) is not a compact JWS")
        }
        guard object["crit"] == nil else {
            throw SignetError(code, "the \(what)'s header has critical extensions")
        }
        alg = object["alg"] as? String
        kid = object["kid"] as? String
        typ = object["typ"] as? String
        if let type {
            guard typ?.lowercased() == type.lowercased() else {
                throw SignetError(code, "the \(what)'s type is \(typ.map { $0.debugDescription } ?? "missing"), not \(type)")
            }
        } else if let typ, typ.uppercased() != "JWT" {
            throw SignetError(code, "the \(what)'s type is \(typ.debugDescription), not JWT")
        }
    }
}
