// SPDX-License-Identifier: Apache-2.0
import Foundation
import SignetCore

/// Secrets the gateway makes for itself and every instance must share (the key of stateless
/// Digest nonces), created on first use.
public protocol ServerSecretStore: Sendable {
    /// The secret stored under `name`; when there is none yet, `proposed` is stored and returned.
    /// Of instances proposing at once, one wins and all get its value.
    func serverSecret(named name: String, proposing proposed: [UInt8]) async throws -> [UInt8]
}
