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
/// (Google's roots or configured ones, the policy, the revocation list, the leaked-key count), and
/// the revocation list's fetcher in the background. It owns no access mode: an attested Android
/// device signs with `ecdsa-p256-sha256` through the same request verifier, and routes ask for it
/// by trust level (`android-key-attestation`, or `attested` for either platform).
struct AndroidAttestationFeature: GatewayFeature {
    let settings: GatewayConfiguration.AndroidAttestation
    /// What registration checks with, before the HTTP client (Play Integrity's standard tokens) is
    /// known: ``registrar(httpClient:)`` completes it.
    private let baseRegistrar: AndroidAttestationRegistrar
    /// The service account key file's bytes, for standard Play Integrity tokens.
    private let serviceAccount: [UInt8]?
    let roots: [Certificate]
    /// The revocation list as last fetched or read; `nil` when none is configured.
    let status: AttestationStatusCache?
    let dependencies: FeatureDependencies
    /// Standard decodes on `play-integrity` routes, all clients together (one key, "all"), and
    /// per client address; kept by a reload that keeps the budget.
    let decodes: (overall: SourceRateLimiter, perSource: SourceRateLimiter)

    /// - Parameter previous: The running gateway's, at a reload: its fetched list (the fetcher,
    ///   started with the gateway, keeps feeding that one) is kept.
    init?(_ dependencies: FeatureDependencies, previous: AndroidAttestationFeature?) throws {
        guard let settings = dependencies.configuration.androidAttestation else { return nil }
        self.settings = settings
        self.dependencies = dependencies
        let budget = settings.playIntegrity?.standard?.decodeBudget ?? 0
        if let previous, previous.decodes.overall.limit == budget {
            decodes = previous.decodes
        } else {
            decodes = (SourceRateLimiter(limit: budget), SourceRateLimiter(limit: Self.standardDecodesPerKeyPerMinute))
        }
        let policy = try settings.policy()
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
            playIntegrity: try settings.playIntegrityPolicy().map { policy in
                AndroidAttestationRegistrar.PlayIntegrityCheck(
                    classic: try settings.playIntegrityVerifier(),
                    policy: policy,
                    required: settings.playIntegrity?.required ?? true
                )
            }
        )
        serviceAccount = try settings.playIntegrity?.standard.map { standard in
            guard let bytes = FileManager.default.contents(atPath: standard.serviceAccountFile) else {
                throw ConfigurationError(.file, at: "androidAttestation.playIntegrity.standard.serviceAccountFile", "cannot read \(standard.serviceAccountFile)")
            }
            // Checked now: a wrong key file fails the start, not the first registration.
            do {
                let (account, _) = try PlayIntegrityDecoder.account(Array(bytes))
                if standard.tokenUrl == nil, let uri = account.token_uri, !GatewayConfiguration.AndroidAttestation.isSecureOrLocal(uri) {
                    throw SignetError(.invalidKey, "its token_uri is not https")
                }
            } catch let error as SignetError {
                throw ConfigurationError.invalid("androidAttestation.playIntegrity.standard.serviceAccountFile", "\(standard.serviceAccountFile): \(error.reason)")
            }
            return Array(bytes)
        }
    }

    /// The registrar, with standard Play Integrity tokens decoded through `httpClient`.
    func registrar(httpClient: HTTPClient) -> AndroidAttestationRegistrar {
        var registrar = baseRegistrar
        guard let standard = settings.playIntegrity?.standard, let serviceAccount else { return registrar }
        do {
            let decoder = try PlayIntegrityDecoder(
                serviceAccountJSON: serviceAccount,
                packageName: standard.packageName,
                decodeURL: standard.decodeUrl,
                tokenURL: standard.tokenUrl,
                client: httpClient,
                clock: dependencies.clock
            )
            registrar.playIntegrity?.standard = { try await decoder.decode($0) }
        } catch {
            // The key was checked at start; never silent.
            dependencies.logger.error("standard Play Integrity tokens cannot be decoded", metadata: ["error": "\(error)"])
        }
        return registrar
    }

    /// Standard tokens a key may have decoded on `play-integrity` routes per minute.
    static let standardDecodesPerKeyPerMinute = 10

    func admits(_ requirement: AccessRequirement) -> Bool {
        requirement == .playIntegrity && baseRegistrar.playIntegrity != nil
    }

    /// `play-integrity` routes: a signature and a Play Integrity token bound to it.
    func gate(for requirement: AccessRequirement, listener: FeatureListener) -> (any MiddlewareProtocol<Request, Response, SignetRequestContext>)? {
        guard requirement == .playIntegrity, let check = registrar(httpClient: listener.httpClient).playIntegrity else { return nil }
        return PlayIntegrityRouteMiddleware(
            verifier: dependencies.requestVerifier,
            check: check,
            metrics: dependencies.metrics,
            clock: dependencies.clock,
            limiter: SourceRateLimiter(limit: Self.standardDecodesPerKeyPerMinute),
            perSource: decodes.perSource,
            overall: decodes.overall
        )
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
        var keys = roots.map { GatewayKeyInventory.certificate("Android attestation root", $0) }
        if let play = settings.playIntegrity {
            if let file = play.decryptionKeyFile { keys.append(.init(role: "Play Integrity decryption key", name: file, algorithm: "A256KW")) }
            if let file = play.verificationKeyFile { keys.append(.init(role: "Play Integrity verification key", name: file, algorithm: "ES256")) }
            if let standard = play.standard {
                keys.append(.init(role: "Play Integrity service account", name: standard.serviceAccountFile, algorithm: "RS256"))
            }
        }
        return keys
    }
}
