// SPDX-License-Identifier: Apache-2.0
import Foundation
import SignetCore
import SignetServer
import SignetTestSupport
import Testing

/// The simulator's development roots (App Attest's and Android's) are taken only by a gateway whose
/// configuration says `development`: a production configuration naming them is refused at their key.
@Suite(.awaitsCleanups) struct SimulatorRootsConfigurationTests {
    @Test(arguments: ["appAttest.trustedRootsFile", "androidAttestation.rootsFile"])
    func aSimulatorRootIsRefusedOutsideDevelopment(_ key: String) async throws {
        let refused = await #expect(throws: ConfigurationError.self) {
            let harness = try await GatewayHarness.start(transport: .router) {
                $0.development = false
                if key.hasPrefix("appAttest") { $0.androidAttestation = nil } else { $0.appAttest = nil }
                $0.routes.removeAll { $0.access == .appAttest }
            }
            try await harness.stop()
        }
        #expect(refused?.path == key, "\(String(describing: refused))")
        #expect(refused?.message.contains("development root of Signet's simulator") == true)
        // The same with `development`: taken.
        let harness = try await GatewayHarness.start(transport: .router)
        Cleanup.after { try await harness.stop() }
        #expect(try await harness.register().keyID.isEmpty == false)
    }
}
