// SPDX-License-Identifier: Apache-2.0

/// A `CFBundleVersion` read as numbers to compare: one or more period-separated non-negative
/// integers (`42`, `2.1`, `2026.11.3`), missing trailing parts counting as 0, so `2.1` equals
/// `2.1.0` and is below `2.10`.
public struct BundleVersion: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The numbers, as given (trailing zeros kept for ``description``).
    public let parts: [UInt64]

    /// At most this many parts, each at most 18 digits: Apple allows three, macOS bundles a few more.
    static let maximumParts = 8
    static let maximumDigits = 18

    /// The version `text` spells, or `nil` when it is not period-separated decimal numbers.
    public init?(_ text: String) {
        let pieces = text.split(separator: ".", omittingEmptySubsequences: false)
        guard (1...Self.maximumParts).contains(pieces.count) else { return nil }
        var parts: [UInt64] = []
        for piece in pieces {
            guard (1...Self.maximumDigits).contains(piece.utf8.count),
                piece.utf8.allSatisfy({ (0x30...0x39).contains($0) }), let number = UInt64(piece)
            else { return nil }
            parts.append(number)
        }
        self.parts = parts
    }

    public var description: String { parts.map(String.init).joined(separator: ".") }

    public static func < (lhs: Self, rhs: Self) -> Bool {
        for index in 0..<max(lhs.parts.count, rhs.parts.count) {
            let left = index < lhs.parts.count ? lhs.parts[index] : 0
            let right = index < rhs.parts.count ? rhs.parts[index] : 0
            if left != right { return left < right }
        }
        return false
    }

    public static func == (lhs: Self, rhs: Self) -> Bool { !(lhs < rhs) && !(rhs < lhs) }

    public func hash(into hasher: inout Hasher) {
        // Equal versions hash alike: trailing zeros do not count.
        var significant = parts
        while significant.last == 0 { significant.removeLast() }
        hasher.combine(significant)
    }
}
