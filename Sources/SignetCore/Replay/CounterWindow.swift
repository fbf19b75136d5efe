// SPDX-License-Identifier: Apache-2.0

/// Accepts each signed counter (App Attest's) at most once, optionally out of order within a bounded
/// window — the IPsec anti-replay window (RFC 4303 §3.4.3): the highest counter seen plus a bitmap of
/// the `width` counters below it.
///
/// Width 0 is the strict rule (a counter must exceed every earlier one). With a width, an app that
/// signs several requests at once may deliver them out of order; still no counter is accepted twice
/// and none older than the window is. The stores run the same rule in one atomic statement; this
/// type is the reference they are tested against.
public struct CounterWindow: Sendable, Hashable {
    /// The widest window: the bitmap lives in a signed 64-bit column.
    public static let maximumWidth = 63

    /// The highest counter accepted (0 before any).
    public private(set) var highest: UInt64
    /// Bit `d` set: counter `highest - 1 - d` was accepted.
    public private(set) var seen: UInt64

    public init(highest: UInt64 = 0, seen: UInt64 = 0) {
        self.highest = highest
        self.seen = seen
    }

    /// Records `value` if it is acceptable under `width`; `false` (and no change) otherwise.
    public mutating func accept(_ value: UInt64, width: Int) -> Bool {
        let width = max(0, min(width, Self.maximumWidth))
        let mask: UInt64 = width == 0 ? 0 : (1 << UInt64(width)) - 1
        if value > highest {
            let shift = value - highest
            seen = shift > UInt64(width) ? 0 : ((seen << shift) | (1 << (shift - 1))) & mask
            highest = value
            return true
        }
        guard value < highest else { return false }
        let offset = highest - value - 1
        guard offset < UInt64(width), seen & (1 << offset) == 0 else { return false }
        seen |= 1 << offset
        return true
    }
}
