// SPDX-License-Identifier: Apache-2.0
import AsyncHTTPClient
import Foundation
import Logging
import SignetAndroid
import SignetCore
import SignetMiddleware

/// Play Integrity (`androidAttestation.playIntegrity`): the verdict Android registration checks
/// besides the key attestation, and the `play-integrity` access mode — a registered device's
/// signature and a Play Integrity token bound to it, per request.
///
/// The whole mode is in this folder: its settings, their checks, the registered mode with its
/// check against the rest of the configuration, the gate, Google's decoder for standard tokens and
/// the decode budget (docs/decisions.md: adding an access mode).
struct PlayIntegrityFeature: GatewayFeature {
    static let accessModes = [
        AccessMode(
            name: "play-integrity",
            // A registered device's signature: screened when the head arrives, like `device-key`.
            signature: .trustLevel(.deviceKey),
            check: AccessMode.needs("androidAttestation.playIntegrity with its keys") { $0.androidAttestation?.playIntegrity != nil }
        )
    ]

    /// Standard tokens a key may have decoded on `play-integrity` routes per minute.
    static let standardDecodesPerKeyPerMinute = 10

    let settings: GatewayConfiguration.AndroidAttestation.PlayIntegrity
    /// Classic tokens' verifier and the verdict policy; standard tokens are added per HTTP client
    /// (``check(httpClient:)``).
    private let baseCheck: AndroidAttestationRegistrar.PlayIntegrityCheck
    /// The service account key file's bytes, for standard tokens.
    private let serviceAccount: [UInt8]?
    let dependencies: FeatureDependencies
    /// Standard decodes on `play-integrity` routes, all clients together (one key, "all"), per
    /// client address and per device key, counted in the store for every instance.
    let decodes: (overall: SharedSourceLimiter, perSource: SharedSourceLimiter, perKey: SharedSourceLimiter)

    init?(_ context: FeatureContext) throws {
        guard let android = context.configuration.androidAttestation, let settings = android.playIntegrity,
            let policy = android.playIntegrityPolicy()
        else { return nil }
        self.settings = settings
        dependencies = context.dependencies
        baseCheck = AndroidAttestationRegistrar.PlayIntegrityCheck(
            classic: try android.playIntegrityVerifier(),
            policy: policy,
            required: settings.required ?? true
        )
        let budget = settings.standard?.decodeBudget ?? 0
        let store = context.dependencies.store
        decodes = (
            SharedSourceLimiter("play-integrity-decodes", limit: budget, store: store),
            SharedSourceLimiter("play-integrity-source", limit: Self.standardDecodesPerKeyPerMinute, store: store),
            SharedSourceLimiter("play-integrity-key", limit: Self.standardDecodesPerKeyPerMinute, store: store)
        )
        serviceAccount = try settings.standard.map { standard in
            let at = "androidAttestation.playIntegrity.standard.serviceAccountFile"
            guard let bytes = FileManager.default.contents(atPath: standard.serviceAccountFile) else {
                throw ConfigurationError(.file, at: at, "cannot read \(standard.serviceAccountFile)")
            }
            // Checked now: a wrong key file fails the start, not the first registration.
            do {
                let (account, _) = try PlayIntegrityDecoder.account(Array(bytes))
                if standard.tokenUrl == nil, let uri = account.token_uri, !GatewayConfiguration.AndroidAttestation.isSecureOrLocal(uri) {
                    throw SignetError(.invalidKey, "its token_uri is not https")
                }
            } catch let error as SignetError {
                throw ConfigurationError.invalid(at, "\(standard.serviceAccountFile): \(error.reason)")
            }
            return Array(bytes)
        }
    }

    static func checkFiles(_ configuration: GatewayConfiguration, _ files: inout FileChecks) {
        guard let play = configuration.androidAttestation?.playIntegrity else { return }
        if let file = play.decryptionKeyFile { files.mustRead(file, "the Play Integrity decryption key") }
        if let file = play.verificationKeyFile { files.mustRead(file, "the Play Integrity verification key") }
        if let standard = play.standard { files.mustRead(standard.serviceAccountFile, "the Play Integrity service account key") }
    }

    /// The check, with standard tokens decoded by Google through `httpClient`.
    func check(httpClient: HTTPClient) -> AndroidAttestationRegistrar.PlayIntegrityCheck {
        var check = baseCheck
        guard let standard = settings.standard, let serviceAccount else { return check }
        do {
            let decoder = try PlayIntegrityDecoder(
                serviceAccountJSON: serviceAccount,
                packageName: standard.packageName,
                decodeURL: standard.decodeUrl,
                tokenURL: standard.tokenUrl,
                client: httpClient,
                clock: dependencies.clock
            )
            check.standard = { try await decoder.decode($0) }
        } catch {
            // The key was checked at start; never silent.
            dependencies.logger.error("standard Play Integrity tokens cannot be decoded", metadata: ["error": "\(error)"])
        }
        return check
    }

    func gate(for access: GatewayConfiguration.Route.Access, listener: FeatureListener) throws -> RouteGate {
        PlayIntegrityRouteMiddleware(
            verifier: dependencies.requestVerifier,
            check: check(httpClient: listener.httpClient),
            metrics: dependencies.metrics,
            clock: dependencies.clock,
            perKey: decodes.perKey,
            perSource: decodes.perSource,
            overall: decodes.overall
        )
    }

    /// The same gate, run by the event-loop data plane (``LoopAuthenticator``), its heads screened
    /// as a signature route's.
    func loopGate(for access: GatewayConfiguration.Route.Access, listener: FeatureListener) -> LoopGate? {
        authenticatingLoopGate(for: access, listener: listener)
    }

    var keys: [GatewayKeyInventory.Entry] {
        var keys: [GatewayKeyInventory.Entry] = []
        if let file = settings.decryptionKeyFile { keys.append(.init(role: "Play Integrity decryption key", name: file, algorithm: "A256KW")) }
        if let file = settings.verificationKeyFile { keys.append(.init(role: "Play Integrity verification key", name: file, algorithm: "ES256")) }
        if let standard = settings.standard {
            keys.append(.init(role: "Play Integrity service account", name: standard.serviceAccountFile, algorithm: "RS256"))
        }
        return keys
    }
}
