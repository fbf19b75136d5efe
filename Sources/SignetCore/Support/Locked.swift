// SPDX-License-Identifier: Apache-2.0
import Foundation

/// A value behind a lock, for the modules an app links. `Synchronization.Mutex` would ask iOS 18;
/// the client products run from iOS 17 (see docs/ios.md), so they use this, with `Mutex`'s shape
/// (`withLock`), and the server modules keep `Mutex`.
package final class Locked<Value> {
    private let lock = NSLock()
    private var value: Value

    package init(_ value: Value) {
        self.value = value
    }

    /// Runs `body` with the value, alone.
    package func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}

// Safe to share when what it guards is: every access goes through the lock.
extension Locked: @unchecked Sendable where Value: Sendable {}
