// SPDX-License-Identifier: Apache-2.0
import AsyncHTTPClient
import Foundation
import Hummingbird
import Logging
import ServiceLifecycle
import SignetAndroid
import SignetCore
import SignetMiddleware
import X509

/// Android Key Attestation: the registrar ``RegistrationFeature`` registers Android devices with
/// (Google's roots or configured ones, the policy, the revocation list, the leaked-key count, the
/// Play Integrity verdict of ``PlayIntegrityFeature``), and the revocation list's fetcher in the
/// background. It owns no access mode: an attested Android device signs with `ecdsa-p256-sha256`
/// through the request verifier, and routes ask for it by trust level
/// (``RequestSignaturesFeature``: `android-key-attestation`, or `attested` for either platform).
struct AndroidAttestationFeature: GatewayFeature {
    static func validate(_ configuration: GatewayConfiguration) throws { try configuration.androidAttestation?.validate(development: configuration.development) }

    let settings: GatewayConfiguration.AndroidAttestation
    /// What registration checks with, before the HTTP client (Play Integrity's standard tokens) is
    /// known: ``registrar(httpClient:)`` completes it.
    private let baseRegistrar: AndroidAttestationRegistrar
    private let playIntegrity: PlayIntegrityFeature?
    let roots: [Certificate]
    /// The revocation list as last fetched or read; `nil` when none is configured.
    let status: AttestationStatusCache?
    let dependencies: FeatureDependencies

    /// A reload keeps the running gateway's fetched list (the fetcher, started with the gateway,
    /// keeps feeding that one).
    init?(_ context: FeatureContext) throws {
        let dependencies = context.dependencies
        guard let settings = context.configuration.androidAttestation else { return nil }
        let previous = context.previous(Self.self)
        self.settings = settings
        self.dependencies = dependencies
        playIntegrity = context.feature(PlayIntegrityFeature.self)
        let policy = try settings.policy()
        try SimulatorRoots.check(policy.roots, at: "androidAttestation.rootsFile", development: context.configuration.development)
        roots = policy.roots
        var status: AttestationStatusCache?
        if let list = settings.statusList {
            if let file = list.file {
                // An operator's file never goes stale: they replace it, and a reload reads it again.
                let cache = AttestationStatusCache(maximumAge: nil, clock: dependencies.clock)
                guard let bytes = FileManager.default.contents(atPath: file) else {
                    throw ConfigurationError(.file, at: "androidAttestation.statusList.file", "cannot read \(file)")
                }
                do {
                    cache.store(try AttestationStatusList(json: Array(bytes)))
                } catch {
                    throw ConfigurationError.invalid("androidAttestation.statusList.file", "\(file) is not Google's attestation status JSON ({\"entries\": {…}})")
                }
                status = cache
            } else if let previous, previous.settings.statusList == list, let kept = previous.status {
                status = kept
            } else {
                status = AttestationStatusCache(maximumAge: TimeInterval(list.maximumAge), clock: dependencies.clock)
            }
        }
        self.status = status
        if status == nil, !dependencies.configuration.development {
            dependencies.logger.warning(
                "androidAttestation has no statusList: attestations from keyboxes Google has revoked are taken (set statusList to fetch Google's list)"
            )
        }
        let batchGuard = settings.leakedKeys.map { leaked in
            AttestationBatchGuard(
                store: dependencies.store,
                window: TimeInterval(leaked.window),
                flagAt: leaked.flagAt,
                blockAt: leaked.blockAt,
                mode: leaked.mode == .enforce ? .enforce : .shadow
            )
        }
        baseRegistrar = AndroidAttestationRegistrar(
            verifier: AndroidKeyAttestationVerifier(policy: policy),
            statusList: { [status] in try status?.current() },
            batchGuard: batchGuard,
            playIntegrity: nil
        )
    }

    static func checkFiles(_ configuration: GatewayConfiguration, _ files: inout FileChecks) {
        guard let android = configuration.androidAttestation else { return }
        if let roots = android.rootsFile { files.mustRead(roots, "androidAttestation.rootsFile") }
        if let file = android.statusList?.file { files.mustRead(file, "androidAttestation.statusList.file") }
    }

    /// The fetcher of Google's list runs from start; a list read from a file is read again.
    static func restartOnlyChanges(from old: GatewayConfiguration, to new: GatewayConfiguration) -> [String] {
        let fetched: (GatewayConfiguration) -> GatewayConfiguration.AndroidAttestation.StatusList? = {
            $0.androidAttestation?.statusList.flatMap { $0.file == nil ? $0 : nil }
        }
        return fetched(old) == fetched(new) ? [] : ["androidAttestation.statusList (fetched from a URL)"]
    }

    /// The registrar, with Play Integrity's standard tokens decoded through `httpClient`.
    func registrar(httpClient: HTTPClient) -> AndroidAttestationRegistrar {
        var registrar = baseRegistrar
        registrar.playIntegrity = playIntegrity?.check(httpClient: httpClient)
        return registrar
    }

    /// The revocation list's fetcher, when it comes from a URL.
    func services(httpClient: HTTPClient) -> [any Service] {
        guard let list = settings.statusList, list.file == nil, let status else { return [] }
        return [
            AttestationStatusFetcher(
                url: list.url ?? GatewayConfiguration.AndroidAttestation.StatusList.googleURL,
                client: httpClient,
                cache: status,
                interval: .seconds(list.refresh),
                logger: dependencies.logger
            )
        ]
    }

    var keys: [GatewayKeyInventory.Entry] {
        roots.map { GatewayKeyInventory.certificate("Android attestation root", $0) }
    }
}
