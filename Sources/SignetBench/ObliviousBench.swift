// SPDX-License-Identifier: Apache-2.0
import Crypto
import Foundation
import SignetCore

/// What Oblivious HTTP adds to a verified request on the gateway's side: open the encapsulation
/// (X25519 HPKE, AES-128-GCM), decode the Binary HTTP request, verify it as any request, encode and
/// encapsulate the answer — next to verifying the same signed request sent in the clear.
enum ObliviousBench {
    struct Rates {
        var plain: Double
        var oblivious: Double
    }

    static func measure(seconds: Double) async throws -> Rates {
        let key = try SigningKey.generate(.symmetric)
        let ring = KeyRing([KeyRecord(keyID: "bench", algorithm: "hmac-sha256", key: key.verificationKey)])
        let signer = MessageSigner(key: key, keyID: "bench", algorithm: HMACSHA256())
        let gatewayKey = OHTTPGatewayKey(keyID: 1, privateKey: .x25519(.init()))
        let body = Array(VerifyBenchCommand.jsonBody.utf8)
        let now = Date(timeIntervalSince1970: 1_700_000_000)
        let request = try HTTPMessage.request(
            method: "POST",
            uri: "https://api.example.com/v1/scores?game=42",
            fields: [("Content-Type", "application/json")],
            body: body
        )
        var signed: [HTTPMessage] = []
        var encapsulated: [[UInt8]] = []
        for index in 0..<1024 {
            let message = try signer.sign(
                request,
                components: [.method, .targetURI, .contentDigest, "content-type"],
                created: now,
                nonce: "nonce-\(index)"
            )
            signed.append(message)
            let target = message.target!
            let binary = BinaryHTTPMessage(
                head: .request(method: "POST", scheme: target.scheme, authority: target.authority, path: "/v1/scores?game=42"),
                fields: message.fields.lines.map { BinaryHTTPMessage.Field($0.name, $0.value) },
                content: message.body
            ).encoded()
            encapsulated.append(try ObliviousClientRequest(encapsulating: binary, to: gatewayKey.configuration).bytes)
        }
        let answer = BinaryHTTPMessage(
            head: .response(status: 201),
            fields: [.init("content-type", "application/json")],
            content: Array(#"{"rank":1}"#.utf8)
        ).encoded()

        var verifier = MessageVerifier(keys: ring, nonces: MemoryNonceStore())
        let plain = try await rate(seconds: seconds, count: signed.count) { index in
            if index == 0 { verifier.nonces = MemoryNonceStore() }
            _ = try await verifier.verify(signed[index], now: now)
        }
        let oblivious = try await rate(seconds: seconds, count: encapsulated.count) { index in
            if index == 0 { verifier.nonces = MemoryNonceStore() }
            let opened = try ObliviousRequest(decapsulating: encapsulated[index], keys: [gatewayKey])
            let inner = try BinaryHTTPMessage(decoding: opened.message)
            guard case .request(let method, let scheme, let authority, let path) = inner.head else { return }
            var fields = MessageFields()
            for field in inner.fields { fields.append(name: field.name, value: field.value) }
            let message = HTTPMessage(
                head: .request(method: method, target: try RequestTarget(uri: "\(scheme)://\(authority)\(path)")),
                fields: fields,
                body: inner.content
            )
            _ = try await verifier.verify(message, now: now)
            _ = try opened.encapsulateResponse(answer)
        }
        return Rates(plain: plain, oblivious: oblivious)
    }

    /// Operations per second of `work`, called with 0..<count in turn for about `seconds`.
    private static func rate(seconds: Double, count: Int, _ work: (Int) async throws -> Void) async throws -> Double {
        let clock = ContinuousClock()
        let start = clock.now
        var done = 0
        while clock.now - start < .milliseconds(Int(seconds * 1000)) {
            for index in 0..<count { try await work(index) }
            done += count
        }
        let elapsed = clock.now - start
        return Double(done) / (Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
    }
}
