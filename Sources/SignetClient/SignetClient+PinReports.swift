// SPDX-License-Identifier: Apache-2.0
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import SignetCore

/// Pin failure reports: kept while the app's own server cannot be reached, delivered over a
/// connection that passed its pins.
extension SignetClient {
    /// Reports kept while the home origin cannot be reached; the oldest go first beyond this.
    static let maximumPendingPinReports = 20

    func record(_ evaluation: PinEvaluation, for origin: Origin) {
        lastPinEvaluation[origin] = evaluation
        guard let report = evaluation.report else { return }
        pendingPinReports.append(report.json)
        if pendingPinReports.count > Self.maximumPendingPinReports { pendingPinReports.removeFirst() }
    }

    /// Sends queued pin reports to the app's own server, if a connection to it works now.
    func deliverPinReports() async {
        guard let path = configuration.pinReportPath, !pendingPinReports.isEmpty else { return }
        let home = configuration.origins[0]
        let reports = pendingPinReports
        pendingPinReports = []
        for (index, report) in reports.enumerated() {
            do {
                var head = HTTPRequestHead(version: .http1_1, method: .POST, uri: path)
                head.headers.add(name: "Host", value: home.port == (home.isTLS ? 443 : 80) ? home.host : "\(home.host):\(home.port)")
                head.headers.add(name: "Content-Type", value: "application/json")
                head.headers.add(name: "Content-Length", value: String(report.count))
                let status = try await execute(origin: home, head: head, body: report).head.status.code
                // Kept for another try when the server is busy or failing; a report it refuses
                // outright (malformed, too large) would be refused again, so it is dropped.
                if status == 429 || status >= 500 { throw SignetError(.connectionFailed, "report not taken: \(status)") }
            } catch {
                pendingPinReports.append(contentsOf: reports[index...])
                return
            }
        }
    }

    /// Tries to deliver queued pin reports now; returns how many are still pending.
    @discardableResult
    public func flushPinReports() async -> Int {
        await deliverPinReports()
        return pendingPinReports.count
    }
}
