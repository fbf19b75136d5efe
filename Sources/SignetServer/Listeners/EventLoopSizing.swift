// SPDX-License-Identifier: Apache-2.0
import Foundation
import NIOCore
import Synchronization

/// Sizes NIO's shared event loops to the CPUs this process may actually run on.
///
/// NIO counts `System.coreCount`, which honours cgroup quotas and cpusets but not a CPU affinity
/// mask (`taskset`, `numactl`, a pinned systemd unit). A gateway pinned to one core of two then runs
/// two event loops that take turns on that core, and every hand-off between a request's task and a
/// sleeping loop becomes a context switch. On the 2-core benchmark VM, with the gateway on core 0,
/// one loop took verified HMAC requests from about 8,100 to 9,100 a second while pass-through stayed
/// at 10,600 (docs/benchmarks.md).
///
/// Process-wide: call it once, first thing in an executable's `run`, before anything uses
/// `MultiThreadedEventLoopGroup.singleton` (which Hummingbird and AsyncHTTPClient's `.shared` do).
/// An explicit `NIO_SINGLETON_GROUP_LOOP_COUNT` wins.
public enum EventLoopSizing {
    private static let applied = Atomic<Bool>(false)

    /// The CPUs in this process's affinity mask, or `nil` where the platform cannot say.
    ///
    /// Read from `/proc/self/status` (`Cpus_allowed`, a hexadecimal mask in comma-separated words):
    /// Swift's Glibc module does not export `sched_getaffinity`, which needs `_GNU_SOURCE`.
    public static var affinityCPUCount: Int? {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return nil }
        return affinityCPUCount(status: status)
    }

    /// The bits set in the `Cpus_allowed` line of a `/proc/<pid>/status` text.
    static func affinityCPUCount(status: String) -> Int? {
        guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix("Cpus_allowed:") }) else {
            return nil
        }
        var count = 0
        for character in line.dropFirst("Cpus_allowed:".count) where character != "," && !character.isWhitespace {
            guard let nibble = character.hexDigitValue else { return nil }
            count += nibble.nonzeroBitCount
        }
        return count > 0 ? count : nil
    }

    /// How many loops the shared group gets: the smaller of NIO's count and the affinity mask's.
    public static var suggestedLoopCount: Int {
        min(System.coreCount, affinityCPUCount ?? System.coreCount)
    }

    /// Sets `NIOSingletons.groupLoopCountSuggestion` (once per process; later calls do nothing)
    /// unless `NIO_SINGLETON_GROUP_LOOP_COUNT` is set. Returns the loop count the group will have.
    @discardableResult
    public static func applyToSharedEventLoops() -> Int {
        guard ProcessInfo.processInfo.environment["NIO_SINGLETON_GROUP_LOOP_COUNT"] == nil,
            applied.compareExchange(expected: false, desired: true, ordering: .relaxed).exchanged
        else { return NIOSingletons.groupLoopCountSuggestion }
        let count = suggestedLoopCount
        NIOSingletons.groupLoopCountSuggestion = count
        return count
    }
}
