// SPDX-License-Identifier: Apache-2.0
import ExampleScores
import Foundation
import SignetCore
import SignetServer
import SignetTestSupport
import Testing

/// One signed request, copied 1,000 times and sent at once to one gateway on SQLite, in-process:
/// exactly one copy reaches the upstream, every other is `nonce_replayed`. (Two instances on one
/// PostgreSQL, over sockets: ExactlyOnceTests.)
@Suite(.awaitsCleanups) struct ExactlyOnceRouterTests {
    @Test func oneGatewayOnSQLiteLetsExactlyOneCopyThrough() async throws {
        let harness = try await GatewayHarness.start(store: .sqlite, transport: .router) { $0.debug = false }
        Cleanup.after { try await harness.stop() }
        let device = try await harness.register()
        let signed = try device.signer.sign(try harness.scorePost(), created: Date(), nonce: Nonce.random())
        let statuses = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<ExactlyOnceTests.copies {
                group.addTask {
                    let answer = try await GatewayHarness.send(signed)
                    return "\(answer.status) \(answer.reason ?? "")"
                }
            }
            var statuses: [String: Int] = [:]
            for try await status in group { statuses[status, default: 0] += 1 }
            return statuses
        }
        #expect(statuses["201 "] == 1, "\(statuses)")
        #expect(statuses["401 nonce_replayed"] == ExactlyOnceTests.copies - 1, "\(statuses)")
        #expect(harness.upstream?.received.count == 1 && harness.backend.receivedCount == 1)
    }
}
