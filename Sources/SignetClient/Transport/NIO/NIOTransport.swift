// SPDX-License-Identifier: Apache-2.0
// The client's own SwiftNIO transport: Linux's (whose URLSession asks nothing about server trust),
// and macOS's for tools and tests. On iOS, tvOS, watchOS and visionOS this file is empty and
// SwiftNIO is not linked (Package.swift, docs/ios.md).
#if os(macOS) || !canImport(Darwin)
import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import SignetCore

/// The client's own transport: one kept-alive ``HTTP1Connection`` per origin, TLS by BoringSSL with
/// the chain decided by the client's ``ServedChainCheck``.
actor NIOTransport: ClientTransport {
    private let group: any EventLoopGroup
    private var tlsContext: NIOSSLContext
    private var connections: [Origin: HTTP1Connection] = [:]
    private var connecting: [Origin: Task<HTTP1Connection, any Error>] = [:]
    private let maximumResponseBytes: Int
    private let logger: Logger
    private let check: ServedChainCheck

    init(
        group: any EventLoopGroup,
        identity: ClientIdentity?,
        maximumResponseBytes: Int,
        logger: Logger,
        check: @escaping ServedChainCheck
    ) throws {
        self.group = group
        self.tlsContext = try Self.makeTLSContext(identity: identity)
        self.maximumResponseBytes = maximumResponseBytes
        self.logger = logger
        self.check = check
    }

    func useClientIdentity(_ identity: ClientIdentity?) throws {
        tlsContext = try Self.makeTLSContext(identity: identity)
        closeConnections()
    }

    func execute(_ request: TransportRequest, timeout: Duration) async throws -> ClientResponse {
        let origin = request.origin
        var head = HTTPRequestHead(version: .http1_1, method: HTTPMethod(rawValue: request.method), uri: request.path)
        head.headers.add(name: "Host", value: origin.authority)
        for field in request.fields { head.headers.add(name: field.name, value: field.value) }
        if request.framesBody { head.headers.add(name: "Content-Length", value: String(request.body.count)) }
        // A kept-alive connection the server has closed meanwhile fails before any answer: retry
        // once on a fresh one. A signed request carries a nonce, so one that did arrive the first
        // time is refused as a replay, never applied twice. Fresh connections are not retried.
        var retried = false
        while true {
            let (connection, reused) = try await connection(to: origin)
            do {
                let raw = try await withTimeout(timeout) { [head, body = request.body] in
                    try await connection.execute(head: head, body: body)
                }
                var fields = MessageFields()
                for header in raw.head.headers { fields.append(name: header.name, value: header.value) }
                return ClientResponse(status: Int(raw.head.status.code), fields: fields, body: raw.body)
            } catch let error as SignetError where error.code == .connectionFailed && reused && !retried {
                logger.debug("kept-alive connection closed; retrying once", metadata: ["origin": "\(origin)"])
                drop(connection, for: origin)
                retried = true
            } catch let error as SignetError where error.code == .requestTimeout {
                // The connection closed itself if the request had gone out; one still queued
                // leaves it to the requests sharing it.
                throw error
            } catch is CancellationError {
                throw CancellationError()
            } catch {
                connection.abort()
                if connections[origin] === connection { connections[origin] = nil }
                throw error
            }
        }
    }

    func closeConnections() {
        for connection in connections.values { connection.close() }
        connections = [:]
    }

    private func drop(_ connection: HTTP1Connection, for origin: Origin) {
        connection.close()
        if connections[origin] === connection { connections[origin] = nil }
    }

    /// The open connection to `origin`, or a new one; concurrent callers share one connect.
    private func connection(to origin: Origin) async throws -> (HTTP1Connection, reused: Bool) {
        if let existing = connections[origin], !existing.isClosed { return (existing, true) }
        if let pending = connecting[origin] { return (try await pending.value, false) }
        let tls = origin.isTLS ? tlsContext : nil
        let (group, maximumResponseBytes, check) = (self.group, self.maximumResponseBytes, self.check)
        let task = Task {
            try await HTTP1Connection.connect(origin: origin, tls: tls, group: group, maximumResponseBytes: maximumResponseBytes) {
                await check(ServedChain(der: $0), origin)
            }
        }
        connecting[origin] = task
        defer { connecting[origin] = nil }
        let connection = try await task.value
        connections[origin] = connection
        logger.debug("connected", metadata: ["origin": "\(origin)"])
        return (connection, false)
    }

    static func makeTLSContext(identity: ClientIdentity?) throws -> NIOSSLContext {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.minimumTLSVersion = .tlsv12
        tls.verifySignatureAlgorithms = TLSConfiguration.signetVerifySignatureAlgorithms
        // Verification is the client's (the ServedChainCheck in the custom callback); this only
        // makes BoringSSL ask for it.
        tls.certificateVerification = .fullVerification
        if let identity {
            do {
                tls.certificateChain = try NIOSSLCertificate.fromPEMBytes(Array(identity.certificateChainPEM.utf8))
                    .map { .certificate($0) }
                tls.privateKey = .privateKey(try NIOSSLPrivateKey(bytes: Array(identity.privateKeyPEM.utf8), format: .pem))
            } catch {
                throw SignetError(.invalidKey, "the client certificate or key does not load: \(error)")
            }
        }
        return try NIOSSLContext(configuration: tls)
    }

    deinit {
        for connection in connections.values { connection.close() }
    }
}

/// The event loops the NIO transport runs on (``SignetTransport/nio(eventLoopGroup:)``).
struct NIOEventLoops: Sendable {
    let group: any EventLoopGroup
}

extension SignetTransport {
    /// The client's own HTTP/1.1 connections over SwiftNIO and BoringSSL, checked by the client's
    /// ``ServerTrustEvaluator``: the transport on Linux (and Android, Windows), and on macOS for
    /// tools and tests. Not on iOS, tvOS, watchOS or visionOS, where `URLSession` asks about every
    /// chain and the client links no SwiftNIO.
    public static func nio(eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton) -> SignetTransport {
        SignetTransport(kind: .nio(NIOEventLoops(group: eventLoopGroup)))
    }
}
#endif
