// SPDX-License-Identifier: Apache-2.0
import Foundation
import SignetCore
import SignetMiddleware

/// Known agents (Web Bot Auth): the `agent` access mode, which takes only agents' signatures, and
/// what a `verified` route's `agents` option adds beside its registered clients. The directories
/// are fetched and cached by this feature, once for every route.
struct WebBotAuthFeature: GatewayFeature {
    static let agentsOption = AccessMode.Option(name: "agents", kind: .string)

    static let accessModes: [AccessMode] = [
        AccessMode(
            name: "agent",
            options: [agentsOption],
            signature: .trustLevel(.agent),
            check: { route, configuration, at in
                guard configuration.webBotAuth != nil else {
                    throw ConfigurationError.invalid("\(at).access", "\(at).access: agent routes need webBotAuth")
                }
                _ = try names(for: route.access, configuration, at: at)
            }
        )
    ]

    static func validate(_ configuration: GatewayConfiguration) throws { try configuration.webBotAuth?.validate() }

    let settings: GatewayConfiguration.WebBotAuth
    let directories: [String: String]
    let cache: AgentDirectoryCache
    let dependencies: FeatureDependencies

    init?(_ context: FeatureContext) throws {
        guard let settings = context.configuration.webBotAuth else { return nil }
        self.settings = settings
        dependencies = context.dependencies
        directories = try settings.directories()
        // A reload keeps what was fetched (the directories are the same agents' until they say
        // otherwise), unless it changes how long a directory is kept.
        if let previous = context.previous(WebBotAuthFeature.self), previous.settings.refresh == settings.refresh,
            previous.settings.requireSignedDirectory == settings.requireSignedDirectory
        {
            cache = previous.cache
        } else {
            cache = AgentDirectoryCache(
                logger: context.dependencies.logger,
                refresh: TimeInterval(settings.refresh),
                requireSigned: settings.requireSignedDirectory ?? false
            )
        }
    }

    /// The agents a route's `agents` option names (comma-separated; `*` or absent: every one).
    ///
    /// - Throws: ``ConfigurationError`` for a name no agent has.
    static func names(for access: GatewayConfiguration.Route.Access, _ configuration: GatewayConfiguration, at: String) throws -> Set<String>? {
        guard let text = access.string(agentsOption.name), text != "*" else { return nil }
        let known = Set(configuration.webBotAuth?.agents.map(\.name) ?? [])
        let names = text.split(separator: ",", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
        for name in names where !known.contains(name) {
            throw ConfigurationError.invalid("\(at).agents", "\(at).agents: \(name.debugDescription) is not an agent of webBotAuth.agents")
        }
        return Set(names)
    }

    /// What a route taking the agents `names` (all when `nil`) accepts.
    func acceptance(names: Set<String>?) -> AgentAcceptance {
        AgentAcceptance(
            agents: directories.filter { names?.contains($0.value) ?? true },
            tags: settings.acceptedTags,
            maximumValidity: TimeInterval(settings.maxValidity),
            source: cache
        )
    }

    func gate(for access: GatewayConfiguration.Route.Access, listener: FeatureListener) throws -> RouteGate {
        let d = dependencies
        return SignetVerificationMiddleware<SignetRequestContext>(
            verifier: d.requestVerifier,
            requirement: .trustLevel(.agent),
            signatureKeys: SignatureKeyAcceptance(schemes: [], agents: acceptance(names: try Self.names(for: access, d.configuration, at: "routes"))),
            metrics: d.metrics,
            clock: d.clock
        )
    }

    /// The same middleware, run by the event-loop data plane (``LoopVerifier``): the agent's
    /// directory fetched (or read from its cache) in the verification's task.
    func loopGate(for access: GatewayConfiguration.Route.Access, listener: FeatureListener) -> LoopGate? {
        guard let gate = (try? gate(for: access, listener: listener)) as? SignetVerificationMiddleware<SignetRequestContext> else { return nil }
        return .verifying(
            LoopVerifier(
                gate: gate,
                storeTimeout: .milliseconds(dependencies.configuration.storeTimeoutMilliseconds),
                metrics: dependencies.metrics
            )
        )
    }
}
