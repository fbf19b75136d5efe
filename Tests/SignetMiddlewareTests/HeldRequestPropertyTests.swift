// SPDX-License-Identifier: Apache-2.0
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import PropertyBased
import SignetCore
import SignetMiddleware
import Synchronization
import Testing

/// Invariant: **a nonce reaches the upstream at most once**, however long each copy of a signed
/// request is held between its head and the end of its body. Copies of one request open at random
/// moments, are each held a random time (simulated: the body's last part arrives only after the
/// clock has moved on), and complete in any order; whatever the window and skew, at most one is
/// accepted — and the first to complete inside its window is.
@Suite struct HeldRequestPropertyTests {
    /// A clock the test moves.
    final class Clock: Sendable {
        private let now = Mutex(Date(timeIntervalSince1970: 1_800_000_000))
        var date: Date { now.withLock { $0 } }
        func set(_ date: Date) { now.withLock { $0 = date } }
    }

    /// A body whose bytes arrive when `arrive` has run: the clock moves before the request is complete.
    struct HeldBody: AsyncSequence, Sendable {
        typealias Element = ByteBuffer
        let bytes: [UInt8]
        let arrive: @Sendable () -> Void

        struct AsyncIterator: AsyncIteratorProtocol {
            var bytes: [UInt8]?
            let arrive: @Sendable () -> Void
            mutating func next() async -> ByteBuffer? {
                guard let bytes else { return nil }
                self.bytes = nil
                arrive()
                return ByteBuffer(bytes: bytes)
            }
        }

        func makeAsyncIterator() -> AsyncIterator { AsyncIterator(bytes: bytes, arrive: arrive) }
    }

    @Test func aNonceIsAcceptedAtMostOnceHoweverLongItsCopiesAreHeld() async throws {
        let key = try SigningKey(secret: Array("a shared secret of thirty-two by".utf8))
        let ring = KeyRing([KeyRecord(keyID: "k", algorithm: "hmac-sha256", key: key.verificationKey)])
        let signer = MessageSigner(key: key, keyID: "k", algorithm: HMACSHA256())
        let body = Array(#"{"amount":100}"#.utf8)
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        let signed = try signer.sign(
            try HTTPMessage.request(method: "POST", uri: "https://api.example.com/pay", fields: [("Content-Type", "application/json")], body: body),
            created: start,
            nonce: "n"
        )
        var fields = HTTPFields()
        for field in signed.fields { fields.append(HTTPField(name: HTTPField.Name(field.name)!, value: field.value)) }
        let head = HTTPRequest(method: .post, scheme: nil, authority: "api.example.com", path: "/pay", headerFields: fields)

        // Each copy: when its head arrives and how long its body is held, in seconds after `created`.
        let copy = Gen.int(in: 0..<(741 * 901)).map { (opened: $0 % 741 - 40, held: $0 / 741) }
        await propertyCheck(count: 200, input: Gen.int(in: 1...600), Gen.int(in: 0...60), copy.array(of: 1...6)) { maxAge, skew, copies in
            let clock = Clock()
            let verifier = SignetRequestVerifier(
                verifier: MessageVerifier(
                    keys: ring,
                    policy: VerificationPolicy(maximumAge: Int64(maxAge), clockSkew: Int64(skew)),
                    nonces: MemoryNonceStore()
                ),
                publicScheme: "https"
            )
            // Copies complete in the order of their ends; each is judged as its body completes.
            let ends = copies.map { (opened: $0.opened, completes: $0.opened + $0.held) }.sorted { $0.completes < $1.completes }
            var accepted: [Int] = []
            for copy in ends {
                clock.set(start.addingTimeInterval(TimeInterval(copy.opened)))
                let completes = start.addingTimeInterval(TimeInterval(copy.completes))
                var request = Request(head: head, body: .init(asyncSequence: HeldBody(bytes: body) { clock.set(completes) }))
                if (try? await verifier.verifyWhenComplete(&request, requirement: .verified, clock: { clock.date })) != nil {
                    accepted.append(copy.completes)
                }
            }
            #expect(accepted.count <= 1, "maxAge \(maxAge), skew \(skew): accepted at \(accepted) of \(ends)")
            // Liveness: the first copy to complete inside the window is the one accepted.
            if let first = ends.first, first.completes >= -skew, first.completes <= maxAge + skew, first.opened >= -skew {
                #expect(accepted == [first.completes], "maxAge \(maxAge), skew \(skew): \(ends)")
            }
            // Never one that completed outside the window, whenever its head came.
            for time in accepted { #expect(time <= maxAge + skew && time >= -skew) }
        }
    }
}
