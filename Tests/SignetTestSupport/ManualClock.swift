// SPDX-License-Identifier: Apache-2.0
import Foundation
import Synchronization

/// A clock a test moves: handed to a router harness's gateway (`GatewayHarness.start(clock:)`), it
/// makes windows, lockouts and expiries close when the test says, not when a loaded machine gets
/// round to it.
public final class ManualClock: Sendable {
    private let current: Mutex<Date>

    public init(_ start: Date = Date()) {
        current = Mutex(start)
    }

    /// The time it says.
    public var now: Date { current.withLock { $0 } }

    /// Moves it on.
    public func advance(by seconds: TimeInterval) {
        current.withLock { $0 += seconds }
    }

    /// As the gateway reads it.
    public var read: @Sendable () -> Date { { [self] in now } }
}
