// SPDX-License-Identifier: Apache-2.0
import Foundation
import SignetCore
import Testing

@testable import SignetClient

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What `SignetURLSessionDelegate` follows a redirect with (issue 37 §2): a signature covers the
/// target, so a signed request is signed again for its new one, or not followed.
@Suite struct SignedRedirectTests {
    static let signer = MessageSigner(key: try! SigningKey.generate(.ed25519), keyID: "device", algorithm: Ed25519Algorithm())
    static let origins = [try! Origin("https://api.example.com")]

    static func post(_ url: String) -> URLRequest {
        var request = URLRequest(url: URL(string: url)!)
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = Data(#"{"score":1}"#.utf8)
        return request
    }

    /// The request URLSession would follow: the new URL, the old fields (signature included).
    static func redirected(_ signed: URLRequest, to url: String) -> URLRequest {
        var next = signed
        next.url = URL(string: url)
        return next
    }

    @Test func aSignedRequestRedirectedWithinItsOriginIsSignedAgainForItsNewTarget() async throws {
        let signed = try await Self.signer.sign(Self.post("https://api.example.com/a"))
        let next = try #require(
            await SignedRedirect.next(Self.redirected(signed, to: "https://api.example.com/b"), origins: Self.origins, signer: Self.signer, now: Date()))
        #expect(next.value(forHTTPHeaderField: "Signature") != signed.value(forHTTPHeaderField: "Signature"))
        let verifier = MessageVerifier(
            keys: KeyRing([KeyRecord(keyID: "device", algorithm: "ed25519", key: Self.signer.key.verificationKey)]),
            policy: .standard,
            nonces: MemoryNonceStore()
        )
        let verified = try await verifier.verify(try HTTPMessage(next), now: Date())
        #expect(verified.keyID == "device")
        // The old signature, on the new target, would not have verified.
        await #expect(throws: SignetError.self) {
            try await verifier.verify(try HTTPMessage(Self.redirected(signed, to: "https://api.example.com/b")), now: Date())
        }
    }

    @Test func aSignedRequestIsNotFollowedWithoutASignerNorToAnotherOrigin() async throws {
        let signed = try await Self.signer.sign(Self.post("https://api.example.com/a"))
        #expect(await SignedRedirect.next(Self.redirected(signed, to: "https://api.example.com/b"), origins: Self.origins, signer: nil, now: Date()) == nil)
        #expect(await SignedRedirect.next(Self.redirected(signed, to: "https://evil.example/b"), origins: Self.origins, signer: Self.signer, now: Date()) == nil)
        // An unsigned request within the origins goes on as it is.
        let plain = Self.redirected(Self.post("https://api.example.com/a"), to: "https://api.example.com/c")
        #expect(await SignedRedirect.next(plain, origins: Self.origins, signer: nil, now: Date()) == plain)
    }
}
