// SPDX-License-Identifier: Apache-2.0

/// Reproducible random mutations of byte strings, for robustness runs of the parsers
/// (`signet-bench fuzz-appattest` and the test suite).
public struct SeededMutations: Sequence, IteratorProtocol {
    private let seeds: [[UInt8]]
    private var state: UInt64
    private var round = 0
    private let count: Int

    /// `count` inputs, each a seed (in turn) with one to four changes: a byte replaced, the tail cut,
    /// or a byte inserted.
    public init(seeds: [[UInt8]], count: Int, seed: UInt64) {
        precondition(!seeds.isEmpty, "at least one seed")
        self.seeds = seeds
        self.count = count
        self.state = seed
    }

    public mutating func next() -> [UInt8]? {
        guard round < count else { return nil }
        var bytes = seeds[round % seeds.count]
        round += 1
        if bytes.isEmpty { bytes = [0] }
        for _ in 0..<(1 + Int(random() % 4)) {
            let index = Int(random() % UInt64(bytes.count))
            switch random() % 3 {
            case 0: bytes[index] = UInt8(truncatingIfNeeded: random())
            case 1: bytes.removeSubrange(index...)
            default: bytes.insert(UInt8(truncatingIfNeeded: random()), at: index)
            }
            if bytes.isEmpty { bytes = [0] }
        }
        return bytes
    }

    /// SplitMix64: small, fast, and the same sequence on every platform.
    private mutating func random() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
