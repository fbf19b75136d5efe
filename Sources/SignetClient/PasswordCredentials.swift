// SPDX-License-Identifier: Apache-2.0

/// A user's name and password, for servers that ask for HTTP Digest (RFC 7616) or Basic (RFC 7617)
/// login (``SignetClient/usePassword(_:)``).
public struct PasswordCredentials: Sendable {
    public var user: String
    public var password: String
    /// Answer a Basic challenge when no Digest one is offered (never over plain HTTP).
    public var allowBasic: Bool
    /// Answer Digest with MD5 when it is the only algorithm offered.
    public var allowMD5: Bool
    /// Send the name as its `userhash` where the server offers it, so it never crosses in clear.
    public var useUserhash: Bool
    /// Refuse a successful Digest answer that does not prove, with `rspauth`, that the server knows
    /// the password (`response_signature_invalid`). A Signet gateway always sends it, except for an
    /// `auth-int` answer of unknown length or above its body limit.
    public var requireServerProof: Bool

    public init(
        user: String,
        password: String,
        allowBasic: Bool = true,
        allowMD5: Bool = false,
        useUserhash: Bool = true,
        requireServerProof: Bool = false
    ) {
        self.user = user
        self.password = password
        self.allowBasic = allowBasic
        self.allowMD5 = allowMD5
        self.useUserhash = useUserhash
        self.requireServerProof = requireServerProof
    }
}
