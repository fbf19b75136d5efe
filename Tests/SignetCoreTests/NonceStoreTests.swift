// SPDX-License-Identifier: Apache-2.0
import Foundation
import Testing

@testable import SignetCore

@Suite struct NonceStoreTests {
    let t0 = Date(timeIntervalSince1970: 1_700_000_000)

    @Test func aPairIsClaimedExactlyOnceUntilItExpires() async throws {
        let store = MemoryNonceStore()
        #expect(try await store.claim(keyID: "k", nonce: "n", until: t0.addingTimeInterval(10), now: t0))
        #expect(
            try await !store.claim(
                keyID: "k",
                nonce: "n",
                until: t0.addingTimeInterval(10),
                now: t0.addingTimeInterval(9)
            )
        )
        #expect(try await store.claim(keyID: "other", nonce: "n", until: t0.addingTimeInterval(10), now: t0))
        #expect(
            try await store.claim(
                keyID: "k",
                nonce: "n",
                until: t0.addingTimeInterval(30),
                now: t0.addingTimeInterval(11)
            )
        )
    }

    @Test func keyIdAndNonceCannotBeShiftedIntoEachOther() async throws {
        let store = MemoryNonceStore()
        #expect(try await store.claim(keyID: "ab", nonce: "c", until: t0.addingTimeInterval(10), now: t0))
        #expect(try await store.claim(keyID: "a", nonce: "bc", until: t0.addingTimeInterval(10), now: t0))
    }

    @Test func concurrentClaimsOfOnePairSucceedExactlyOnce() async throws {
        let store = MemoryNonceStore()
        let expiry = t0.addingTimeInterval(60)
        let now = t0
        let wins = try await withThrowingTaskGroup(of: Bool.self) { group in
            for _ in 0..<1000 {
                group.addTask { try await store.claim(keyID: "k", nonce: "race", until: expiry, now: now) }
            }
            return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
        }
        #expect(wins == 1)
    }

    @Test func aFullStoreRefusesRatherThanForgets() async throws {
        let store = MemoryNonceStore(capacity: 3)
        for nonce in ["a", "b", "c"] {
            #expect(try await store.claim(keyID: "k", nonce: nonce, until: t0.addingTimeInterval(10), now: t0))
        }
        let error = await #expect(throws: SignetError.self) {
            try await store.claim(keyID: "k", nonce: "d", until: self.t0.addingTimeInterval(10), now: self.t0)
        }
        #expect(error?.code == .nonceStoreFull)
        #expect(try await !store.claim(keyID: "k", nonce: "a", until: t0.addingTimeInterval(10), now: t0))
        // Lapsed, but not yet past what a claim is kept for after it: still full.
        let lapsed = t0.addingTimeInterval(11)
        await #expect(throws: SignetError.self) {
            try await store.claim(keyID: "k", nonce: "d", until: lapsed.addingTimeInterval(30), now: lapsed)
        }
        // Once the claims are past it they are swept and room returns.
        let later = t0.addingTimeInterval(11 + NonceRetention.afterExpiry)
        #expect(try await store.claim(keyID: "k", nonce: "d", until: later.addingTimeInterval(30), now: later))
        #expect(store.count == 1)
    }
}
