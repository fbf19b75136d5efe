// SPDX-License-Identifier: Apache-2.0
import NIOCore
import NIOEmbedded
import PropertyBased
@testable import SignetServer
import Testing

/// `LoopDeadline`, the per-request timer that moves and clears without cancelling, against a model
/// of what a deadline means: whatever the order of sets, clears and time passing, its action runs
/// exactly when the last deadline set passes, once, and never for one cleared or replaced.
struct LoopDeadlineTests {
    enum Step: Sendable, CustomStringConvertible {
        case set(Int64), clear, advance(Int64)

        var description: String {
            switch self {
            case .set(let ms): "set(\(ms))"
            case .clear: "clear"
            case .advance(let ms): "advance(\(ms))"
            }
        }
    }

    static func step(_ kind: Int, _ ms: Int) -> Step {
        switch kind {
        case 0: .set(Int64(ms))
        case 1: .clear
        default: .advance(Int64(ms))
        }
    }

    @Test func itFiresExactlyWhenTheLastDeadlineSetPassesAndOnlyThen() async {
        await propertyCheck(count: 300, input: zip(Gen.int(in: 0...2), Gen.int(in: 0...120)).array(of: 0...30)) { drawn in
            let steps = drawn.map { Self.step($0.0, $0.1) }
            let loop = EmbeddedEventLoop()
            let start = loop.now
            var fired: [Int64] = []
            let deadline = LoopDeadline(on: loop) { fired.append((loop.now - start).nanoseconds / 1_000_000) }
            // The model: the time, the deadline owed, the times it must fire at.
            var now: Int64 = 0
            var owed: Int64?
            var expected: [Int64] = []
            for step in steps {
                switch step {
                case .set(let ms):
                    deadline.set(in: .milliseconds(ms))
                    owed = now + ms
                case .clear:
                    deadline.clear()
                    owed = nil
                case .advance(let ms):
                    loop.advanceTime(by: .milliseconds(ms))
                    now += ms
                    if let due = owed, due <= now {
                        expected.append(due)
                        owed = nil
                    }
                }
                #expect(deadline.deadline.map { ($0 - start).nanoseconds / 1_000_000 } == owed, "\(steps)")
            }
            #expect(fired == expected, "\(steps)")
            // Stopped, nothing more fires, whatever was owed.
            deadline.stop()
            loop.advanceTime(by: .seconds(1))
            #expect(fired == expected, "\(steps)")
        }
    }

    /// The body deadline's use: its action sets the next deadline (time the gateway held reads,
    /// owed back), which fires in its turn.
    @Test func itsActionMaySetTheNextDeadline() {
        let loop = EmbeddedEventLoop()
        var fired: [TimeAmount] = []
        let start = loop.now
        var deadline: LoopDeadline?
        deadline = LoopDeadline(on: loop) {
            fired.append(loop.now - start)
            if fired.count == 1 { deadline?.set(in: .milliseconds(30)) }
        }
        deadline?.set(in: .milliseconds(50))
        loop.advanceTime(by: .milliseconds(79))
        #expect(fired == [.milliseconds(50)])
        loop.advanceTime(by: .milliseconds(1))
        #expect(fired == [.milliseconds(50), .milliseconds(80)])
        deadline?.stop()
    }
}
