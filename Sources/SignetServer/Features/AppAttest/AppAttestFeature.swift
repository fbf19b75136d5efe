// SPDX-License-Identifier: Apache-2.0
import AsyncHTTPClient
import Foundation
import Logging
import ServiceLifecycle
import SignetAppAttest
import SignetCore
import SignetMiddleware

/// Apple App Attest: the attestation verifier registration uses, the `apple-app-attest` signature
/// algorithm the request verifier learns, and the receipt exchange with Apple in the background.
struct AppAttestFeature: GatewayFeature {
    static func validate(_ configuration: GatewayConfiguration) throws { try configuration.appAttest?.validate() }

    let settings: GatewayConfiguration.AppAttest
    let attestationVerifier: AppAttestAttestationVerifier
    let receiptVerifier: AppAttestReceiptVerifier
    /// The developer's App Attest key (ES256) for Apple's receipt exchange.
    let developerKey: SigningKey?
    let dependencies: FeatureDependencies

    init?(_ context: FeatureContext) throws {
        guard let settings = context.configuration.appAttest else { return nil }
        let roots = try settings.trustedRootsFile.map(PEMCertificates.read(file:))
        try SimulatorRoots.check(roots ?? [], at: "appAttest.trustedRootsFile", development: context.configuration.development)
        let policy = try AppAttestPolicy(
            appIDs: Set(settings.appIDs),
            allowDevelopment: settings.developmentAllowed,
            clientDataHash: settings.clientDataHash == .raw ? .rawChallenge : .sha256OfChallenge,
            roots: roots,
            appBuild: try settings.appBuildPolicy(at: "appAttest")
        )
        developerKey = try settings.receiptExchange.map { exchange in
            guard let text = FileManager.default.contents(atPath: exchange.keyFile) else {
                throw ConfigurationError(.file, at: "appAttest.receiptExchange.keyFile", "cannot read the App Attest developer key \(exchange.keyFile)")
            }
            let key = try SigningKey(text: String(decoding: text, as: UTF8.self))
            guard key.p256PrivateKey != nil else {
                throw ConfigurationError(.file, at: "appAttest.receiptExchange.keyFile", "the App Attest developer key is P-256, not \(key.type.rawValue)")
            }
            return key
        }
        self.settings = settings
        attestationVerifier = AppAttestAttestationVerifier(policy: policy)
        receiptVerifier = AppAttestReceiptVerifier(trusting: policy.receiptRoots)
        dependencies = context.dependencies
    }

    /// Assertions as an RFC 9421 algorithm (`apple-app-attest`), for the request verifier.
    static func signatureAlgorithms(_ configuration: GatewayConfiguration) -> [any SignatureAlgorithm] {
        configuration.appAttest.map { [AppAttestAlgorithm(appIDs: Set($0.appIDs))] } ?? []
    }

    static func checkFiles(_ configuration: GatewayConfiguration, _ files: inout FileChecks) {
        guard let appAttest = configuration.appAttest else { return }
        if let roots = appAttest.trustedRootsFile { files.mustRead(roots, "appAttest.trustedRootsFile") }
        if let exchange = appAttest.receiptExchange { files.mustRead(exchange.keyFile, "the App Attest developer key") }
    }

    /// The receipt exchange runs from start.
    static func restartOnlyChanges(from old: GatewayConfiguration, to new: GatewayConfiguration) -> [String] {
        old.appAttest?.receiptExchange == new.appAttest?.receiptExchange ? [] : ["appAttest.receiptExchange"]
    }

    /// Apple's receipt exchange, when configured (read at start; a reload does not change it).
    func services(httpClient: HTTPClient) -> [any Service] {
        guard let exchange = settings.receiptExchange, let developerKey else { return [] }
        let d = dependencies
        do {
            let client = try AppleReceiptExchange(
                url: exchange.url ?? AppleReceiptExchange.production,
                developmentURL: exchange.developmentUrl ?? AppleReceiptExchange.development,
                teamID: exchange.teamId,
                keyID: exchange.keyId,
                key: developerKey,
                client: httpClient
            )
            return [
                ReceiptRefreshService(
                    store: d.store,
                    exchange: client,
                    verifier: receiptVerifier,
                    appIDs: Set(settings.appIDs),
                    schedule: ReceiptSchedule(beforeExpiry: TimeInterval(exchange.refreshBeforeExpiry)),
                    interval: .seconds(exchange.interval),
                    batchSize: exchange.batch,
                    logger: d.logger,
                    clock: d.clock
                )
            ]
        } catch {
            // The key was checked at start (P-256); this is not expected, but never silent.
            d.logger.error("the receipt refresher cannot start", metadata: ["error": "\(error)"])
            return []
        }
    }

    var keys: [GatewayKeyInventory.Entry] {
        settings.receiptExchange.map { [.init(role: "App Attest receipt exchange", name: $0.keyId, algorithm: "ES256")] } ?? []
    }
}
