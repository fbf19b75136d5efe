// SPDX-License-Identifier: Apache-2.0
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import Synchronization

/// The seed articles' high-score service, as an upstream that knows nothing of Signet: it trusts the
/// `Signet-Device` and `Signet-Key-Id` fields because only the gateway can reach it.
///
/// - `POST /scores` `{"name": "…", "score": 100}` → 201 with the stored entry
/// - `GET /scores/top` → the ten best
/// - `GET /legacy/score?msg=…&hmac=…` → the seed's own query form (the gateway checks the HMAC)
/// - `GET /scores/received` → how many scores arrived (for exactly-once tests)
/// - `GET /echo/headers` → the header fields it received, as JSON
/// - `GET|POST /echo/…` → `{"method", "path", "headers", "bodyBytes"}`: what reached it
public final class ScoresBackend: Sendable {
    public struct Entry: Codable, Sendable, Equatable {
        public var name: String
        public var score: Int
        public var player: String?
    }

    private let entries = Mutex<[Entry]>([])
    private let received = Atomic<Int>(0)

    public init() {}

    public var receivedCount: Int { received.load(ordering: .relaxed) }

    /// Every stored entry, in arrival order.
    public var allEntries: [Entry] { entries.withLock { $0 } }

    public func router() -> Router<BasicRequestContext> {
        let router = Router()
        let backend = self
        router.post("/scores") { request, context in
            let entry = try await request.decode(as: Entry.self, context: context)
            return try backend.store(
                entry,
                player: request.headers[HTTPField.Name("Signet-Device")!]
                    ?? request.headers[HTTPField.Name("Signet-Key-Id")!]
            )
        }
        router.get("/legacy/score") { request, _ in
            guard let message = request.uri.queryParameters.get("msg"),
                let entry = try? JSONDecoder().decode(Entry.self, from: Data(message.utf8))
            else { return Response(status: .badRequest) }
            return try backend.store(entry, player: request.headers[HTTPField.Name("Signet-Key-Id")!])
        }
        router.get("/scores/top") { _, _ in
            let top = backend.entries.withLock { Array($0.sorted { $0.score > $1.score }.prefix(10)) }
            return try Self.json(top, status: .ok)
        }
        router.get("/scores/received") { _, _ in "\(backend.receivedCount)" }
        // A large answer, written in 64 KiB pieces as the reader takes them (at most 64 MiB).
        router.get("/large/:bytes") { _, context in
            let total = min(context.parameters.get("bytes", as: Int.self) ?? 0, 64 << 20)
            return Response(
                status: .ok,
                headers: [.contentType: "application/octet-stream"],
                body: ResponseBody(contentLength: total) { writer in
                    let piece = ByteBuffer(repeating: 0x61, count: 64 << 10)
                    var left = total
                    while left > 0 {
                        try await writer.write(left >= piece.readableBytes ? piece : piece.getSlice(at: 0, length: left)!)
                        left -= piece.readableBytes
                    }
                    try await writer.finish(nil)
                }
            )
        }
        router.get("/echo/headers") { request, _ in
            var fields: [String: String] = [:]
            for field in request.headers { fields[field.name.canonicalName] = field.value }
            return try Self.json(fields, status: .ok)
        }
        for method in [HTTPRequest.Method.get, .post] {
            router.on("/echo/**", method: method) { request, _ in
                var fields: [String: String] = [:]
                for field in request.headers { fields[field.name.canonicalName] = field.value }
                let body = request.body
                let bytes = try await body.collect(upTo: 16 << 20).readableBytes
                let echo = Echo(method: request.method.rawValue, path: request.uri.description, headers: fields, bodyBytes: bytes)
                return try Self.json(echo, status: .ok)
            }
        }
        return router
    }

    /// What `/echo/…` answers.
    public struct Echo: Codable, Sendable {
        public var method: String
        public var path: String
        public var headers: [String: String]
        public var bodyBytes: Int
    }

    private func store(_ entry: Entry, player: String?) throws -> Response {
        var stored = entry
        stored.player = player
        entries.withLock { $0.append(stored) }
        received.add(1, ordering: .relaxed)
        return try Self.json(stored, status: .created)
    }

    static func json(_ value: some Encodable, status: HTTPResponse.Status) throws -> Response {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        var headers = HTTPFields()
        headers[.contentType] = "application/json"
        return Response(
            status: status,
            headers: headers,
            body: .init(byteBuffer: .init(bytes: try encoder.encode(value)))
        )
    }

    /// The backend as an application on `host:port` (0 picks a free port, reported to `onServerRunning`).
    public func application(
        host: String = "127.0.0.1",
        port: Int = 0,
        logger: Logger = Logger(label: "scores"),
        onServerRunning: @escaping @Sendable (Int) async -> Void = { _ in }
    ) -> some ApplicationProtocol {
        Application(
            router: router(),
            configuration: .init(address: .hostname(host, port: port), serverName: "scores"),
            onServerRunning: { channel in await onServerRunning(channel.localAddress?.port ?? 0) },
            logger: logger
        )
    }
}
