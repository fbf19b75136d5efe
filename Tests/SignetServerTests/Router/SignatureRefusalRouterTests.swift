// SPDX-License-Identifier: Apache-2.0
import Foundation
import SignetCore
import SignetServer
import SignetTestSupport
import Testing

/// Refusals of a signature's shape, through the gateway: what a signature leaves out, several
/// signatures on one request, and a body's digest. Each is refused with its own code before
/// anything reaches the upstream (GatewayEndToEndTests has the common ones: tampering, replay,
/// age, an unknown key).
@Suite(.awaitsCleanups) struct SignatureRefusalRouterTests {
    static let bank = MessageSigner(key: try! SigningKey(secret: GatewayHarness.bankSecret), keyID: "bank-v1", algorithm: HMACSHA256())

    static func start() async throws -> (GatewayHarness, RecordingUpstream) {
        let harness = try await GatewayHarness.start(store: .memory, transport: .router)
        return (harness, try #require(harness.upstream))
    }

    /// Sends each case and checks its code; none reaches the upstream.
    static func expectRefused(_ cases: [(String, HTTPMessage, String)], _ upstream: RecordingUpstream) async throws {
        let before = upstream.received.count
        for (name, message, reason) in cases {
            let answer = try await GatewayHarness.send(message)
            #expect(answer.reason == reason && answer.status == SignetError.Code(rawValue: reason)?.httpStatus, "\(name): \(answer.status) \(answer.text)")
        }
        #expect(upstream.received.count == before, "a refused request reached the upstream")
    }

    static func fields(_ pairs: [(String, String)]) -> MessageFields {
        MessageFields(pairs.map { MessageFields.Field(name: $0.0, value: $0.1) })
    }

    /// `message` with `old` replaced by `new` in its `Signature-Input`.
    static func editingInput(_ message: HTTPMessage, _ old: String, _ new: String) throws -> HTTPMessage {
        var copy = message
        let input = try #require(copy.fields["signature-input"])
        #expect(input.contains(old))
        copy.fields.set(name: "Signature-Input", value: input.replacingOccurrences(of: old, with: new))
        return copy
    }

    @Test func whatASignatureLeavesOutIsRefusedWithItsCode() async throws {
        let (harness, upstream) = try await Self.start()
        Cleanup.after { try await harness.stop() }
        func get(_ fields: [(String, String)] = [], components: [ComponentIdentifier] = [.method, .targetURI]) throws -> HTTPMessage {
            try Self.bank.sign(
                try HTTPMessage.request(method: "GET", uri: harness.base + "/echo/account", fields: Self.fields(fields)),
                components: components,
                created: Date(),
                nonce: Nonce.random()
            )
        }
        // A field the signature covers, removed on the way: the base cannot be built.
        var stripped = try get([("X-Account", "17")], components: [.method, .targetURI, "x-account"])
        stripped.fields.removeAll("x-account")
        let cases: [(String, HTTPMessage, String)] = [
            ("a covered field missing", stripped, "component_missing"),
            ("no keyid", try Self.editingInput(try get(), #";keyid="bank-v1""#, ""), "parameter_missing"),
            ("no created", try Self.editingInput(try get(), ";created=", ";x-created="), "parameter_missing"),
            // The algorithm is the key record's: a message naming another is refused, never tried.
            ("another algorithm", try Self.editingInput(try get(), #";keyid="bank-v1""#, #";alg="ed25519";keyid="bank-v1""#), "alg_mismatch"),
            ("an algorithm nobody has", try Self.editingInput(try get(), #";keyid="bank-v1""#, #";alg="rsa-v1_5-sha1";keyid="bank-v1""#), "alg_mismatch"),
        ]
        try await Self.expectRefused(cases, upstream)
        // Fields of blanks name no signature (schemathesis found these crashing the verifier once).
        for blank in [" ", "\t", "  \t "] {
            let answer = try await harness.sendAsWritten("POST", "/echo/account", fields: [("Signature-Input", blank), ("Signature", blank)], body: [])
            #expect(answer.status == 401 && answer.reason == "signature_missing", "\(blank.debugDescription): \(answer.text)")
        }
        #expect(upstream.received.isEmpty)
        // The same request, whole, passes.
        let whole = try get([("X-Account", "17")], components: [.method, .targetURI, "x-account"])
        #expect(try await GatewayHarness.send(whole).status == 200)
    }

    /// A signer rolling keys over attaches a signature per key: the one whose key the gateway can
    /// use now is taken. Two it could use are ambiguous, never "any will do".
    @Test func severalSignaturesAreSettledByTheirKeysOrRefusedAsAmbiguous() async throws {
        let (harness, upstream) = try await Self.start()
        Cleanup.after { try await harness.stop() }
        let device = try await harness.register(.p256)
        let retired = MessageSigner(key: try SigningKey(secret: Array("a-secret-the-gateway-forgot-long-ago".utf8)), keyID: "bank-v0", algorithm: HMACSHA256())
        func twice(_ first: MessageSigner, _ second: MessageSigner) throws -> HTTPMessage {
            let request = try HTTPMessage.request(method: "GET", uri: harness.base + "/echo/twice")
            let once = try first.sign(request, label: "old", created: Date(), nonce: Nonce.random())
            return try second.sign(once, label: "new", created: Date(), nonce: Nonce.random())
        }
        let rolling = try await GatewayHarness.send(try twice(retired, Self.bank))
        #expect(rolling.status == 200 && (rolling.json["headers"] as? [String: String])?["signet-key-id"] == "bank-v1", "\(rolling.text)")
        // Inputs and signatures under labels that do not pair.
        var unpaired = try twice(retired, Self.bank)
        unpaired.fields.set(name: "Signature", value: "other=:AAAA:, more=:AAAA:")
        try await Self.expectRefused(
            [
                ("two usable keys", try twice(device.signer, Self.bank), "ambiguous_signature"),
                ("no usable key", try twice(retired, retired), "unknown_key"),
                ("labels that do not pair", unpaired, "malformed_header"),
            ],
            upstream
        )
    }

    /// A body passes under a digest the signature covers and the gateway checked against the bytes
    /// it received — SHA-512 as well as SHA-256, every member of the field.
    @Test func aBodyPassesOnlyUnderACoveredDigestTheGatewayChecked() async throws {
        let (harness, upstream) = try await Self.start()
        Cleanup.after { try await harness.stop() }
        let body = Array(#"{"amount":100}"#.utf8)
        let other = Array(#"{"amount":999}"#.utf8)
        func post(digest: String?, components: [ComponentIdentifier] = [.method, .targetURI, .contentDigest, "content-type"]) throws -> HTTPMessage {
            var fields: [(String, String)] = [("Content-Type", "application/json")]
            if let digest { fields.append(("Content-Digest", digest)) }
            return try Self.bank.sign(
                try HTTPMessage.request(method: "POST", uri: harness.base + "/echo/pay", fields: Self.fields(fields), body: body),
                components: components,
                created: Date(),
                nonce: Nonce.random()
            )
        }
        let sha256 = ContentDigest.fieldValue(for: body)
        let sha512 = ContentDigest.fieldValue(for: body, algorithm: .sha512)
        for digest in [sha256, sha512, "\(sha256), \(sha512)"] {
            let answer = try await GatewayHarness.send(try post(digest: digest))
            #expect(answer.status == 200 && (answer.json["bodyBytes"] as? Int) == body.count, "\(digest): \(answer.text)")
        }
        let received = upstream.received.count
        try await Self.expectRefused(
            [
                ("a wrong SHA-512 beside a right SHA-256", try post(digest: "\(sha256), \(ContentDigest.fieldValue(for: other, algorithm: .sha512))"), "digest_mismatch"),
                ("only an algorithm nobody checks", try post(digest: "md5=:\(Base64.encode([UInt8](repeating: 1, count: 16))):"), "digest_algorithm_unsupported"),
                ("a digest the signature leaves out", try post(digest: sha256, components: [.method, .targetURI, "content-type"]), "digest_not_covered"),
                ("a body without a digest", try post(digest: nil, components: [.method, .targetURI, "content-type"]), "digest_missing"),
            ],
            upstream
        )
        #expect(upstream.received.count == received)
    }

    /// With `policy.requireNonce` off, a signature without a nonce may repeat (an operator's choice
    /// for idempotent APIs); one with a nonce is still claimed once. `expires`, when a signature
    /// carries it, is kept either way.
    @Test func withoutARequiredNonceASignatureMayRepeatAndExpiresStillHolds() async throws {
        let harness = try await GatewayHarness.start(store: .memory, transport: .router) {
            $0.policy.requireNonce = false
            $0.policy.clockSkewSeconds = 0
        }
        Cleanup.after { try await harness.stop() }
        let upstream = try #require(harness.upstream)
        func request() throws -> HTTPMessage { try HTTPMessage.request(method: "GET", uri: harness.base + "/echo/report") }
        let bare = try Self.bank.sign(try request(), created: Date())
        #expect(try await GatewayHarness.send(bare).status == 200)
        #expect(try await GatewayHarness.send(bare).status == 200, "no nonce, nothing to replay")
        let once = try Self.bank.sign(try request(), created: Date(), nonce: Nonce.random())
        #expect(try await GatewayHarness.send(once).status == 200)
        #expect(try await GatewayHarness.send(once).reason == "nonce_replayed")
        let lapsed = try Self.bank.sign(try request(), created: Date().addingTimeInterval(-20), expires: Date().addingTimeInterval(-10))
        let refused = try await GatewayHarness.send(lapsed)
        #expect(refused.status == 401 && refused.reason == "expired", "\(refused.text)")
        #expect(upstream.received.count == 3)
    }

    /// The signature fields are bounded before anything else is read: more than 16 KiB together is
    /// `431 header_too_large`, more than eight signatures `malformed_header`; nothing is claimed or
    /// forwarded, and a body announced behind them is never needed.
    @Test func signatureFieldsPastTheirBoundsAreRefusedAtTheHead() async throws {
        let (harness, upstream) = try await Self.start()
        Cleanup.after { try await harness.stop() }
        let created = Int(Date().timeIntervalSince1970)
        let large = [
            ("Signature-Input", "sig1=(\"@method\");created=\(created);keyid=\"bank-v1\";nonce=\"n\""),
            ("Signature", "sig1=:" + Base64.encode([UInt8](repeating: 1, count: 13_000)) + ":"),
        ]
        let tooLarge = try await harness.sendAsWritten("POST", "/echo/x", fields: large + [("Content-Type", "application/json")], body: Array(repeating: 0x20, count: 100))
        #expect(tooLarge.status == 431 && tooLarge.reason == "header_too_large", "\(tooLarge.status) \(tooLarge.text)")
        let nine = (0..<9).map { "s\($0)=(\"@method\");created=\(created);keyid=\"bank-v1\";nonce=\"n\($0)\"" }.joined(separator: ", ")
        let signatures = (0..<9).map { "s\($0)=:AAAA:" }.joined(separator: ", ")
        let tooMany = try await harness.sendAsWritten("GET", "/echo/x", fields: [("Signature-Input", nine), ("Signature", signatures)])
        #expect(tooMany.status == 400 && tooMany.reason == "malformed_header", "\(tooMany.text)")
        #expect(upstream.received.isEmpty)
        // The nonces those named were never claimed: the same nonce, rightly signed, passes.
        let fresh = try Self.bank.sign(try HTTPMessage.request(method: "GET", uri: harness.base + "/echo/x"), created: Date(), nonce: "n0")
        #expect(try await GatewayHarness.send(fresh).status == 200)
    }


    /// With a body, the type is covered too: a body signed with its digest but no `Content-Type` is
    /// `component_not_covered`, and a covered type that `Connection` would strip is
    /// `malformed_header` — neither reaches the upstream.
    @Test func aBodysTypeIsCoveredAndCannotBeStrippedOnTheWay() async throws {
        let (harness, upstream) = try await Self.start()
        Cleanup.after { try await harness.stop() }
        let body = Array(#"{"amount":1}"#.utf8)
        let untyped = try Self.bank.sign(
            try HTTPMessage.request(method: "POST", uri: harness.base + "/echo/pay", body: body),
            components: [.method, .targetURI, .contentDigest],
            created: Date(),
            nonce: Nonce.random()
        )
        var stripped = try HTTPMessage.request(method: "POST", uri: harness.base + "/echo/pay", fields: Self.fields([("Content-Type", "application/json")]), body: body)
        stripped.fields.append(name: "Connection", value: "content-type")
        stripped = try Self.bank.sign(stripped, components: [.method, .targetURI, .contentDigest, "content-type"], created: Date(), nonce: Nonce.random())
        try await Self.expectRefused([("no type", untyped, "component_not_covered"), ("type stripped by Connection", stripped, "malformed_header")], upstream)
    }

}
