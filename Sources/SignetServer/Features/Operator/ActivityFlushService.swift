// SPDX-License-Identifier: Apache-2.0
import Foundation
import Logging
import ServiceLifecycle
import SignetMiddleware
import SignetStore

/// Writes the console's pending counts, refusals and last-seen times into the store every
/// `interval`, and once more at shutdown, so a request never waits on those writes.
struct ActivityFlushService: Service {
    let recorder: ActivityRecorder
    let store: any SignetStorage
    let interval: Duration
    let logger: Logger

    func run() async throws {
        await Periodic.run(every: interval) { await flush() }
        await flush()
    }

    private func flush() async {
        do {
            let dropped = try await recorder.flush(to: store)
            if dropped > 0 { logger.info("refusals counted but not kept", metadata: ["dropped": "\(dropped)"]) }
        } catch {
            logger.warning("console activity not written; kept for the next flush", metadata: ["error": "\(error)"])
        }
    }
}
