// SPDX-License-Identifier: Apache-2.0

/// `If-None-Match` (RFC 9110 §13.1.2): whether a request's condition matches the current
/// representation, so the answer is 304.
///
/// `*` matches any current representation; otherwise the field is a list of entity tags compared
/// weakly (§8.8.3.2: `W/"x"` and `"x"` match), across every field line. Entity tags may hold commas
/// in principle; the ones the gateway sends are hexadecimal, so splitting on commas never hides one.
enum IfNoneMatch {
    static func matches(_ fieldValues: [String], etag: String) -> Bool {
        let current = opaque(Substring(etag))
        for value in fieldValues {
            for member in value.split(separator: ",") {
                let tag = member.drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed()
                let text = Substring(String(tag))
                if text == "*" || opaque(text) == current { return true }
            }
        }
        return false
    }

    private static func opaque(_ tag: Substring) -> Substring {
        tag.hasPrefix("W/") ? tag.dropFirst(2) : tag
    }
}
