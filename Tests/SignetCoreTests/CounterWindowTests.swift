// SPDX-License-Identifier: Apache-2.0
import SignetCore
import Testing

@Suite struct CounterWindowTests {
    /// Feeds `steps` (counter, expected answer) to `window` in order.
    func play(_ window: CounterWindow, width: Int, _ steps: [(UInt64, Bool)]) -> CounterWindow {
        var window = window
        for (value, expected) in steps {
            let answer = window.accept(value, width: width)
            #expect(answer == expected, "counter \(value) under width \(width)")
        }
        return window
    }

    @Test func strictByDefault() {
        _ = play(CounterWindow(highest: 5), width: 0, [(5, false), (4, false), (6, true), (100, true), (99, false)])
    }

    @Test func outOfOrderWithinTheWindowOnceEach() {
        let window = play(
            CounterWindow(highest: 5),
            width: 8,
            [
                (3, true),  // late, inside the window
                (3, false),  // but only once
                (4, true), (5, false),  // the highest itself
                (10, true),
                // 5, 4 and 3 moved with the window and stay used; 2 is in it and new; 1 fell out.
                (5, false), (4, false), (3, false), (2, true), (1, false), (9, true),
                (100, true),  // a jump past the window clears it
                (10, false), (92, true), (91, false),
            ]
        )
        #expect(window.highest == 100)
    }

    @Test func theWidestWindowKeepsSixtyThreeBehind() {
        let window = play(
            CounterWindow(highest: 1_000),
            width: 63,
            [
                (937, true), (936, false), (1_063, true),
                (1_000, false),  // the old highest, remembered at the window's far end
                (1_001, true), (999, false),  // one below the window
            ]
        )
        // Widths above the maximum are clamped.
        _ = play(window, width: 99, [(1_001, false), (1_002, true)])
    }
}
