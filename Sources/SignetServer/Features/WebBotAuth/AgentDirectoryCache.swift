// SPDX-License-Identifier: Apache-2.0
import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import SignetCore
import SignetMiddleware

/// Known agents' key directories, fetched when first needed and kept as their answers say, shared
/// by concurrent requests: one fetch per directory at a time, at most one a minute.
///
/// Only configured directories are fetched (the URL a request names must be one of them), so no
/// client can make the gateway fetch an address of its choosing. Each fetch: `GET`, no redirect
/// followed, 5 s, a 200 with at most 64 KiB. A failed fetch keeps the keys fetched before (§6.10: a
/// failure never evicts) for up to a day past their time; with none, the request is refused
/// `agent_directory_unavailable`.
actor AgentDirectoryCache: AgentDirectorySource {
    struct Entry {
        var directory: AgentKeyDirectory?
        var expires = Date.distantPast
        var lastFetch = Date.distantPast
    }

    let client: HTTPClient
    let logger: Logger
    let refresh: TimeInterval
    /// Whether a directory must come signed (§5.5: a signature per key, `tag`
    /// `http-message-signatures-directory`); a signature it carries is checked either way.
    let requireSigned: Bool
    private var entries: [String: Entry] = [:]
    private var inFlight: [String: Task<Void, any Error>] = [:]
    private(set) var fetches = 0

    /// How long a failing directory's last keys are still used past their time.
    static let staleAllowance: TimeInterval = 86_400
    /// At most one fetch a minute per directory, whatever requests ask.
    static let minimumInterval: TimeInterval = 60
    /// The whole fetch, body included: AsyncHTTPClient's own timeout ends once the head arrives,
    /// and a directory that trickles its body would hold every request naming it.
    static let fetchLimit: TimeAmount = .seconds(5)

    /// Every signature a directory's answer carries verifies with a key it publishes (§5.5: tag
    /// `http-message-signatures-directory`, covering `"@authority";req` and `content-digest`,
    /// `created` not in the future); none at all is taken only where not `required`.
    ///
    /// - Throws: `agent_directory_unavailable` naming what failed: the keys are not taken.
    static func checkSignatures(
        of response: HTTPMessage,
        answering request: HTTPMessage,
        with directory: AgentKeyDirectory,
        required: Bool,
        now: Date
    ) async throws {
        let labels: [String]
        do {
            labels = try SignatureFields(of: response).entries.map(\.label)
        } catch let error as SignetError where error.code == .signatureMissing {
            labels = []
        }
        guard !labels.isEmpty else {
            if required { throw SignetError(.agentDirectoryUnavailable, "the directory is not signed, and webBotAuth asks it to be") }
            return
        }
        let ring = KeyRing(directory.keys.map { KeyRecord(keyID: $0.key, algorithm: $0.value.algorithm, key: $0.value.key) })
        for label in labels {
            let policy = VerificationPolicy(
                selection: .label(label),
                componentRules: [.init(forRequests: false, all: [ComponentIdentifier("@authority", parameters: SFParameters([("req", .boolean(true))])), "content-digest"])],
                requireNonce: false,
                requiredTag: "http-message-signatures-directory",
                maximumAge: nil
            )
            do {
                _ = try await MessageVerifier(keys: ring, policy: policy, nonces: nil).verify(response, relatedRequest: request, now: now)
            } catch let error as SignetError {
                throw SignetError(.agentDirectoryUnavailable, "the directory's signature \(label) does not verify (\(error.code))")
            }
        }
    }

    /// `body`'s result, or `agent_directory_unavailable` once `limit` passed (`body` is cancelled).
    static func within<T: Sendable>(_ limit: TimeAmount, _ body: @escaping @Sendable () async throws -> T) async throws -> T {
        try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask { try await body() }
            group.addTask {
                try await Task.sleep(nanoseconds: UInt64(limit.nanoseconds))
                return nil
            }
            defer { group.cancelAll() }
            guard let first = try await group.next(), let value = first else {
                throw SignetError(.agentDirectoryUnavailable, "the directory did not answer in full within \(limit.nanoseconds / 1_000_000_000) s")
            }
            return value
        }
    }

    /// The process's client for directories: as `HTTPClient.shared` (never shut down, for the
    /// process's life), but following no redirect (§5.5: a redirect is a discovery failure), so a
    /// configured agent cannot send the gateway elsewhere.
    static let withoutRedirects = HTTPClient(
        eventLoopGroupProvider: .singleton,
        configuration: HTTPClient.Configuration(redirectConfiguration: .disallow)
    )

    init(client: HTTPClient = AgentDirectoryCache.withoutRedirects, logger: Logger, refresh: TimeInterval, requireSigned: Bool = false) {
        self.requireSigned = requireSigned
        self.client = client
        self.logger = logger
        self.refresh = refresh
    }

    func directory(at url: String, now: Date) async throws -> AgentKeyDirectory {
        let entry = entries[url] ?? Entry()
        if let running = inFlight[url] {
            // A fetch under way (the first one, say): wait for it rather than answer without keys.
            _ = try? await running.value
        } else if now >= entry.expires, now.timeIntervalSince(entry.lastFetch) >= Self.minimumInterval {
            await fetchOnce(url, now: now)
        }
        guard let current = entries[url], let directory = current.directory,
            now < current.expires.addingTimeInterval(Self.staleAllowance)
        else {
            throw SignetError(.agentDirectoryUnavailable, "the agent's key directory cannot be fetched")
        }
        return directory
    }

    private func fetchOnce(_ url: String, now: Date) async {
        if let running = inFlight[url] {
            _ = try? await running.value
            return
        }
        let task = Task { try await fetch(url, now: now) }
        inFlight[url] = task
        defer { inFlight[url] = nil }
        do {
            try await task.value
        } catch {
            logger.warning("cannot fetch an agent's key directory", metadata: ["url": "\(url)", "error": "\(error)"])
        }
    }

    private func fetch(_ url: String, now: Date) async throws {
        entries[url, default: Entry()].lastFetch = now
        fetches += 1
        let (directory, cacheControl) = try await Self.within(Self.fetchLimit) { [client, requireSigned] in
            var request = HTTPClientRequest(url: url)
            request.headers.add(name: "Accept", value: "application/http-message-signatures-directory+json, application/json")
            let response = try await client.execute(request, timeout: Self.fetchLimit)
            guard response.status == .ok else {
                throw SignetError(.agentDirectoryUnavailable, "the directory answered \(response.status.code)")
            }
            let body = Array(try await response.body.collect(upTo: AgentKeyDirectory.maximumBytes).readableBytesView)
            let directory = try AgentKeyDirectory(json: body)
            var fields = MessageFields()
            for header in response.headers { fields.append(name: header.name, value: header.value) }
            try await Self.checkSignatures(
                of: HTTPMessage.response(status: 200, fields: fields, body: body),
                answering: try HTTPMessage.request(method: "GET", uri: url),
                with: directory,
                required: requireSigned,
                now: now
            )
            return (directory, response.headers["Cache-Control"])
        }
        var lifetime = refresh
        if let maxAge = FirebaseJWKSCache.maxAge(cacheControl) {
            lifetime = max(Self.minimumInterval, min(86_400, maxAge))
        }
        entries[url, default: Entry()].directory = directory
        entries[url, default: Entry()].expires = now.addingTimeInterval(lifetime)
    }
}
