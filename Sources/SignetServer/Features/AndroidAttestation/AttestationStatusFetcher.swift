// SPDX-License-Identifier: Apache-2.0
import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import ServiceLifecycle
import SignetAndroid
import SignetCore

/// Fetches Google's attestation revocation list in the background, at start and every `interval`,
/// into an ``AttestationStatusCache``; a failed fetch keeps the last good copy and is logged.
struct AttestationStatusFetcher: Service {
    let url: String
    let client: HTTPClient
    let cache: AttestationStatusCache
    let interval: Duration
    let logger: Logger

    /// Google's list is a few hundred kilobytes; this bounds what a wrong URL can make us read (the
    /// list's own parser takes no more).
    static let maximumBytes = AttestationStatusList.maximumBytes

    func run() async throws {
        while !Task.isCancelled && !Task.isShuttingDownGracefully {
            // After a failure, sooner than the refresh: until a list is fetched (or while the last
            // one ages), Android registrations wait on it.
            var wait = interval
            do {
                cache.store(try await fetch())
            } catch {
                cache.failed("\(error)")
                logger.warning("cannot fetch the Android attestation revocation list", metadata: ["url": "\(url)", "error": "\(error)"])
                wait = min(interval, Self.retryAfterFailure)
            }
            do {
                try await cancelWhenGracefulShutdown { [wait] in try await Task.sleep(for: wait) }
            } catch {
                return
            }
        }
    }

    static let retryAfterFailure: Duration = .seconds(30)

    func fetch() async throws -> AttestationStatusList {
        var request = HTTPClientRequest(url: url)
        request.headers.add(name: "Accept", value: "application/json")
        // Google asks clients not to be served a cached copy.
        request.headers.add(name: "Cache-Control", value: "no-cache")
        let response = try await client.execute(request, timeout: .seconds(30))
        let body = try await response.body.collect(upTo: Self.maximumBytes)
        guard response.status == .ok else {
            throw SignetError(.attestationStatusUnavailable, "the revocation list answered \(response.status.code)")
        }
        return try AttestationStatusList(json: Array(body.readableBytesView))
    }
}
