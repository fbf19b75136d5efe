// SPDX-License-Identifier: Apache-2.0
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import SignetCore
import SignetMiddleware

/// The head screen of a request whose route needs a signature, as the event-loop data plane makes
/// it: the screen Hummingbird's path makes before a body is read (``RequestCompletionResponder``)
/// — the same request verifier, the route table's requirement for the request, within the
/// request's time for the store — whatever the route's gate (a signature route's, or
/// `play-integrity`'s, which verifies a signature too).
///
/// It holds the snapshot it was made from rather than copies of its verifier and clock: one is
/// made for each request with a body to come, and a copy of the verifier retained each of its
/// references.
struct LoopScreen: Sendable {
    let snapshot: DataPlane.Snapshot
    let requirement: AccessRequirement

    /// Refuses, from its head alone, a request that cannot verify
    /// (``SignetRequestVerifier/screen(_:receivedTarget:requirement:signatureKeys:now:)``).
    ///
    /// - Parameter head: The head as received (its path the client's).
    nonisolated(nonsending) func screen(_ head: HTTPRequest, receivedTarget: String?) async throws {
        try await StoreBudget.within(snapshot.storeTimeout) {
            try await snapshot.requestVerifier.screen(
                Request(head: head, body: RequestBody(buffer: ByteBuffer())),
                receivedTarget: receivedTarget,
                requirement: requirement,
                now: snapshot.clock()
            )
        }
    }

    /// What `judge` made of the complete request; `nil` where `screen` — the screen of a head
    /// that was not screened while its body came — refuses the head: that request is
    /// Hummingbird's to refuse, as from its head.
    ///
    /// Hummingbird's path screens every such head first; here the screen runs only when `judge`
    /// refused — a request its gate admits passes every check the screen makes — so for what the
    /// screen finds before anything the gate weighs first (the key before the window), the
    /// refusal is the screen's on both paths. Not after the store failed: the request has had its
    /// time for the store.
    nonisolated(nonsending) static func judging<T: Sendable>(
        _ screen: LoopScreen?,
        _ head: HTTPRequest,
        receivedTarget: String?,
        _ judge: nonisolated(nonsending) () async throws -> T
    ) async throws -> T? {
        guard let screen else { return try await judge() }
        do {
            return try await judge()
        } catch {
            guard ProblemResponse.signetError(from: error).code != .storeUnavailable else { throw error }
            do {
                try await screen.screen(head, receivedTarget: receivedTarget)
            } catch let screened {
                // Only a judgement of the head is Hummingbird's to make again; the screen's own
                // failure (the store, its time) leaves the gate's refusal standing.
                if MonitoredGate.isVerdict(ProblemResponse.signetError(from: screened).code) { return nil }
            }
            throw error
        }
    }
}
