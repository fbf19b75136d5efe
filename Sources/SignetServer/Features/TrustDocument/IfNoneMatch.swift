// SPDX-License-Identifier: Apache-2.0
import SignetCore

/// `If-None-Match` (RFC 9110 §13.1.2): whether a request's condition matches the current
/// representation, so the answer is 304.
///
/// `*` as the whole field matches any current representation; otherwise the field is a list of
/// entity tags compared weakly (§8.8.3.2: `W/"x"` and `"x"` match), across every field line. Entity
/// tags may hold commas in principle; the gateway's are hexadecimal, so splitting on commas never
/// hides one.
enum IfNoneMatch {
    static func matches(_ fieldValues: [String], etag: String) -> Bool {
        let members = FieldList.members(fieldValues)
        // `*` is a whole field value (`"*" / #entity-tag`), never a list member.
        if members == ["*"] { return true }
        return members.contains { opaque($0) == opaque(etag) }
    }

    private static func opaque(_ tag: String) -> Substring {
        tag.hasPrefix("W/") ? tag.dropFirst(2) : Substring(tag)
    }
}
