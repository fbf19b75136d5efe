// SPDX-License-Identifier: Apache-2.0
import Foundation
import SignetCore
import Testing

/// Pin sets over certificates openssl made (`Tests/Vectors/pins`): a P-256 leaf, an RSA
/// intermediate and an Ed25519 root, with the pins openssl computed for them. Pin evaluation runs
/// after chain validation, so the three need not chain here.
@Suite struct PinSetTests {
    static let names = ["c0.der", "c1.der", "c2.der"]
    static let chain: [[UInt8]] = names.compactMap { try? Array(Vectors.data("pins/" + $0)) }

    /// The pin of certificate `index`; a missing vector fails the test, never traps.
    static func pin(_ index: Int) throws -> SPKIPin {
        guard chain.indices.contains(index) else { throw VectorError("loaded \(chain.count) certificates, not \(index + 1)") }
        return try SPKIPin(certificateDER: chain[index])
    }
    static let backup = try! SPKIPin(parsing: "sha256/" + Base64.encode([UInt8](repeating: 7, count: 32)))
    let now = Date(timeIntervalSince1970: 1_800_000_000)

    /// Each certificate's pin is the one openssl computed from its public key (any key type).
    @Test func thePinsAreOpensslsOwn() throws {
        #expect(Self.chain.count == 3)
        let lines = try Vectors.text("pins/pins.txt").split(separator: "\n")
        #expect(lines.count == 3)
        for line in lines {
            let parts = line.split(separator: " ")
            let index = try #require(Self.names.firstIndex(of: String(parts[0])))
            #expect(try Self.pin(index) == SPKIPin(parsing: String(parts[1])), "\(parts[0])")
        }
    }

    @Test func hostPatterns() throws {
        let exact = try HostPattern("api.example.com")
        let one = try HostPattern("*.example.com")
        let any = try HostPattern("**.example.com")
        #expect(exact.matches("API.example.com") && !exact.matches("x.api.example.com"))
        #expect(one.matches("api.example.com") && !one.matches("a.b.example.com") && !one.matches("example.com"))
        #expect(any.matches("a.b.example.com") && any.matches("api.example.com") && !any.matches("example.com"))
        #expect(!any.matches("badexample.com"))
        for bad in ["", "*.", "a.*.com", ".example.com"] { #expect(throws: SignetError.self) { try HostPattern(bad) } }
    }

    @Test func pinSpellingsParseAndPrint() throws {
        let pin = try Self.pin(0)
        #expect(try SPKIPin(parsing: pin.description) == pin)
        #expect(try SPKIPin(parsing: pin.hpkpDescription) == pin)
        #expect(try SPKIPin(parsing: pin.base64) == pin)
        for bad in ["sha256/short", "pin-sha256=unquoted", "sha1/AAAA"] {
            #expect(throws: SignetError.self) { try SPKIPin(parsing: bad) }
        }
    }

    @Test func aMatchingPinAtAnAllowedPositionAllows() throws {
        try #require(Self.chain.count == 3)
        let set = try PinSet(
            pattern: HostPattern("api.example.com"),
            pins: [try Self.pin(1), Self.backup],
            positions: [.intermediate]
        )
        let result = set.evaluate(chain: Self.chain, host: "api.example.com", now: now)
        #expect(result.decision == .allow)
        #expect(result.report == nil && !result.backupMissing)
        // The same pin at a position the set does not allow does not count.
        let leafOnly = try PinSet(
            pattern: HostPattern("api.example.com"),
            pins: [try Self.pin(1), Self.backup],
            positions: [.leaf]
        )
        #expect(leafOnly.evaluate(chain: Self.chain, host: "api.example.com", now: now).decision == .deny)
    }

    @Test func aMismatchIsRefusedWithEveryServedPinAndAReport() throws {
        try #require(Self.chain.count == 3)
        let other = try SPKIPin(parsing: "sha256/" + Base64.encode([UInt8](repeating: 1, count: 32)))
        let set = try PinSet(pattern: HostPattern("*.example.com"), pins: [other, Self.backup])
        let result = set.evaluate(chain: Self.chain, host: "api.example.com", port: 8443, now: now)
        #expect(result.decision == .deny)
        #expect(result.error?.code == .pinMismatch)
        for index in 0..<3 { #expect(result.message.contains(try Self.pin(index).description)) }
        let report = try #require(result.report)
        let json = try #require(try JSONSerialization.jsonObject(with: Data(report.json)) as? [String: Any])
        #expect(json["hostname"] as? String == "api.example.com")
        #expect(json["port"] as? Int == 8443)
        #expect(json["noted-hostname"] as? String == "*.example.com")
        #expect(json["include-subdomains"] as? Bool == true)
        #expect((json["served-certificate-chain"] as? [String])?.count == 3)
        #expect((json["known-pins"] as? [String])?.contains(other.hpkpDescription) == true)
        // Report-only lets it through, with the same report.
        var reportOnly = set
        reportOnly.mode = .reportOnly
        let reported = reportOnly.evaluate(chain: Self.chain, host: "api.example.com", now: now)
        #expect(reported.decision == .allowReported && reported.report != nil)
    }

    @Test func backupsAndExpiryAreExplicit() throws {
        try #require(Self.chain.count == 3)
        #expect(throws: SignetError.self) { try PinSet(pattern: HostPattern("a.example"), pins: [try Self.pin(0)]) }
        let waived = try PinSet(pattern: HostPattern("a.example"), pins: [try Self.pin(0)], backupWaived: true)
        #expect(waived.evaluate(chain: Self.chain, host: "a.example", now: now).decision == .allow)
        let noBackup = try PinSet(pattern: HostPattern("a.example"), pins: [try Self.pin(0), try Self.pin(2)])
        #expect(noBackup.evaluate(chain: Self.chain, host: "a.example", now: now).backupMissing)

        let stale = [try SPKIPin(parsing: "sha256/" + Base64.encode([UInt8](repeating: 2, count: 32))), Self.backup]
        // Past the soft date: still enforcing, asking for a refresh.
        let soft = try PinSet(
            pattern: HostPattern("a.example"),
            pins: Set(stale),
            softExpiry: now.addingTimeInterval(-1)
        )
        let softResult = soft.evaluate(chain: Self.chain, host: "a.example", now: now)
        #expect(softResult.decision == .deny && softResult.needsRefresh)
        // Past the hard date, what the configuration says.
        let keep = try PinSet(
            pattern: HostPattern("a.example"),
            pins: Set(stale),
            hardExpiry: (now.addingTimeInterval(-1), .keepEnforcing)
        )
        #expect(keep.evaluate(chain: Self.chain, host: "a.example", now: now).decision == .deny)
        let relax = try PinSet(
            pattern: HostPattern("a.example"),
            pins: Set(stale),
            hardExpiry: (now.addingTimeInterval(-1), .reportOnly)
        )
        #expect(relax.evaluate(chain: Self.chain, host: "a.example", now: now).decision == .allowReported)
        #expect(
            relax.evaluate(chain: Self.chain, host: "a.example", now: now.addingTimeInterval(-10)).decision == .deny
        )
    }
}
