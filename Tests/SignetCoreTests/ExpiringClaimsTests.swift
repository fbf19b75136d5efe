// SPDX-License-Identifier: Apache-2.0
import PropertyBased
import SignetCore
import Testing

/// `ExpiringClaims`, the claims behind the memory store and SQLite's index, against a model that
/// keeps every claim forever: whatever the order of claims, sweeps and times — a time may go back
/// as far as the kept margin, as a claim's `now` can — a key is claimed at a time exactly when its
/// latest expiry is not before it; sweeping only saves memory.
struct ExpiringClaimsTests {
    /// The margin the tests keep lapsed claims for, as stores keep ``NonceRetention/afterExpiry``.
    static let margin = 10

    enum Step: Sendable, CustomStringConvertible {
        case insert(key: Int, lifetime: Int, behind: Int), advance(Int), sweep(limit: Int), sweepAll

        var description: String {
            switch self {
            case .insert(let key, let lifetime, let behind): "insert(\(key), +\(lifetime), now-\(behind))"
            case .advance(let by): "advance(\(by))"
            case .sweep(let limit): "sweep(\(limit))"
            case .sweepAll: "sweepAll"
            }
        }
    }

    static func step(_ kind: Int, _ a: Int, _ b: Int, _ c: Int) -> Step {
        switch kind {
        case 0, 1, 2: .insert(key: a, lifetime: b * (c == 0 ? 20 : 1), behind: c % (margin + 1))
        case 3: .advance(b)
        case 4: .sweep(limit: a)
        default: .sweepAll
        }
    }

    @Test func aKeyIsClaimedExactlyWhileItsLatestExpiryHasNotPassed() async {
        let steps = zip(Gen.int(in: 0...5), Gen.int(in: 0...7), Gen.int(in: 0...20), Gen.int(in: 0...12)).array(of: 0...80)
        await propertyCheck(count: 500, input: steps) { drawn in
            let steps = drawn.map { Self.step($0.0, $0.1, $0.2, $0.3) }
            var claims = ExpiringClaims<Int, Int>()
            var latest: [Int: Int] = [:]
            var now = 0
            for step in steps {
                switch step {
                case .insert(let key, let lifetime, let behind):
                    // A claim whose own time is behind the latest seen, by up to the margin.
                    let at = now - behind
                    claims.insert(key, until: at + lifetime, forgettingBefore: at - Self.margin, sweeping: 2)
                    latest[key] = max(latest[key] ?? .min, at + lifetime)
                case .advance(let by):
                    now += by
                case .sweep(let limit):
                    claims.sweep(before: now - Self.margin, limit: limit)
                case .sweepAll:
                    claims.sweepAll(before: now - Self.margin)
                    #expect(claims.count == latest.values.filter { $0 >= now - Self.margin }.count, "\(steps)")
                }
                // Any time a claim can still carry: back to the margin behind the latest.
                for key in 0...7 {
                    for at in [now - Self.margin, now - 1, now] {
                        #expect(claims.isClaimed(key, at: at) == ((latest[key] ?? .min) >= at), "key \(key) at \(at) after \(steps)")
                    }
                }
            }
        }
    }

    /// Memory follows the live claims: with a claim a tick lasting ten, what lapsed goes as new
    /// claims come, without a full sweep.
    @Test func lapsedClaimsGoAsNewOnesArrive() {
        var claims = ExpiringClaims<Int, Int>()
        var most = 0
        for tick in 0..<100_000 {
            claims.insert(tick, until: tick + 10, forgettingBefore: tick)
            most = max(most, claims.count)
        }
        // The eleven live at any tick: its own and the ten before.
        #expect(most == 11)
    }

    /// A claim that lives long (a token's, until its `exp`) does not hold back the short-lived
    /// claims that came after it: they go as they lapse, earliest expiry first.
    @Test func aLongLivedClaimHoldsBackNoShortLivedOne() {
        var claims = ExpiringClaims<Int, Int>()
        claims.insert(-1, until: 1_000_000, forgettingBefore: 0)
        var most = 0
        for tick in 0..<100_000 {
            claims.insert(tick, until: tick + 10, forgettingBefore: tick)
            most = max(most, claims.count)
        }
        #expect(most == 12)
        #expect(claims.isClaimed(-1, at: 100_000))
    }
}
