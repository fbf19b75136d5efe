// SPDX-License-Identifier: Apache-2.0
import SignetCore

/// The client transport's reason codes.
extension SignetError.Code {
    /// The URL (or a redirect) leads outside the configured origins; nothing was sent there.
    public static let originNotAllowed = Self("origin_not_allowed")
    /// The server's certificate is not valid at this time.
    public static let certificateExpired = Self("certificate_expired")
    /// The server's certificate does not name the host connected to.
    public static let hostnameMismatch = Self("hostname_mismatch")
    /// The server's chain does not lead to a trusted root (or cannot be parsed).
    public static let certificateUntrusted = Self("certificate_untrusted")
    /// The connection failed or closed before an answer came.
    public static let connectionFailed = Self("connection_failed")
    /// No answer within the configured timeout; the connection was closed.
    public static let requestTimeout = Self("request_timeout")
    /// A response that had to be signed was not, or its signature did not verify.
    public static let responseSignatureInvalid = Self("response_signature_invalid")
}
