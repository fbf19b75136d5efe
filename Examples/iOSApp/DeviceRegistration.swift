// SPDX-License-Identifier: Apache-2.0
import Foundation
import SignetClient
import SignetCore

/// The device's identity with the API: an App Attest key where the device has App Attest, a Secure
/// Enclave key where it does not. Registered once per install, restored at every launch.
final class DeviceRegistration: Sendable {
    let client: SignetClient
    private let lifecycle: AppAttestLifecycle

    init(client: SignetClient) throws {
        self.client = client
        let keychain = KeychainValueStore(service: "com.example.scores.signet")
        lifecycle = AppAttestLifecycle(
            service: DeviceCheckAppAttestService(),
            store: keychain,
            // No App Attest (an older device, an enterprise build): a Secure Enclave key instead,
            // registered at the gateway's lower trust level, which routes can refuse.
            fallback: .provider(DeviceKeyProvider.preferringSecureEnclave(store: keychain, allowSoftwareKey: false))
        )
    }

    /// At launch: the signer kept from the first launch, or a registration now. From then on the
    /// client registers again by itself when the key is gone (a reinstall, a restore).
    func start() async throws {
        try await client.start(with: lifecycle)
    }

    /// The signer for the app's own `URLSession` requests, once ``start()`` has run.
    var signer: (any RequestSigning)? {
        get async { await client.signer }
    }
}
