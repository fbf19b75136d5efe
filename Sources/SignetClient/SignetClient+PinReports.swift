// SPDX-License-Identifier: Apache-2.0
import Foundation
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
                let status = try await exchange(
                    TransportRequest(origin: home, method: "POST", path: path, fields: [("Content-Type", "application/json")], body: report)
                ).status
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
