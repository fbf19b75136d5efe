// SPDX-License-Identifier: Apache-2.0
import Foundation
import Logging
import ServiceLifecycle
import SignetStore

/// Deletes expired challenges and nonces in the background, never on a request's path.
struct SweepService: Service {
    let store: any SignetStorage
    let interval: Duration
    let logger: Logger

    func run() async throws {
        await Periodic.run(every: interval) {
            do {
                let removed = try await store.sweep(now: Date())
                if removed > 0 { logger.debug("swept expired rows", metadata: ["rows": "\(removed)"]) }
            } catch {
                logger.warning("sweep failed", metadata: ["error": "\(error)"])
            }
        }
    }
}
