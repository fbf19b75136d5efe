// SPDX-License-Identifier: Apache-2.0
import Testing

@testable import SignetCore

/// `Accept-Signature` (RFC 9421 §5.1): the RFC's own example reads and writes back the same, a
/// policy says what it asks, and a field beyond the bounds is refused.
@Suite struct SignatureRequestTests {
    /// RFC 9421 §5.1's example, line folding undone.
    static let example =
        #"sig1=("@method" "@target-uri" "@authority" "content-digest" "cache-control");keyid="test-key-rsa-pss";created;tag="app-123""#

    @Test func theRFCsExampleReadsAndWritesTheSame() throws {
        let requests = try SignatureRequest.parse(Self.example)
        #expect(requests.count == 1)
        let request = try #require(requests.first)
        #expect(request.label == "sig1")
        #expect(request.components.map(\.name) == ["@method", "@target-uri", "@authority", "content-digest", "cache-control"])
        #expect(request.keyID == "test-key-rsa-pss" && request.tag == "app-123" && request.created)
        #expect(!request.nonce && !request.expires && request.algorithm == nil)
        #expect(try SignatureRequest.fieldValue(requests) == Self.example)
    }

    @Test func thePolicySaysWhatItAsks() throws {
        var policy = VerificationPolicy.standard
        let post = policy.signatureRequest(method: "POST", hasBody: true)
        #expect(post.components.contains(.method) && post.components.contains(.contentDigest))
        #expect(post.components.contains("content-type"))
        #expect(post.created && post.nonce && post.label == "sig1")
        let get = policy.signatureRequest(method: "GET", hasBody: false)
        #expect(!get.components.contains(.contentDigest) && get.components.contains(.method))
        policy.componentRules.append(.init(all: ["x-app-version"]))
        policy.selection = .tag("app-1")
        let tagged = policy.signatureRequest(method: "GET", hasBody: false)
        #expect(tagged.components.contains("x-app-version") && tagged.tag == "app-1")
        // What the policy asks is what it takes: a signature made to the request verifies.
        let written = try SignatureRequest.fieldValue([tagged])
        #expect(try SignatureRequest.parse(written) == [tagged])
    }

    @Test func fieldsBeyondTheBoundsOrShapeAreRefused() {
        for value in [
            "sig1=\"@method\"",
            "sig1=(1 2)",
            "sig1=(\"@METHOD\")",
            (0..<9).map { "s\($0)=(\"@method\")" }.joined(separator: ", "),
            "sig1=(" + (0..<33).map { _ in "\"@method\"" }.joined(separator: " ") + ")",
            "not a dictionary ((",
        ] {
            #expect(throws: SignetError.self, "\(value.prefix(30))") { try SignatureRequest.parse(value) }
        }
    }
}
