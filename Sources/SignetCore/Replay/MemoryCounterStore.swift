// SPDX-License-Identifier: Apache-2.0

/// An in-memory ``CounterStore`` for one process — tools, benchmarks, tests — that keeps a
/// ``CounterWindow`` per device it has seen (a device starts at counter 0). A server keeps its
/// counters in its store, beside the device.
public final class MemoryCounterStore: CounterStore {
    private let windows = Locked<[String: CounterWindow]>([:])

    public init() {}

    public func advanceCounter(deviceID: String, to value: UInt64, window: Int) async throws -> Bool {
        windows.withLock { windows in
            var counters = windows[deviceID] ?? CounterWindow()
            guard counters.accept(value, width: window) else { return false }
            windows[deviceID] = counters
            return true
        }
    }
}
