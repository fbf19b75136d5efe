// SPDX-License-Identifier: Apache-2.0

/// Comparisons whose time does not depend on where the inputs differ.
public enum ConstantTime {
    /// `true` when `a` and `b` are equal. Leaks only the lengths.
    public static func equals(_ a: some Collection<UInt8>, _ b: some Collection<UInt8>) -> Bool {
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for (x, y) in zip(a, b) { difference |= x ^ y }
        return difference == 0
    }
}
