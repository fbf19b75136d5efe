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
        // Split by bytes: a token is ASCII, and splitting the String walked it by Character
        // (grapheme breaking), 17 µs of a few hundred bytes.
        let parts = token.utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard parts.count == 3, !parts[2].isEmpty, let bytes = Base64.urlDecode(String(Substring(parts[0]))),
            let members = try? JSONDecoder().decode(Members.self, from: Data(bytes))
        else {
            throw SignetError(code, "the \(what) is not a compact JWS")
        }
        guard !members.hasCrit else {
            throw SignetError(code, "the \(what)'s header has critical extensions")
        }
        alg = members.alg
        kid = members.kid
        typ = members.typ
        if let type {
            guard typ?.lowercased() == type.lowercased() else {
                throw SignetError(code, "the \(what)'s type is \(typ.map { $0.debugDescription } ?? "missing"), not \(type)")
            }
        } else if let typ, typ.uppercased() != "JWT" {
            throw SignetError(code, "the \(what)'s type is \(typ.debugDescription), not JWT")
        }
    }

    /// What the header says, read by `JSONDecoder`: `JSONSerialization` bridged every header through
    /// `NSDictionary` on Linux, 24 µs of an app token's verify (issue 39's profile). A member of
    /// another type than a string reads as absent, as before; `crit` counts whatever its value.
    private struct Members: Decodable {
        var alg: String?
        var kid: String?
        var typ: String?
        var hasCrit: Bool

        enum CodingKeys: String, CodingKey {
            case alg, kid, typ, crit
        }

        init(from decoder: any Decoder) throws {
            let members = try decoder.container(keyedBy: CodingKeys.self)
            alg = try? members.decodeIfPresent(String.self, forKey: .alg)
            kid = try? members.decodeIfPresent(String.self, forKey: .kid)
            typ = try? members.decodeIfPresent(String.self, forKey: .typ)
            hasCrit = members.contains(.crit)
        }
    }
}
