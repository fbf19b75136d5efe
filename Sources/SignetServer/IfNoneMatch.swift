// SPDX-License-Identifier: Apache-2.0

/// `If-None-Match` (RFC 9110 §13.1.2): whether a request's condition matches the current
/// representation, so the answer is 304.
///
/// `*` (the whole field) matches any current representation; otherwise the field is a list of entity tags compared
/// weakly (§8.8.3.2: `W/"x"` and `"x"` match), across every field line. Entity tags may hold commas
/// in principle; the ones the gateway sends are hexadecimal, so splitting on commas never hides one.
enum IfNoneMatch {
    static func matches(_ fieldValues: [String], etag: String) -> Bool {
        let current = opaque(Substring(etag))
        // `*` is a whole field value (`"*" / #entity-tag`), never a list member.
        if fieldValues.count == 1, trimmed(Substring(fieldValues[0])) == "*" { return true }
        for value in fieldValues {
            for member in value.split(separator: ",") where opaque(trimmed(member)) == current {
                return true
            }
        }
        return false
    }

    private static func trimmed(_ text: Substring) -> Substring {
        let isOWS: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let start = text.firstIndex(where: { !isOWS($0) }), let end = text.lastIndex(where: { !isOWS($0) }) else {
            return ""
        }
        return text[start...end]
    }

    private static func opaque(_ tag: Substring) -> Substring {
        tag.hasPrefix("W/") ? tag.dropFirst(2) : tag
    }
}
