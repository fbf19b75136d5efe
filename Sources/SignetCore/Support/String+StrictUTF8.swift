// SPDX-License-Identifier: Apache-2.0

extension String {
    /// The text of `bytes` when they are valid UTF-8, else `nil` (no replacement characters).
    /// `String(validating:as:)` says the same from iOS 18; the modules an app links run earlier.
    package init?(strictUTF8 bytes: some Collection<UInt8>) {
        let text = String(decoding: bytes, as: UTF8.self)
        guard text.utf8.elementsEqual(bytes) else { return nil }
        self = text
    }
}
