// SPDX-License-Identifier: Apache-2.0

/// `Authorization: Basic <base64(user-id ":" password)>` (RFC 7617), read as UTF-8 (the
/// `charset="UTF-8"` a Signet challenge announces).
public struct BasicCredentials: Sendable, Hashable {
    public var username: String
    public var password: String

    public init(username: String, password: String) {
        self.username = username
        self.password = password
    }

    /// - Throws: `malformed_header` for another scheme, bad base64, text that is not UTF-8 or has
    ///   no `:`, or control characters (RFC 7617 §2 forbids them in both parts).
    public init(_ authentication: HTTPAuthentication) throws {
        guard authentication.isScheme("Basic"), let token = authentication.token68,
            let bytes = Base64.decode(token), let text = String(strictUTF8: bytes),
            let colon = text.firstIndex(of: ":")
        else { throw SignetError(.malformedHeader, "Basic credentials are base64 of UTF-8 user-id:password") }
        guard !text.unicodeScalars.contains(where: { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) }) else {
            throw SignetError(.malformedHeader, "Basic credentials carry a control character")
        }
        username = String(text[..<colon])
        password = String(text[text.index(after: colon)...])
    }

    /// The `Authorization` field value.
    public var fieldValue: String {
        "Basic " + Base64.encode(Array((username + ":" + password).utf8))
    }
}
