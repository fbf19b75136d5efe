// SPDX-License-Identifier: Apache-2.0
import NIOCore
import Testing

@testable import SignetServer

/// The shared event loops follow the CPUs the process may run on (`taskset`), which NIO's core count
/// does not see.
@Suite struct EventLoopSizingTests {
    @Test(arguments: [
        ("Name:\tsignet\nCpus_allowed:\t1\nCpus_allowed_list:\t0\n", 1),
        ("Cpus_allowed:\t3\n", 2),
        ("Cpus_allowed:\tff,00000001\n", 9),
        ("Cpus_allowed:\tffffffff,ffffffff\n", 64),
    ])
    func theMaskIsCounted(_ status: String, _ count: Int) {
        #expect(EventLoopSizing.affinityCPUCount(status: status) == count)
    }

    @Test(arguments: ["Name:\tsignet\n", "Cpus_allowed:\t0\n", "Cpus_allowed:\txyz\n"])
    func aMissingEmptyOrUnreadableMaskSaysNothing(_ status: String) {
        #expect(EventLoopSizing.affinityCPUCount(status: status) == nil)
    }

    @Test func thisProcessHasAtLeastOneCPUAndNeverMoreLoopsThanNIOCounts() {
        #expect((EventLoopSizing.affinityCPUCount ?? 1) >= 1)
        #expect((1...System.coreCount).contains(EventLoopSizing.suggestedLoopCount))
    }
}
