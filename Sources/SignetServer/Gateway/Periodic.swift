// SPDX-License-Identifier: Apache-2.0
import ServiceLifecycle

/// The loop of the gateway's background services: a tick every `interval` until the service is
/// cancelled or the application shuts down gracefully (which also cuts a wait short).
enum Periodic {
    /// - Parameter immediately: Tick before the first wait rather than after it.
    static func run(every interval: Duration, immediately: Bool = false, _ tick: () async -> Void) async {
        var waits = !immediately
        while !Task.isCancelled && !Task.isShuttingDownGracefully {
            if waits {
                do {
                    try await cancelWhenGracefulShutdown { try await Task.sleep(for: interval) }
                } catch {
                    return
                }
            }
            waits = true
            await tick()
        }
    }
}
