// SPDX-License-Identifier: Apache-2.0
import ArgumentParser
import Foundation
import Hummingbird
import Logging
import Synchronization
import SignetCore
import SignetMiddleware
import SignetServer
import SignetStore

struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run the Signet gateway in front of an upstream (see docs/gateway.md for the configuration).",
        discussion: """
            Reads the JSON configuration, then SIGNET_* environment variables (SIGNET_UPSTREAM, SIGNET_STORE, \
            SIGNET_LISTEN_HOST, SIGNET_LISTEN_PORT, SIGNET_PUBLIC_SCHEME, SIGNET_PUBLIC_AUTHORITY, \
            SIGNET_ADMIN_TOKEN, SIGNET_ADMIN_LISTEN_PORT, SIGNET_DEBUG). Stops gracefully on SIGTERM or SIGINT. On SIGHUP, reads the \
            configuration and its key files again and swaps them in without dropping a connection; a \
            configuration that is refused is logged, and the running one kept.
            """
    )

    @Option(help: "Configuration file (JSON).")
    var config: String?

    @Option(help: "Log level: trace, debug, info, notice, warning, error.")
    var logLevel: String = "info"

    @Option(help: "Log format: text (swift-log's own lines) or json (one object per line, the access log's fields as keys).")
    var logFormat: String = "text"

    @Flag(help: "Check the configuration and print the route table, then stop (nothing is opened or written).")
    var check = false

    func run() async throws {
        EventLoopSizing.applyToSharedEventLoops()
        switch logFormat {
        case "text": LoggingSystem.bootstrap(DeferredMetadataLogHandler.standardError)
        case "json": LoggingSystem.bootstrap { label in JSONLogHandler(label: label) }
        default: throw ValidationError("--log-format is text or json")
        }
        var configuredLogger = Logger(label: "signet")
        configuredLogger.logLevel = Logger.Level(rawValue: logLevel) ?? .info
        let logger = configuredLogger
        let configuration: GatewayConfiguration
        do {
            configuration = try GatewayConfiguration.load(
                file: config,
                environment: ProcessInfo.processInfo.environment
            )
        } catch let error as ConfigurationError {
            throw failure(error.description, logger: logger)
        } catch let error as SignetError {
            throw failure(error.reason, logger: logger)
        }
        if check {
            do {
                try configuration.checkFiles()
            } catch let error as ConfigurationError {
                throw failure(error.description, logger: logger)
            }
            let store = configuration.store.sqlite ?? (configuration.store.postgres != nil ? "postgres" : "memory")
            guard logFormat == "text" else {
                // One JSON line, whatever the level: the answer to the question asked.
                var answer = logger
                answer.logLevel = .notice
                answer.notice(
                    "configuration ok",
                    metadata: [
                        "upstream": "\(configuration.upstream)", "store": "\(store)",
                        "routes": .array(configuration.routeTableLines.map { .string($0) }),
                    ]
                )
                return
            }
            print("configuration ok: \(configuration.upstream), store \(store)")
            print(configuration.routeTableLines.joined(separator: "\n"))
            return
        }
        let upstream = configuration.upstream
        let listening = ListeningFlag()
        do {
            try await serve(configuration, upstream: upstream, logger: logger, listening: listening)
            logger.notice("signet gateway stopped", metadata: ["address": "\(configuration.listen.host):\(configuration.listen.port)"])
        } catch let error as ConfigurationError {
            throw failure(error.description, logger: logger)
        } catch let error as SignetError {
            throw failure(error.reason, logger: logger)
        } catch where !listening.isSet {
            // NIO says "bind(descriptor:ptr:bytes:): Address already in use": name what it bound.
            throw failure("cannot listen on \(configuration.listen.host):\(configuration.listen.port): \(error)", logger: logger)
        }
    }

    /// Why the command stops: with JSON logs, a `critical` JSON line and a bare exit status (an
    /// "Error: …" text line would break the stream a collector parses); otherwise the message.
    private func failure(_ message: String, logger: Logger) -> any Error {
        guard logFormat == "json" else { return CommandFailure(message) }
        logger.critical("signet gateway cannot start", metadata: ["error": "\(message)"])
        return ExitCode.failure
    }

    private func serve(
        _ configuration: GatewayConfiguration,
        upstream: String,
        logger: Logger,
        listening: ListeningFlag
    ) async throws {
        let file = config
        let reload: @Sendable () throws -> GatewayConfiguration = {
            try GatewayConfiguration.load(file: file, environment: ProcessInfo.processInfo.environment)
        }
        let adminScheme = configuration.adminListener?.tls == nil ? "http" : "https"
        let adminHost = configuration.adminListener?.listen.host ?? ""
        // With JSON logs, everything goes out as JSON lines on one stream: no text banner beside them.
        let textBanner = logFormat == "text"
        let onAdminRunning: @Sendable (Int) async -> Void = { port in
            logger.notice("signet admin listener listening", metadata: ["address": "\(adminHost):\(port)"])
            guard textBanner else { return }
            StandardOutput.write(
                Data("signet admin listener on \(adminScheme)://\(adminHost):\(port) (console, admin API, /metrics)\n".utf8)
            )
        }
        let authorizationScheme = configuration.authorizationListener?.tls == nil ? "http" : "https"
        let authorizationHost = configuration.authorizationListener?.listen.host ?? ""
        let onAuthorizationRunning: @Sendable (Int) async -> Void = { port in
            logger.notice("signet authorization listener listening", metadata: ["address": "\(authorizationHost):\(port)"])
            guard textBanner else { return }
            let base = "\(authorizationScheme)://\(authorizationHost):\(port)"
            StandardOutput.write(
                Data("signet authorization listener on \(base) (forward auth: \(base)/forward-auth, Envoy HTTP ext_authz: \(base)/ext-authz)\n".utf8)
            )
        }
        let grpcHost = configuration.authorizationListener?.grpc?.host ?? ""
        let onAuthorizationGRPCRunning: @Sendable (Int) async -> Void = { port in
            logger.notice("signet ext_authz gRPC listening", metadata: ["address": "\(grpcHost):\(port)"])
            guard textBanner else { return }
            StandardOutput.write(Data("signet ext_authz gRPC on \(grpcHost):\(port) (envoy.service.auth.v3.Authorization)\n".utf8))
        }
        try await SignetGateway.serve(
            configuration: configuration,
            logger: logger,
            reload: reload,
            onAdminRunning: onAdminRunning,
            onAuthorizationRunning: onAuthorizationRunning,
            onAuthorizationGRPCRunning: onAuthorizationGRPCRunning
        ) { gateway, port in
            listening.set()
            var metadata: Logger.Metadata = ["address": "\(configuration.listen.host):\(port)", "upstream": "\(upstream)"]
            if !textBanner {
                // What the text banner says, as fields of the line.
                metadata["routes"] = .array(configuration.routeTableLines.map { .string($0) })
                if let tls = gateway.tls { metadata["pins"] = .array(tls.pinLines.map { .string($0) }) }
            }
            logger.notice("signet gateway listening", metadata: metadata)
            let scheme = gateway.tls == nil ? "http" : "https"
            var banner = "signet gateway listening on \(scheme)://\(configuration.listen.host):\(port) -> \(upstream)\n"
            banner += configuration.routeTableLines.map { "  " + $0 }.joined(separator: "\n") + "\n"
            if let tls = gateway.tls {
                // The pins a client configures, leaf first; the development CA is what it trusts.
                banner += "tls: served chain (leaf first), pin these:\n"
                for line in tls.pinLines { banner += "  \(line)\n" }
                if configuration.tls?.development == true {
                    banner += "tls: development certificate; clients trust its CA (the last certificate above)\n"
                }
            }
            if configuration.adminListener == nil, configuration.adminToken != nil || !(configuration.adminCertificates ?? []).isEmpty {
                // The risk docs/gateway.md explains: a page the upstream serves shares the console's origin.
                banner += "console: /signet/admin/ shares this origin with the API; give it an adminListener of its own (docs/gateway.md)\n"
                logger.warning("the operator console shares the API's origin; configure adminListener")
            }
            if textBanner { StandardOutput.write(Data(banner.utf8)) }
        }
    }
}

/// Whether the server got as far as listening: an error before that is about the address.
private final class ListeningFlag: Sendable {
    private let value = Mutex(false)
    var isSet: Bool { value.withLock { $0 } }
    func set() { value.withLock { $0 = true } }
}
