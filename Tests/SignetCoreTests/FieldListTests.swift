// SPDX-License-Identifier: Apache-2.0
import SignetCore
import Testing

/// RFC 9110 §5.6.1 lists, as Connection, If-None-Match, Cache-Control and Digest's qop use them.
@Suite struct FieldListTests {
    @Test func membersAcrossLinesWithOptionalWhitespaceAndEmptyMembers() {
        #expect(FieldList.members([" a ,\tb", ",, c ,", ""]) == ["a", "b", "c"])
        #expect(FieldList.members("auth, auth-int") == ["auth", "auth-int"])
        // Only SP and HTAB are whitespace here; inner spaces stay.
        #expect(FieldList.members(["max-age = 5 ,\u{A0}x"]) == ["max-age = 5", "\u{A0}x"])
        #expect(FieldList.members([String]()).isEmpty && FieldList.members(" , ").isEmpty)
    }
}
