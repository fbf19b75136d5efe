// SPDX-License-Identifier: Apache-2.0
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import PropertyBased
import SignetCore
import SignetMiddleware
import Testing

/// The server's view of a request (`ServerMessage`: HTTPTypes fields and the body buffer) is what
/// the verifier reads on every request. Invariant: for any request, it yields the same signature
/// base, byte for byte, as a SignetCore `HTTPMessage` copied from the same request — or the same
/// refusal — for every component a signature can cover.
@Suite struct ServerMessageTests {
    static let names = ["Content-Type", "content-type", "X-Trace", "x-TRACE", "Accept", "Cache-Control", "Example-Dict", "Connection"]
    static let values = ["application/json", "  a=1, b=2 ", "text/plain;q=0.5", "\"quoted, comma\"", "", "a=(1 2), b=?1", "x\t"]

    /// The copy the gateway made before the view: `Host` first, then the fields in order, the body copied.
    static func copied(_ head: HTTPRequest, body: [UInt8], scheme: String) throws -> HTTPMessage {
        var fields = MessageFields()
        if let host = head.authority { fields.append(name: "Host", value: host) }
        for field in head.headerFields { fields.append(name: field.name.rawName, value: field.value) }
        let target = try RequestTarget(requestTarget: head.path!, host: head.authority, scheme: scheme)
        return HTTPMessage(head: .request(method: head.method.rawValue, target: target), fields: fields, body: body)
    }

    static func components(for head: HTTPRequest) -> [ComponentIdentifier] {
        var components: [ComponentIdentifier] = [
            .method, .targetURI, "@path", "@query", "@authority", "@scheme", "@request-target", "host", "content-digest",
            ComponentIdentifier("@query-param", parameters: SFParameters([("name", .string("a"))])),
        ]
        for name in Set(head.headerFields.map { $0.name.canonicalName }) {
            components.append(ComponentIdentifier(name))
            components.append(ComponentIdentifier(name, parameters: SFParameters([("bs", .boolean(true))])))
            components.append(ComponentIdentifier(name, parameters: SFParameters([("sf", .boolean(true))])))
            components.append(ComponentIdentifier(name, parameters: SFParameters([("key", .string("a"))])))
        }
        return components
    }

    /// The base's text, or the refusal's reason code.
    static func base(_ message: some HTTPMessageView, _ component: ComponentIdentifier) -> String {
        do {
            return try SignatureBase(message: message, parameters: SignatureParameters(components: [component])).text
        } catch let error as SignetError {
            return "refused: \(error.code.rawValue)"
        } catch {
            return "refused: \(error)"
        }
    }

    @Test func theViewGivesTheSameBaseAsACopyForAnyRequest() async throws {
        let line = Gen.int(in: 0..<(Self.names.count * Self.values.count)).array(of: 0...8)
        let target = Gen.element(of: ["/", "/scores", "/scores?a=1", "/a%2Fb?a=x&a=y&b", "/p?", "/%7Euser?q=%20"])
        let body = Gen<UInt8>.value().array(of: 0...40)
        await propertyCheck(input: line, target, body) { lines, target, body in
            var fields = HTTPFields()
            for index in lines {
                let name = Self.names[index % Self.names.count]
                fields.append(HTTPField(name: HTTPField.Name(name)!, value: Self.values[index / Self.names.count]))
            }
            let head = HTTPRequest(method: .post, scheme: nil, authority: "API.example.com:443", path: target, headerFields: fields)
            let view = try! ServerMessage(request: head, body: ByteBuffer(bytes: body), scheme: "https")
            let copy = try! Self.copied(head, body: body, scheme: "https")
            for component in Self.components(for: head) {
                #expect(Self.base(view, component) == Self.base(copy, component), "\(component) of \(target) \(lines)")
            }
            #expect(view.bodyByteCount == body.count)
            #expect(view.withBodyBytes { Array($0) } == body)
        }
    }

    /// The public authority from configuration names the target; the `Host` line stays as sent.
    @Test func configuredAuthorityNamesTheTargetNotTheHostLine() throws {
        let head = HTTPRequest(method: .get, scheme: nil, authority: "10.0.0.5:8080", path: "/v1?x=1", headerFields: [:])
        let view = try ServerMessage(request: head, body: ByteBuffer(), scheme: "https", authority: "api.example.com")
        #expect(view.requestTarget?.targetURI == "https://api.example.com/v1?x=1")
        #expect(view.fieldValues("HOST") == ["10.0.0.5:8080"])
        let noHost = HTTPRequest(method: .get, scheme: nil, authority: nil, path: "/", headerFields: [:])
        #expect(throws: SignetError.self) { try ServerMessage(request: noHost, body: ByteBuffer(), scheme: "https") }
    }

    /// Signed as a client signs, verified from the server's own request: accepted; the body altered
    /// in the buffer: `digest_mismatch`; a covered field changed: `signature_invalid`.
    @Test func verifiesFromTheServersRequestAndRefusesAlterations() async throws {
        let key = try SigningKey.generate(.p256)
        let ring = KeyRing([KeyRecord(keyID: "k", algorithm: "ecdsa-p256-sha256", key: key.verificationKey)])
        let body = Array(#"{"score":42}"#.utf8)
        let now = Date(timeIntervalSince1970: 1_700_000_000)
        let signed = try MessageSigner(key: key, keyID: "k", algorithm: ECDSAP256SHA256()).sign(
            try HTTPMessage.request(
                method: "POST",
                uri: "https://api.example.com/scores?game=1",
                fields: [("Content-Type", "application/json")],
                body: body
            ),
            components: [.method, .targetURI, .contentDigest, "content-type"],
            created: now,
            nonce: "n1"
        )
        func request(body: [UInt8], contentType: String = "application/json") -> Request {
            var fields = HTTPFields()
            for field in signed.fields {
                fields.append(HTTPField(name: HTTPField.Name(field.name)!, value: field.name == "Content-Type" ? contentType : field.value))
            }
            let head = HTTPRequest(method: .post, scheme: nil, authority: "api.example.com", path: "/scores?game=1", headerFields: fields)
            return Request(head: head, body: .init(buffer: ByteBuffer(bytes: body)))
        }
        func verifier() -> SignetRequestVerifier {
            SignetRequestVerifier(verifier: MessageVerifier(keys: ring, nonces: MemoryNonceStore()), publicScheme: "https")
        }
        var accepted = request(body: body)
        let (identity, message) = try await verifier().verify(&accepted, now: now)
        #expect(identity.keyID == "k")
        #expect(message.body == ByteBuffer(bytes: body))

        var altered = request(body: Array(#"{"score":99}"#.utf8))
        await #expect(throws: SignetError.self) { _ = try await verifier().verify(&altered, now: now) }
        do { _ = try await verifier().verify(&altered, now: now) } catch let error as SignetError { #expect(error.code == .digestMismatch) }

        var retyped = request(body: body, contentType: "text/plain")
        do {
            _ = try await verifier().verify(&retyped, now: now)
            Issue.record("a changed content-type verified")
        } catch let error as SignetError {
            #expect(error.code == .signatureInvalid)
        }
    }

    /// A response signed from the server's fields and buffer carries the same fields as one signed
    /// from a copied `HTTPMessage` (HMAC is deterministic), `;req` components included.
    @Test func signsAResponseAsACopyWouldBeSigned() throws {
        let signer = MessageSigner(key: try SigningKey(secret: Array(repeating: 7, count: 32)), keyID: "gw", algorithm: HMACSHA256())
        let request = try ServerMessage(
            request: HTTPRequest(method: .post, scheme: nil, authority: "api.example.com", path: "/s", headerFields: [HTTPField.Name("Signature")!: "sig1=:AAAA:"]),
            body: ByteBuffer(string: "x"),
            scheme: "https"
        )
        let copiedRequest = try HTTPMessage.request(method: "POST", uri: "https://api.example.com/s", fields: [("Host", "api.example.com"), ("Signature", "sig1=:AAAA:")], body: Array("x".utf8))
        let fields: HTTPFields = [.contentType: "application/json"]
        let view = ServerMessage(status: 201, fields: fields, body: ByteBuffer(string: "{}"))
        let copy = HTTPMessage.response(status: 201, fields: [("Content-Type", "application/json")], body: Array("{}".utf8))
        let req = SFParameters([("req", .boolean(true))])
        let components: [ComponentIdentifier] = [.status, .contentDigest, "content-type", .init("@method", parameters: req), .init("signature", parameters: req)]
        let created = Date(timeIntervalSince1970: 1_700_000_000)
        let fromView = try signer.signatureFields(for: view, label: "gateway", components: components, created: created, relatedRequest: request)
        let fromCopy = try signer.signatureFields(for: copy, label: "gateway", components: components, created: created, relatedRequest: copiedRequest)
        #expect(fromView.map { $0.name } == ["Content-Digest", "Signature-Input", "Signature"])
        #expect(fromView.map { $0.value } == fromCopy.map { $0.value })
    }

    /// Cookie lines are one cookie-string that HTTP/2 splits (RFC 9113 §8.2.3): the view joins them
    /// with `; `, as the client signed them and as the upstream receives them, never with `, `.
    @Test func splitCookiesAreOneLineJoinedBySemicolons() throws {
        var fields = HTTPFields()
        fields.append(HTTPField(name: .cookie, value: "a=1"))
        fields.append(HTTPField(name: .contentType, value: "text/plain"))
        fields.append(HTTPField(name: .cookie, value: " b=2 "))
        let request = HTTPRequest(method: .get, scheme: "https", authority: "api.example", path: "/", headerFields: fields)
        let message = try ServerMessage(request: request, body: ByteBuffer(), scheme: "https")
        #expect(message.fieldValues("Cookie") == ["a=1; b=2"])
        #expect(message.combinedField("cookie") == "a=1; b=2")
        #expect(Self.base(message, ComponentIdentifier("cookie")).hasPrefix("\"cookie\": a=1; b=2\n"))
        #expect(request.headerFields[.cookie] == "a=1; b=2", "what HTTPTypes gives the upstream")
    }

    /// A field is found by its name in any case, as `MessageFields` finds it; lines of other fields
    /// are combined with `, ` and trimmed.
    @Test func fieldsAreFoundByTheirNameInAnyCase() throws {
        var fields = HTTPFields()
        fields.append(HTTPField(name: HTTPField.Name("X-Amount")!, value: " 1 "))
        fields.append(HTTPField(name: .contentType, value: "text/plain"))
        fields.append(HTTPField(name: HTTPField.Name("x-amount")!, value: "2"))
        let request = HTTPRequest(method: .get, scheme: "https", authority: "api.example", path: "/", headerFields: fields)
        let message = try ServerMessage(request: request, body: ByteBuffer(), scheme: "https")
        let copy = MessageFields(fields.map { MessageFields.Field(name: $0.name.rawName, value: $0.value) })
        for name in ["x-amount", "X-AMOUNT", "X-Amount", "content-type", "Content-Type", "x-absent"] {
            #expect(message.fieldValues(name) == copy.values(name), "\(name)")
            #expect(message.combinedField(name) == copy[name], "\(name)")
            var bytes: [UInt8] = []
            #expect(message.appendCombinedField(name, to: &bytes) == (copy[name] != nil), "\(name)")
            #expect(String(decoding: bytes, as: UTF8.self) == (copy[name] ?? ""), "\(name)")
        }
        #expect(message.combinedField("X-Amount") == "1, 2")
    }
}
