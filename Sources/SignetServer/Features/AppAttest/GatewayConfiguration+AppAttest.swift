// SPDX-License-Identifier: Apache-2.0
import Foundation
import SignetCore
import SignetMiddleware

extension GatewayConfiguration {
    /// App Attest registration and the `apple-app-attest` algorithm; off when absent.
    public struct AppAttest: Codable, Sendable, Equatable {
        /// Accepted App IDs, `TEAMID.bundle.id`.
        public var appIDs: [String]
        public var allowDevelopment: Bool?
        /// `allowDevelopment` in force: off when absent.
        var developmentAllowed: Bool { allowDevelopment ?? false }
        public var clientDataHash: ClientDataHash?
        /// PEM file of extra trusted roots (the simulator's, in development). Apple's root is used
        /// when this is absent; when present, only these roots are trusted.
        public var trustedRootsFile: String?
        /// How many counters below the highest may still arrive, each once: an app signing
        /// requests concurrently (HTTP/2 sends them in parallel) delivers them out of order. 16 by
        /// default; 0 is strict. At most 63.
        public var counterWindow: Int?
        /// `counterWindow` in force: 16 when absent (issue 37: strict counters refused an app's
        /// parallel requests as `counter_not_increasing`).
        var counterWidth: Int { counterWindow ?? 16 }
        /// The highest App Attest risk metric a device may have (Apple's count of keys attested for
        /// the app on that device lately); unchecked when absent. Known once a receipt was exchanged.
        public var maxRiskMetric: Int?
        /// Above `maxRiskMetric`: `refuse` (403 `risk_metric_exceeded`, the default) or `flag` (let
        /// through; the upstream reads `Signet-Risk-Metric`).
        public var riskAction: RiskAction?
        /// Exchanging receipts with Apple for the risk metric; off when absent.
        public var receiptExchange: ReceiptExchange?
        /// The app builds accepted (iOS 27's `apple_validation_category_01`): validation categories
        /// by name (`app-store`, `testflight`, `development`, `enterprise`, `developer-id`,
        /// `platform`, …) or number. Checked at registration and on every App Attest assertion
        /// wherever no route says otherwise; any when absent.
        public var appCategories: [String]?
        /// The lowest `CFBundleVersion` accepted (`apple_bundle_version_01`), as numbers (`42`,
        /// `2.1.0`); likewise checked at registration and on every assertion. Any when absent.
        public var minimumAppVersion: String?
        /// Whether a device that declares no app build (iOS 26 and older write none) is refused
        /// (`app_build_undeclared`); off when absent: such devices pass the checks they give no fact for.
        public var requireAppBuild: Bool?
        public init(
            appIDs: [String],
            allowDevelopment: Bool? = nil,
            clientDataHash: ClientDataHash? = nil,
            trustedRootsFile: String? = nil,
            counterWindow: Int? = nil
        ) {
            self.counterWindow = counterWindow
            self.appIDs = appIDs
            self.allowDevelopment = allowDevelopment
            self.clientDataHash = clientDataHash
            self.trustedRootsFile = trustedRootsFile
        }
    }

    /// What happens to a device above `maxRiskMetric`.
    public enum RiskAction: String, Sendable, ConfigurationChoice {
        case refuse, flag
    }

    /// Apple's receipt exchange: the developer's App Attest key authenticates the gateway.
    public struct ReceiptExchange: Codable, Sendable, Equatable {
        /// Where production devices' receipts go: Apple's production endpoint by default (a local
        /// stand-in in tests).
        public var url: String?
        /// Where development devices' receipts go: Apple's development endpoint by default.
        public var developmentUrl: String?
        /// The developer team id (the token's `iss`).
        public var teamId: String
        /// The key id of the developer key (the token's `kid`).
        public var keyId: String
        /// PEM file of the developer's P-256 key (the `.p8` Apple issues).
        public var keyFile: String
        /// Exchange this long before a receipt expires (default 30 days).
        public var refreshBeforeExpirySeconds: Int?
        var refreshBeforeExpiry: Int { refreshBeforeExpirySeconds ?? 30 * 86_400 }
        /// How often due receipts are looked for (default 60).
        public var intervalSeconds: Int?
        var interval: Int { intervalSeconds ?? 60 }
        /// At most this many exchanges per interval (default 50): the rate bound.
        public var batchSize: Int?
        var batch: Int { batchSize ?? 50 }

        public init(
            url: String? = nil,
            developmentUrl: String? = nil,
            teamId: String,
            keyId: String,
            keyFile: String,
            refreshBeforeExpirySeconds: Int? = nil,
            intervalSeconds: Int? = nil,
            batchSize: Int? = nil
        ) {
            self.url = url
            self.developmentUrl = developmentUrl
            self.teamId = teamId
            self.keyId = keyId
            self.keyFile = keyFile
            self.refreshBeforeExpirySeconds = refreshBeforeExpirySeconds
            self.intervalSeconds = intervalSeconds
            self.batchSize = batchSize
        }
    }

    /// What the app passed to App Attest as `clientDataHash` for a challenge.
    public enum ClientDataHash: String, Sendable, ConfigurationChoice {
        /// SHA-256 of the challenge's UTF-8 bytes (the default).
        case sha256
        /// The challenge's bytes themselves.
        case raw
    }
}

extension GatewayConfiguration.AppAttest {
    /// The limit the verifier applies; nil when no `maxRiskMetric` is configured.
    var riskLimit: RiskLimit? {
        maxRiskMetric.map { RiskLimit(maximum: $0, action: riskAction == .flag ? .flag : .refuse) }
    }

    func validate() throws {
        if let window = counterWindow, !(0...CounterWindow.maximumWidth).contains(window) {
            throw ConfigurationError.invalid("appAttest.counterWindow", "appAttest.counterWindow is 0 to \(CounterWindow.maximumWidth)")
        }
        if let maximum = maxRiskMetric, maximum < 1 {
            throw ConfigurationError.invalid("appAttest.maxRiskMetric", "appAttest.maxRiskMetric is at least 1 (a device that attested once has 1)")
        }
        _ = try appBuildPolicy(at: "appAttest")
        if let exchange = receiptExchange {
            for (name, url) in [("url", exchange.url), ("developmentUrl", exchange.developmentUrl)] {
                guard let url else { continue }
                // The developer token travels in the request: plain HTTP only to this machine.
                try GatewayConfiguration.checkHTTPS(url, name: "appAttest.receiptExchange.\(name)")
            }
            if let seconds = exchange.intervalSeconds, seconds < 1 {
                throw ConfigurationError.invalid("appAttest.receiptExchange.intervalSeconds", "appAttest.receiptExchange.intervalSeconds is at least 1")
            }
            if let size = exchange.batchSize, !(1...10_000).contains(size) {
                throw ConfigurationError.invalid("appAttest.receiptExchange.batchSize", "appAttest.receiptExchange.batchSize is 1 to 10000")
            }
            if let seconds = exchange.refreshBeforeExpirySeconds, !(0...(89 * 86_400)).contains(seconds) {
                throw ConfigurationError.invalid("appAttest.receiptExchange.refreshBeforeExpirySeconds", "appAttest.receiptExchange.refreshBeforeExpirySeconds is 0 to 89 days")
            }
        }
    }
}
