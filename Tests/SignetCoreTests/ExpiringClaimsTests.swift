// SPDX-License-Identifier: Apache-2.0
import PropertyBased
import SignetCore
import Testing

/// `ExpiringClaims`, the claims behind the memory store and SQLite's index, against a model that
/// keeps every claim forever: whatever the order of claims, time passing and sweeps, a key is
/// claimed at a time exactly when its latest expiry is not before it; sweeping only saves memory.
struct ExpiringClaimsTests {
    enum Step: Sendable, CustomStringConvertible {
        case insert(key: Int, lifetime: Int), advance(Int), sweep(limit: Int), sweepAll

        var description: String {
            switch self {
            case .insert(let key, let lifetime): "insert(\(key), +\(lifetime))"
            case .advance(let by): "advance(\(by))"
            case .sweep(let limit): "sweep(\(limit))"
            case .sweepAll: "sweepAll"
            }
        }
    }

    static func step(_ kind: Int, _ a: Int, _ b: Int) -> Step {
        switch kind {
        case 0, 1, 2: .insert(key: a, lifetime: b)
        case 3: .advance(b)
        case 4: .sweep(limit: a)
        default: .sweepAll
        }
    }

    @Test func aKeyIsClaimedExactlyWhileItsLatestExpiryHasNotPassed() async {
        let steps = zip(Gen.int(in: 0...5), Gen.int(in: 0...7), Gen.int(in: 0...20)).array(of: 0...60)
        await propertyCheck(count: 400, input: steps) { drawn in
            let steps = drawn.map { Self.step($0.0, $0.1, $0.2) }
            var claims = ExpiringClaims<Int, Int>()
            var latest: [Int: Int] = [:]
            var now = 0
            for step in steps {
                switch step {
                case .insert(let key, let lifetime):
                    claims.insert(key, until: now + lifetime, now: now, sweeping: 2)
                    latest[key] = max(latest[key] ?? .min, now + lifetime)
                case .advance(let by):
                    now += by
                case .sweep(let limit):
                    claims.sweep(now: now, limit: limit)
                case .sweepAll:
                    claims.sweepAll(now: now)
                    #expect(claims.count == latest.values.filter { $0 >= now }.count, "\(steps)")
                }
                for key in 0...7 {
                    #expect(claims.isClaimed(key, at: now) == ((latest[key] ?? .min) >= now), "key \(key) at \(now) after \(steps)")
                }
                #expect(claims.count >= latest.values.filter { $0 >= now }.count, "\(steps)")
            }
        }
    }

    /// Memory follows the live claims: with a claim a tick lasting ten, what lapsed goes as new
    /// claims come, without a full sweep.
    @Test func lapsedClaimsGoAsNewOnesArrive() {
        var claims = ExpiringClaims<Int, Int>()
        for tick in 0..<100_000 {
            claims.insert(tick, until: tick + 10, now: tick)
            #expect(claims.count <= 12)
        }
    }
}
