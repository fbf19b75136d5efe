// SPDX-License-Identifier: Apache-2.0
import SignetServer

extension GatewayConfiguration {
    /// Where `validate()` refuses this configuration (`routes[0].signatureKey`); `nil` when it passes.
    var refusalPath: String? {
        do {
            try validate()
            return nil
        } catch let error as ConfigurationError {
            return error.path
        } catch {
            return "\(error)"
        }
    }
}
