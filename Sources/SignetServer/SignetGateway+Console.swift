// SPDX-License-Identifier: Apache-2.0
import Hummingbird
import Logging
import SignetMiddleware

extension SignetGateway {
    /// The operator console under `/signet/admin/`, when an admin credential is configured: the
    /// admin token, or the pins of operators' client certificates.
    func addConsole(to router: Router<SignetRequestContext>) {
        // Checked by `validate()` before the gateway was made.
        let adminPins = (try? configuration.adminCertificatePins()) ?? []
        guard configuration.adminToken != nil || !adminPins.isEmpty else { return }
        do {
            try OperatorConsole(gateway: self, admin: admin, adminCertificates: adminPins)
                .add(to: router)
        } catch {
            // The templates are constants, parsed in the tests: not expected, but never silent.
            logger.error("the operator console cannot start", metadata: ["error": "\(error)"])
        }
    }
}
