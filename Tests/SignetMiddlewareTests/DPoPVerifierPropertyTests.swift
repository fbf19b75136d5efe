// SPDX-License-Identifier: Apache-2.0
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import PropertyBased
import SignetCore
import SignetStore
import Testing

import SignetMiddleware

/// The invariant of DPoP-bound tokens: a proof is taken at most once across every instance on one
/// store, and only when it is by the token's key, for this request, within its window. Random
/// sequences of proofs — the token's key or another, this URL or another, fresh or stale, new or
/// sent before — through random instances, against a model of what should be taken.
@Suite struct DPoPVerifierPropertyTests {
    static let t0 = Date(timeIntervalSince1970: 1_800_000_000)
    static let token = "header.claims.signature"
    static let url = "https://api.example.com/a"

    enum Flaw: CaseIterable { case none, otherKey, otherURL, otherToken, stale }

    static func request(_ proof: String) -> Request {
        var fields = HTTPFields()
        fields[HTTPField.Name("DPoP")!] = proof
        let head = HTTPRequest(method: .get, scheme: "https", authority: "api.example.com", path: "/a", headerFields: fields)
        return Request(head: head, body: .init(buffer: ByteBuffer()))
    }

    /// `Host: gw/admin/delete?` would move a proof for `/admin/delete` onto any path, were the
    /// expected URI glued from the parts a client sends.
    @Test func aHostThatIsNotAnAuthorityCannotMoveAProof() async throws {
        let key = try SigningKey.generate(.p256)
        let verifier = DPoPVerifier(store: MemoryStore(), publicScheme: "https", publicAuthority: nil)
        let now = Date()
        let proof = try DPoPProof.make(key: key, method: "POST", url: "https://gw/admin/delete", accessToken: Self.token, now: now)
        for host in ["gw/admin/delete?", "gw/admin/delete#", "gw/admin/delete", "x@gw"] {
            var fields = HTTPFields()
            fields[HTTPField.Name("DPoP")!] = proof
            let head = HTTPRequest(method: .post, scheme: "https", authority: host, path: "/anything", headerFields: fields)
            await #expect(throws: ChallengedRefusal.self, "\(host)") {
                _ = try await verifier.check(
                    Request(head: head, body: .init(buffer: ByteBuffer())), receivedTarget: nil, accessToken: Self.token,
                    boundTo: try key.verificationKey.jwk.thumbprint, requireNonce: false, now: now)
            }
        }
    }

    @Test func aProofIsTakenAtMostOnceAndOnlyWhenSound() async throws {
        let key = try SigningKey.generate(.ed25519)
        let stranger = try SigningKey.generate(.ed25519)
        let jkt = try key.verificationKey.jwk.thumbprint
        await propertyCheck(
            count: 40,
            input: Gen.int(in: 1...3),
            // Each event: which jti (6), which flaw (5), which instance (3).
            Gen.int(in: 0...89).array(of: 1...30)
        ) { instanceCount, events in
            let store = MemoryStore()
            let instances = (0..<instanceCount).map { _ in
                DPoPVerifier(store: store, publicScheme: "https", publicAuthority: nil, proofLifetime: 60, clockSkew: 5)
            }
            var taken: Set<String> = []
            for (index, event) in events.enumerated() {
                let (jtiNumber, flawIndex, instance) = (event % 6, event / 6 % 5, event / 30)
                let now = Self.t0.addingTimeInterval(Double(index))
                let flaw = Flaw.allCases[flawIndex]
                let jti = "jti-\(jtiNumber)-\(flawIndex)"
                let proof = try! DPoPProof.make(
                    key: flaw == .otherKey ? stranger : key,
                    method: "GET",
                    url: flaw == .otherURL ? "https://api.example.com/b" : Self.url,
                    accessToken: flaw == .otherToken ? "another" : Self.token,
                    now: flaw == .stale ? now.addingTimeInterval(-120) : now,
                    jti: jti
                )
                var accepted = true
                do {
                    _ = try await instances[instance % instanceCount].check(
                        Self.request(proof),
                        receivedTarget: nil,
                        accessToken: Self.token,
                        boundTo: jkt,
                        requireNonce: false,
                        now: now
                    )
                } catch {
                    accepted = false
                }
                let expected = flaw == .none && !taken.contains(jti)
                #expect(accepted == expected, "event \(index): \(flaw), \(jti), taken \(taken.sorted())")
                if accepted { taken.insert(jti) }
            }
        }
    }
}
