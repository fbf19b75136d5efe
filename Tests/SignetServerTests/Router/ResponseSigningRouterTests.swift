// SPDX-License-Identifier: Apache-2.0
import Foundation
import HTTPTypes
import NIOCore
import NIOHTTP1
import SignetCore
import SignetTestSupport
import Testing

@testable import SignetServer

/// What the gateway signs on the way back (`responseSigning`), seen against answers a test scripts
/// at the recording upstream: only what it checked itself — the status, the body's digest as it
/// computed it, the request it answers — never a field the upstream wrote in its name, and nothing
/// it cannot hold whole.
@Suite(.awaitsCleanups) struct ResponseSigningRouterTests {
    static let bank = MessageSigner(key: try! SigningKey(secret: GatewayHarness.bankSecret), keyID: "bank-v1", algorithm: HMACSHA256())

    static func start() async throws -> (GatewayHarness, RecordingUpstream) {
        let harness = try await GatewayHarness.start(store: .memory, transport: .router) {
            $0.routes.insert(.init(prefix: "/public", access: .open), at: 0)
        }
        return (harness, try #require(harness.upstream))
    }

    /// A request signed by the bank's shared secret.
    static func signed(_ harness: GatewayHarness, _ method: String = "GET", _ path: String = "/report") throws -> HTTPMessage {
        try bank.sign(try HTTPMessage.request(method: method, uri: harness.base + path), created: Date(), nonce: Nonce.random())
    }

    /// Verifies the answer's `gateway` signature as a client does: with the gateway's published
    /// key, bound to the request it sent.
    static func verify(_ answer: GatewayHarness.Answer, answering request: HTTPMessage, _ harness: GatewayHarness) async throws -> VerifiedSignature {
        var fields = MessageFields()
        for header in answer.headers { fields.append(name: header.name, value: header.value) }
        let response = HTTPMessage.response(status: answer.status, fields: fields, body: answer.body)
        var policy = VerificationPolicy.permissive
        policy.selection = .label("gateway")
        let verifier = MessageVerifier(
            keys: KeyRing([KeyRecord(keyID: "gateway", algorithm: "ed25519", key: harness.gatewayKey.verificationKey)]),
            policy: policy,
            nonces: nil
        )
        return try await verifier.verify(response, relatedRequest: request, now: Date())
    }

    /// Members of a dictionary field, by label.
    static func labels(_ answer: GatewayHarness.Answer, _ name: String) throws -> [String] {
        try StructuredFieldParser.parseDictionary(answer.headers[name].joined(separator: ", ")).entries.map(\.key)
    }

    /// An upstream that signs its own answers — another Signet gateway behind this one, with the
    /// same label — and writes a digest that does not match its body: the client still gets one
    /// `gateway` signature, this gateway's, over the digest this gateway computed. The upstream's
    /// signature under another label is its own business and passes.
    @Test func theGatewaySignsOnlyWhatItCheckedWhateverTheUpstreamWroteInItsName() async throws {
        let (harness, upstream) = try await Self.start()
        Cleanup.after { try await harness.stop() }
        let body = Array(#"{"balance":100}"#.utf8)
        let wrongDigest = ContentDigest.fieldValue(for: Array(#"{"balance":1000000}"#.utf8))
        let answerFields: [(String, String)] = [
            ("Content-Type", "application/json"),
            ("Content-Digest", wrongDigest),
            ("Signature-Input", #"gateway=("@status" "content-digest");created=1;keyid="inner""#),
            ("Signature", "gateway=:AAAA:"),
            // Written as its signer wrote it (spaces, a decimal): verifiers build the base from these bytes.
            ("Signature-Input", #"app=("@status"   "content-type");created=1;keyid="app-key";v=1.50"#),
            ("Signature", "app=:BBBB:"),
        ]
        upstream.answer(.respond(status: .ok, fields: answerFields, body: body))
        let request = try Self.signed(harness)
        let answer = try await GatewayHarness.send(request)
        #expect(answer.status == 200, "\(answer.text)")
        #expect(answer.body == body)
        let verified = try await Self.verify(answer, answering: request, harness)
        #expect(verified.covers(.contentDigest) && verified.covers(.status))
        #expect(answer.headers["Content-Digest"] == [ContentDigest.fieldValue(for: body)], "\(answer.headers["Content-Digest"])")
        #expect(try Self.labels(answer, "Signature-Input") == ["app", "gateway"])
        #expect(answer.headers["Signature-Input"].first == #"app=("@status"   "content-type");created=1;keyid="app-key";v=1.50"#, "\(answer.headers["Signature-Input"])")
        #expect(try Self.labels(answer, "Signature") == ["app", "gateway"])
        #expect(!answer.headers["Signature"].joined().contains("AAAA"), "the upstream's gateway signature was dropped")

        // A bare member (true) the upstream wrote is written back as one (`flag;p=1`, not `flag=`),
        // so the answer is still signed rather than refused.
        upstream.answer(.respond(status: .ok, fields: [("Signature-Input", #"gateway=("@status"), flag;p=1"#), ("Signature", "gateway=:AAAA:, flag")], body: body))
        let bare = try await GatewayHarness.send(try Self.signed(harness))
        #expect(bare.status == 200, "\(bare.text)")
        #expect(bare.headers["Signature-Input"].first == "flag;p=1" && bare.headers["Signature"].first == "flag", "\(bare.headers)")

        // A member the gateway cannot check (md5) beside a right one: replaced, never signed unchecked.
        upstream.answer(.respond(status: .ok, fields: [("Content-Digest", "\(ContentDigest.fieldValue(for: body)), md5=:AAAAAAAAAAAAAAAAAAAAAA==:")], body: body))
        let third = try Self.signed(harness)
        let unchecked = try await GatewayHarness.send(third)
        #expect(unchecked.headers["Content-Digest"] == [ContentDigest.fieldValue(for: body)], "\(unchecked.headers["Content-Digest"])")
        #expect(try await Self.verify(unchecked, answering: third, harness).covers(.contentDigest))

        // A digest the upstream got right is kept (the upstream's own signature may cover it), and signed.
        upstream.answer(.respond(status: .ok, fields: [("Content-Digest", ContentDigest.fieldValue(for: body, algorithm: .sha512))], body: body))
        let second = try Self.signed(harness)
        let kept = try await GatewayHarness.send(second)
        #expect(kept.headers["Content-Digest"] == [ContentDigest.fieldValue(for: body, algorithm: .sha512)])
        #expect(try await Self.verify(kept, answering: second, harness).covers(.contentDigest))

        // On an open route nothing is signed and the upstream's fields pass as they came, but for a
        // `gateway` signature this gateway did not make.
        upstream.answer(.respond(status: .ok, fields: answerFields, body: body))
        let open = try await GatewayHarness.send(method: "GET", url: harness.base + "/public/report")
        #expect(open.headers["Content-Digest"] == [wrongDigest])
        #expect(try Self.labels(open, "Signature") == ["app"] && Self.labels(open, "Signature-Input") == ["app"])
    }

    /// A signed answer is held whole to digest it: one past the bound is `503 upstream_unavailable`,
    /// never a truncated or unsigned answer; on an open route the same answer streams through.
    @Test func anAnswerTooLargeToSignIsRefusedAndAnOpenRouteStreamsIt() async throws {
        let (harness, upstream) = try await Self.start()
        Cleanup.after { try await harness.stop() }
        let bound = SignetGateway.maximumBufferedResponseBytes
        upstream.answer(.respond(status: .ok, fields: [], body: [UInt8](repeating: 0x61, count: bound)))
        let atBound = try Self.signed(harness)
        let fits = try await GatewayHarness.send(atBound)
        #expect(fits.status == 200 && fits.body.count == bound)
        #expect(try await Self.verify(fits, answering: atBound, harness).covers(.contentDigest))

        let large = [UInt8](repeating: 0x62, count: bound + 1)
        upstream.answer(.respond(status: .ok, fields: [], body: large))
        let refused = try await GatewayHarness.send(try Self.signed(harness))
        #expect(refused.status == 503 && refused.reason == "upstream_unavailable", "\(refused.status) \(refused.reason ?? "")")
        #expect(refused.headers["Signature"].isEmpty)

        upstream.answer(.respond(status: .ok, fields: [], body: large))
        let streamed = try await GatewayHarness.send(method: "GET", url: harness.base + "/public/large")
        #expect(streamed.status == 200 && streamed.body == large)
    }

    /// Answers without content — to `HEAD`, `204`, `304` — are signed over their status and the
    /// request, with no digest of an empty body, and keep the framing their status allows: a `HEAD`
    /// answer the upstream's `Content-Length`, a `204` none.
    @Test func answersWithoutContentAreSignedWithTheFramingTheirStatusAllows() async throws {
        let (harness, upstream) = try await Self.start()
        Cleanup.after { try await harness.stop() }
        upstream.answer(
            .relay { _, _ in
                UpstreamResponse(
                    head: HTTPResponse(status: .ok, headerFields: [.contentLength: "42", .contentType: "application/json"]),
                    body: ByteBuffer()
                )
            }
        )
        let head = try Self.signed(harness, "HEAD")
        let headAnswer = try await GatewayHarness.send(head)
        #expect(headAnswer.status == 200 && headAnswer.body.isEmpty)
        #expect(headAnswer.headers["Content-Length"] == ["42"], "\(headAnswer.headers)")
        let verifiedHead = try await Self.verify(headAnswer, answering: head, harness)
        #expect(!verifiedHead.covers(.contentDigest))

        for status in [HTTPResponse.Status.noContent, .notModified] {
            upstream.answer(.relay { _, _ in UpstreamResponse(head: HTTPResponse(status: status), body: ByteBuffer()) })
            let request = try Self.signed(harness)
            let answer = try await GatewayHarness.send(request)
            #expect(answer.status == status.code && answer.body.isEmpty)
            if status == .noContent { #expect(answer.headers["Content-Length"].isEmpty, "\(answer.headers)") }
            #expect(try await Self.verify(answer, answering: request, harness).covers(.status))
        }
    }

    /// The gateway's own refusals are answered before anything reaches the upstream, and carry no
    /// signature: a client reads their reason code, never a `gateway` signature it could mistake for
    /// the upstream's answer.
    @Test func aRefusalReachesNoUpstreamAndIsNotSigned() async throws {
        let (harness, upstream) = try await Self.start()
        Cleanup.after { try await harness.stop() }
        let tampered = try Self.signed(harness, "GET", "/report").replacingSignatureBytes()
        let refused = try await GatewayHarness.send(tampered)
        #expect(refused.status == 401 && refused.reason == "signature_invalid", "\(refused.text)")
        #expect(refused.headers["Signature"].isEmpty && refused.headers["Signature-Input"].isEmpty)
        #expect(upstream.received.isEmpty)
    }

    /// The response signature covers exactly what docs/gateway.md lists — the status, the body's
    /// digest, its type, and the request's method, target and signature — so an answer whose
    /// `Content-Type` is changed on the way fails; answers to requests that carried no signature
    /// (open, app-token, password routes) are not signed.
    @Test func theSignatureCoversWhatTheDocsSayAndOnlySignedRequestsGetOne() async throws {
        let (harness, upstream) = try await Self.start()
        Cleanup.after { try await harness.stop() }
        upstream.answerEveryRequest(.respond(status: .ok, fields: [("Content-Type", "application/json")], body: Array("{}".utf8)))
        let request = try Self.signed(harness)
        let answer = try await GatewayHarness.send(request)
        let input = try #require(answer.headers.first(name: "Signature-Input"))
        #expect(input.hasPrefix(#"gateway=("@status" "content-digest" "content-type" "@method";req "@target-uri";req "signature";req)"#), "\(input)")
        _ = try await Self.verify(answer, answering: request, harness)
        var retyped = answer
        retyped.headers.replaceOrAdd(name: "Content-Type", value: "text/html")
        await #expect(throws: SignetError.self) { try await Self.verify(retyped, answering: request, harness) }
        let open = try await GatewayHarness.send(method: "GET", url: harness.base + "/public/x")
        #expect(open.status == 200 && open.headers["Signature"].isEmpty && open.headers["Signature-Input"].isEmpty)
    }

}
