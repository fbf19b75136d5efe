// SPDX-License-Identifier: Apache-2.0
import SignetCore

/// What a user name and a password may be.
public enum AccountName {
    public static let maximumNameBytes = 128
    public static let maximumPasswordBytes = 1024

    /// 1 to 128 bytes of UTF-8 with no control character, no `:` (Basic could not carry it) and no
    /// `/` (the admin API's path could not), not starting or ending with a space.
    ///
    /// - Throws: `malformed_message`.
    public static func validate(_ name: String) throws {
        guard !name.isEmpty, name.utf8.count <= maximumNameBytes, !name.contains(":"), !name.contains("/"),
            !name.unicodeScalars.contains(where: isControl), name.first != " ", name.last != " "
        else {
            throw SignetError(
                .malformedMessage,
                "a user name is 1 to \(maximumNameBytes) bytes, without ':', '/', control characters or outer spaces"
            )
        }
    }

    /// 1 to 1024 bytes with no control character (RFC 7617 §2).
    ///
    /// - Throws: `malformed_message`.
    public static func validatePassword(_ password: String) throws {
        guard !password.isEmpty, password.utf8.count <= maximumPasswordBytes,
            !password.unicodeScalars.contains(where: isControl)
        else {
            throw SignetError(.malformedMessage, "a password is 1 to \(maximumPasswordBytes) bytes without control characters")
        }
    }

    static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
    }
}
