// SPDX-License-Identifier: Apache-2.0

/// The members of a list-based field (RFC 9110 §5.6.1, `#element`) across all its field lines: split
/// at commas, optional whitespace trimmed, empty members dropped (as §5.6.1.2 asks of recipients).
///
/// For fields whose members hold no quoted commas — tokens (`Connection`, `qop`), directives
/// (`Cache-Control` with unquoted values) and entity tags without commas.
public enum FieldList {
    public static func members(_ fieldValues: some Sequence<String>) -> [String] {
        var members: [String] = []
        for value in fieldValues {
            for member in value.utf8.split(separator: UInt8(ascii: ","), omittingEmptySubsequences: true) {
                let trimmed = String(decoding: member, as: UTF8.self).trimmingOWS
                if !trimmed.isEmpty { members.append(trimmed) }
            }
        }
        return members
    }

    /// ``members(_:)`` of one field value.
    public static func members(_ fieldValue: String) -> [String] { members(CollectionOfOne(fieldValue)) }
}
