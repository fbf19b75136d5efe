// SPDX-License-Identifier: Apache-2.0
import Foundation
import SignetClient
import SignetCore

/// The app's own requests: through `SignetURLSession` (the drop-in), or over the app's own
/// `URLSession`, each signed by the device's key, the server's answer checked against the request
/// it answers (an old answer cannot be replayed), the server trusted only with the pins in force.
final class ScoresAPI: Sendable {
    struct Score: Codable, Sendable {
        var name: String
        var score: Int
    }

    enum Failure: Error {
        case notRegistered
        case refused(status: Int, reason: String?)
    }

    private let registration: DeviceRegistration
    private let session: URLSession
    private let reports = PinReportQueue()

    /// - Parameter signer: The device's signer (``DeviceRegistration/signer``), to sign a request
    ///   redirected within the origin again for its new target.
    init(registration: DeviceRegistration, signer: (any RequestSigning)?) throws {
        self.registration = registration
        let reports = self.reports
        let delegate = SignetURLSessionDelegate(
            origins: [try Origin(AppSecurity.apiOrigin)],
            liveTrust: registration.client.liveTrust,  // follows newer trust documents
            signer: signer
        ) { report in
            Task { await reports.add(report.json) }
        }
        session = URLSession(configuration: .ephemeral, delegate: delegate, delegateQueue: nil)
    }

    /// A score, through the drop-in session: signed, the answer's signature checked, the clock
    /// corrected, retried where safe, the key registered again if it is gone; a refusal arrives as
    /// a `SignetError` with its reason code.
    func submit(_ score: Score) async throws {
        var request = URLRequest(url: URL(string: AppSecurity.apiOrigin + "/scores")!)
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = try JSONEncoder().encode(score)
        do {
            _ = try await SignetURLSession(client: registration.client).data(for: request)
        } catch let error as SignetError {
            throw Failure.refused(status: error.code.httpStatus, reason: error.code.rawValue)
        }
    }

    /// The same over the app's own `URLSession` (its delegate, its configuration): the app signs
    /// and checks, the session sends.
    func submitOverAppSession(_ score: Score) async throws {
        guard let signer = await registration.signer else { throw Failure.notRegistered }
        var request = URLRequest(url: URL(string: AppSecurity.apiOrigin + "/scores")!)
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = try JSONEncoder().encode(score)
        let signed = try await signer.sign(request)
        let (data, response) = try await session.data(for: signed)
        if let keys = registration.client.liveTrust.responseKeys {
            try await ResponseSignatureVerifier(keys: keys).verify(response, body: data, for: signed)
        }
        guard let http = response as? HTTPURLResponse, (200..<300).contains(http.statusCode) else {
            let problem = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
            throw Failure.refused(status: (response as? HTTPURLResponse)?.statusCode ?? 0, reason: problem?["reason"] as? String)
        }
    }

    /// The top scores, through the client itself (signed, redirects kept within the origin).
    func top() async throws -> [Score] {
        let answer = try await registration.client.send("GET", AppSecurity.apiOrigin + "/scores/top")
        guard answer.status == 200 else { throw Failure.refused(status: answer.status, reason: answer.json?["reason"] as? String) }
        return try JSONDecoder().decode([Score].self, from: Data(answer.body))
    }

    /// Pin failure reports from the app's session, for ``TrustMaintenance`` to hand on.
    func pendingReports() async -> [[UInt8]] {
        await reports.take()
    }
}

/// Reports queued by the session delegate's `@Sendable` callback: an actor, not captured state.
actor PinReportQueue {
    private var reports: [[UInt8]] = []

    func add(_ report: [UInt8]) {
        reports.append(report)
        if reports.count > 32 { reports.removeFirst() }
    }

    func take() -> [[UInt8]] {
        defer { reports = [] }
        return reports
    }
}
