// SPDX-License-Identifier: Apache-2.0
import AsyncHTTPClient
import Foundation
import Logging
import ServiceLifecycle
import SignetCore
import SignetMiddleware
import Synchronization

/// Applies a new configuration to a running gateway: on `SIGHUP` (`signet serve`), or when asked
/// (``reload(to:)``). Routes, shared secrets, the response, token and OHTTP keys, the trust
/// document, passwords, App Attest and every limit come from the new configuration and its files;
/// the server, its connections, the store, the upstream's connection pool, the console's activity,
/// the metrics and, while the token and `passwords` are unchanged, the counts of failed admin
/// credentials and logins carry on.
///
/// The listeners' certificates and keys are read again from their files (renewed certificates are
/// served to new connections; open ones keep theirs). A configuration that does not validate, names
/// a file that is not there or a key that is not its certificate's, or changes what only a restart
/// can (`listen`, the rest of `tls`, `store`, `upstream`…) is refused, logged, and the running one is kept. Reloads are
/// serialised; the swap is one reference (``ReloadableResponder``).
public final class GatewayReloader: Service, Sendable {
    struct Serving: Sendable {
        var gateway: SignetGateway
        /// Each listener's stages and what it serves.
        var listeners: [SignetGateway.ListenerResponders]
        let httpClient: HTTPClient
    }

    private let load: @Sendable () throws -> GatewayConfiguration
    private let onHangup: Bool
    private let logger: Logger
    private let serving = Mutex<Serving?>(nil)

    /// - Parameters:
    ///   - load: Reads the configuration again (the file and the environment, as at start).
    ///   - onHangup: Reload on `SIGHUP`.
    ///   - logger: Where reloads and their refusals are logged.
    public init(
        onHangup: Bool = true,
        logger: Logger,
        load: @escaping @Sendable () throws -> GatewayConfiguration = {
            throw ConfigurationError(.file, at: "", "this gateway was given no configuration to read again")
        }
    ) {
        self.load = load
        self.onHangup = onHangup
        self.logger = logger
    }

    /// A listener's stages, to replace at each reload.
    func attach(gateway: SignetGateway, listener: SignetGateway.ListenerResponders, httpClient: HTTPClient) {
        serving.withLock { serving in
            if serving == nil { serving = Serving(gateway: gateway, listeners: [], httpClient: httpClient) }
            serving?.listeners.append(listener)
        }
    }

    /// The configuration in force.
    public var configuration: GatewayConfiguration? { serving.withLock { $0?.gateway.configuration } }

    /// Reads the configuration again and applies it.
    public func reload() throws {
        let configuration: GatewayConfiguration
        do {
            configuration = try load()
        } catch {
            // A file that does not parse is the commonest refused reload: counted as one.
            serving.withLock { $0?.gateway.metrics.recordReload(applied: false) }
            throw error
        }
        try reload(to: configuration)
    }

    /// Applies `configuration`, or throws and keeps the running one; counted either way
    /// (`signet_configuration_reloads_total`).
    public func reload(to configuration: GatewayConfiguration) throws {
        try serving.withLock { serving in
            guard let current = serving else {
                // The embedder's doing: `reload` before the gateway's application was made.
                throw ConfigurationError(.restartRequired, at: "", "the gateway is not serving yet: start it, then reload")
            }
            let applied = current.gateway.metrics
            do {
                try apply(configuration, over: current, to: &serving)
                applied.recordReload(applied: true)
            } catch {
                applied.recordReload(applied: false)
                throw error
            }
        }
    }

    private func apply(_ configuration: GatewayConfiguration, over current: Serving, to serving: inout Serving?) throws {
        try configuration.validate()
        try Self.restartOnly(from: current.gateway.configuration, to: configuration)
        try configuration.checkFiles()
        let next = try SignetGateway(
            configuration: configuration,
            store: current.gateway.store,
            logger: current.gateway.logger,
            clock: current.gateway.clock,
            continuing: current.gateway,
            validated: true
        )
        // Both listeners, within one critical section: no request sees one new and one old.
        // A request whose body is still arriving is judged by `next` when it completes
        // (RequestCompletionResponder), whatever was in force when its head came.
        for listener in current.listeners {
            next.replaceResponders(of: listener, httpClient: current.httpClient)
        }
        // Connections accepted from now on get the renewed certificates; open ones keep theirs.
        next.certificateRenewal?.install()
        serving?.gateway = next
    }

    /// Refuses a change to what the running server, store or services were built from.
    static func restartOnly(from old: GatewayConfiguration, to new: GatewayConfiguration) throws {
        var changed: [String] = []
        if old.listen != new.listen { changed.append("listen") }
        // The certificate files are read again (a renewal); what else TLS is, only a restart changes.
        if Self.withoutFiles(old.tls) != Self.withoutFiles(new.tls) { changed.append("tls") }
        if old.store != new.store { changed.append("store") }
        if old.upstream != new.upstream { changed.append("upstream") }
        if Self.withoutFiles(old.adminListener) != Self.withoutFiles(new.adminListener) { changed.append("adminListener") }
        if Self.withoutFiles(old.authorizationListener) != Self.withoutFiles(new.authorizationListener) {
            changed.append("authorizationListener")
        }
        if (old.clientAddressFrom == .proxyProtocol) != (new.clientAddressFrom == .proxyProtocol) {
            changed.append("clientAddressFrom (proxy-protocol)")
        } else if new.clientAddressFrom == .proxyProtocol, old.trustedProxies != new.trustedProxies {
            // The PROXY header is read by the connection's handler, made at start with this list.
            changed.append("trustedProxies (with proxy-protocol)")
        }
        if old.adminListenerAsksForCertificates != new.adminListenerAsksForCertificates {
            // Whether the admin listener's TLS asks for a client certificate is fixed with its server.
            changed.append("adminCertificates (whether the admin listener asks for client certificates)")
        }
        changed += FeatureRegistry.types.flatMap { $0.restartOnlyChanges(from: old, to: new) }
        if old.sweepIntervalSeconds != new.sweepIntervalSeconds { changed.append("sweepIntervalSeconds") }
        // The console's recorder is carried across reloads with the name it was made with.
        if old.instance != new.instance { changed.append("instance") }
        // Made into each listener's connection handlers at start.
        if old.requestTimeoutSeconds != new.requestTimeoutSeconds { changed.append("requestTimeoutSeconds") }
        if old.maxConnections != new.maxConnections { changed.append("maxConnections") }
        if old.maxConnectionsPerClient != new.maxConnectionsPerClient { changed.append("maxConnectionsPerClient") }
        guard changed.isEmpty else {
            // The operator's doing, not a client's: a ConfigurationError at the first key.
            throw ConfigurationError(
                .restartRequired,
                at: changed[0].prefix { $0 != " " }.description,
                "\(changed.joined(separator: ", ")) changed: a restart applies \(changed.count == 1 ? "it" : "them"); the running configuration is kept"
            )
        }
    }

    /// `tls` without the paths of its certificate and key, which a reload may change.
    static func withoutFiles(_ tls: GatewayConfiguration.TLS?) -> GatewayConfiguration.TLS? {
        tls.map {
            var fixed = $0
            fixed.certificateFile = nil
            fixed.keyFile = nil
            return fixed
        }
    }

    static func withoutFiles(_ listener: GatewayConfiguration.AdminListener?) -> GatewayConfiguration.AdminListener? {
        listener.map {
            var fixed = $0
            fixed.tls = withoutFiles($0.tls)
            return fixed
        }
    }

    static func withoutFiles(_ listener: GatewayConfiguration.AuthorizationListener?) -> GatewayConfiguration.AuthorizationListener? {
        listener.map {
            var fixed = $0
            fixed.tls = withoutFiles($0.tls)
            return fixed
        }
    }

    /// Reloads on each `SIGHUP` until the gateway shuts down.
    public func run() async throws {
        guard onHangup else {
            try await gracefulShutdown()
            return
        }
        let (hangups, continuation) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        signal(SIGHUP, SIG_IGN)
        let source = DispatchSource.makeSignalSource(signal: SIGHUP)
        source.setEventHandler { continuation.yield() }
        source.resume()
        defer { source.cancel() }
        for await _ in hangups.cancelOnGracefulShutdown() {
            do {
                try reload()
                logger.notice("signet configuration reloaded")
            } catch let error as SignetError {
                logger.error("signet configuration reload refused", metadata: ["reason": "\(error.reason)"])
            } catch let error as ConfigurationError {
                logger.error("signet configuration reload refused", metadata: ["reason": "\(error)", "kind": "\(error.kind.rawValue)"])
            } catch {
                logger.error("signet configuration reload refused", metadata: ["reason": "\(error)"])
            }
        }
    }
}
