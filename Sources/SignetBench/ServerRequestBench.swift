// SPDX-License-Identifier: Apache-2.0
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import NIOPosix
import SignetCore
import SignetMiddleware
import SignetServer

/// What the gateway's verify costs from the request the server holds — Hummingbird's head and body
/// buffer, as `SignetVerificationMiddleware` gets them — next to SignetCore's verify of a message it
/// already has: the difference is the work done outside the primitive's path (issue 26's "one
/// representation") — and the same in a task on an event loop, as the data plane runs it
/// (``LoopTaskExecutor``): the difference is what each `await` costs there.
enum ServerRequestBench {
    struct Rates {
        var core: Double
        var serverRequest: Double
        var onLoop: Double
    }

    static func measure(_ algorithm: any SignatureAlgorithm, seconds: Double) async throws -> Rates {
        let key = try SigningKey.generate(algorithm.keyType)
        let ring = KeyRing([KeyRecord(keyID: "bench", algorithm: algorithm.name, key: key.verificationKey)])
        let signer = MessageSigner(key: key, keyID: "bench", algorithm: algorithm)
        let body = Array(VerifyBenchCommand.jsonBody.utf8)
        let now = Date(timeIntervalSince1970: 1_700_000_000)
        // The fields a mobile client's POST carries, as the gateway receives them.
        let unsigned = try HTTPMessage.request(
            method: "POST",
            uri: "https://api.example.com/v1/scores?game=42",
            fields: [
                ("Host", "api.example.com"), ("User-Agent", "Scores/1.4 CFNetwork/1490.0.4 Darwin/23.2.0"),
                ("Accept", "application/json"), ("Accept-Encoding", "gzip, deflate, br"),
                ("Content-Type", "application/json"), ("Content-Length", String(body.count)),
            ],
            body: body
        )
        var messages: [HTTPMessage] = []
        var requests: [(HTTPRequest, ByteBuffer)] = []
        for index in 0..<2048 {
            let message = try signer.sign(
                unsigned,
                components: [.method, .targetURI, .contentDigest, "content-type"],
                created: now,
                nonce: "nonce-\(index)"
            )
            messages.append(message)
            var fields = HTTPFields()
            for field in message.fields where field.name != "Host" {
                fields.append(HTTPField(name: HTTPField.Name(field.name)!, value: field.value))
            }
            let head = HTTPRequest(method: .post, scheme: nil, authority: "api.example.com", path: "/v1/scores?game=42", headerFields: fields)
            requests.append((head, ByteBuffer(bytes: body)))
        }
        let core = try await rate(seconds: seconds, count: messages.count) { verifier, index in
            _ = try await verifier.verify(messages[index], now: now)
        }
        let held = requests
        let serverVerify: @Sendable (MessageVerifier, Int) async throws -> Void = { verifier, index in
            let requestVerifier = SignetRequestVerifier(verifier: verifier, publicScheme: "https")
            var request = Request(head: held[index].0, body: .init(buffer: held[index].1))
            _ = try await requestVerifier.verify(&request, now: now)
        }
        let server = try await rate(seconds: seconds, count: requests.count, serverVerify)
        let loop = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let onLoop = try await LoopTaskExecutor(loop.next()).run {
            try await rate(seconds: seconds, count: held.count, serverVerify)
        }.get()
        try await loop.shutdownGracefully()
        return Rates(core: core, serverRequest: server, onLoop: onLoop)

        @Sendable func rate(
            seconds: Double,
            count: Int,
            _ verify: (MessageVerifier, Int) async throws -> Void
        ) async throws -> Double {
            var verifier = MessageVerifier(keys: ring, nonces: MemoryNonceStore())
            let clock = ContinuousClock()
            let start = clock.now
            var done = 0
            while clock.now - start < .milliseconds(Int(seconds * 1000)) {
                // A fresh store each pass: every nonce is new to it.
                verifier.nonces = MemoryNonceStore()
                for index in 0..<count { try await verify(verifier, index) }
                done += count
            }
            let elapsed = clock.now - start
            return Double(done) / (Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
        }
    }
}
