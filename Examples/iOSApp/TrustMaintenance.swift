// SPDX-License-Identifier: Apache-2.0
import Foundation
import SignetClient
import SignetCore
import SignetTrust
import os

/// Keeps the pins current and the server told of pin failures: at launch and when the app
/// returns to the foreground.
struct TrustMaintenance: Sendable {
    let client: SignetClient
    private let log = Logger(subsystem: "com.example.scores", category: "trust")

    init(client: SignetClient) {
        self.client = client
    }

    /// At launch, before the first request: the stored document if it is newer and valid, else the shipped one.
    func load() async {
        do {
            if let document = try await client.loadTrust() {
                log.info("trust document \(document.version) in force")
            }
        } catch {
            log.error("no trust document could be loaded: \(String(describing: error), privacy: .public)")
        }
    }

    /// In the foreground: a newer signed document, if the gateway has one; queued reports delivered.
    func refresh() async {
        switch await client.updateTrust() {
        case .updated(let version): log.notice("trust document \(version) taken")
        case .unchanged: break
        case .refused(let error): log.error("a trust document was refused: \(error.code.rawValue, privacy: .public)")
        }
        let pending = await client.flushPinReports()
        if pending > 0 { log.info("\(pending) pin reports still queued") }
    }
}
