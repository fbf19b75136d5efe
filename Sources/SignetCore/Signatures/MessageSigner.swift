// SPDX-License-Identifier: Apache-2.0
import Foundation

/// Signs HTTP messages (RFC 9421 §3.1), adding `Content-Digest` when the body is covered.
///
/// ```swift
/// let signer = MessageSigner(key: key, keyID: "device-1", algorithm: Ed25519Algorithm())
/// let signed = try signer.sign(request, created: Date(), nonce: Nonce.random())
/// ```
public struct MessageSigner: Sendable {
    public var key: SigningKey
    public var keyID: String
    public var algorithm: any SignatureAlgorithm
    /// Whether to name the algorithm in the `alg` parameter (verifiers take it from the key record).
    public var includeAlgorithm: Bool
    /// The digest algorithm for a `Content-Digest` the signer adds.
    public var digestAlgorithm: ContentDigest.Algorithm

    public init(
        key: SigningKey,
        keyID: String,
        algorithm: any SignatureAlgorithm,
        includeAlgorithm: Bool = false,
        digestAlgorithm: ContentDigest.Algorithm = .sha256
    ) {
        self.key = key
        self.keyID = keyID
        self.algorithm = algorithm
        self.includeAlgorithm = includeAlgorithm
        self.digestAlgorithm = digestAlgorithm
    }

    /// The components signed when none are given: `@method @target-uri` for a request, `@status`
    /// for a response, and `content-digest` and `content-type` (when the message has one) when there
    /// is a body: what ``VerificationPolicy/standard`` asks of a request.
    public static func defaultComponents(for message: some HTTPMessageView) -> [ComponentIdentifier] {
        var components: [ComponentIdentifier] = message.isRequest ? [.method, .targetURI] : [.status]
        if message.bodyByteCount > 0 {
            components.append(.contentDigest)
            if message.containsField("content-type") { components.append("content-type") }
        }
        return components
    }

    /// Returns `message` with one more signature (and its `Content-Digest` when the body is covered
    /// and the message has none): ``signatureFields(for:label:components:created:expires:nonce:tag:relatedRequest:)``
    /// appended.
    ///
    /// - Parameters:
    ///   - label: The `Signature-Input` label; it must not be in use already.
    ///   - message: The request or response to sign; a covered body gets its `Content-Digest`.
    ///   - components: What to cover; ``defaultComponents(for:)`` when `nil`.
    ///   - created: The signing time (`created`); `nil` leaves it out.
    ///   - expires: When the signature stops being valid (`expires`); `nil` leaves it out.
    ///   - nonce: A value the verifier accepts once (`nonce`); `nil` leaves it out.
    ///   - tag: The application's tag (`tag`); `nil` leaves it out.
    ///   - relatedRequest: For a response covering `;req` components, the request it answers.
    public func sign(
        _ message: HTTPMessage,
        label: String = "sig1",
        components: [ComponentIdentifier]? = nil,
        created: Date?,
        expires: Date? = nil,
        nonce: String? = nil,
        tag: String? = nil,
        relatedRequest: (any HTTPMessageView)? = nil
    ) throws -> HTTPMessage {
        var message = message
        for field in try signatureFields(
            for: message,
            label: label,
            components: components,
            created: created,
            expires: expires,
            nonce: nonce,
            tag: tag,
            relatedRequest: relatedRequest
        ) {
            message.fields.append(name: field.name, value: field.value)
        }
        return message
    }

    /// The fields a signature adds to `message`, in order: `Content-Digest` (when the body is
    /// covered and the message has none), `Signature-Input`, `Signature`. For a server that keeps its
    /// own representation of the message (an ``HTTPMessageView``) and only appends these.
    ///
    /// - Parameters:
    ///   - label: The `Signature-Input` label; it must not be in use already.
    ///   - message: The request or response to sign.
    ///   - components: What to cover; ``defaultComponents(for:)`` when `nil`.
    ///   - created: The signing time (`created`); `nil` leaves it out.
    ///   - expires: When the signature stops being valid (`expires`); `nil` leaves it out.
    ///   - nonce: A value the verifier accepts once (`nonce`); `nil` leaves it out.
    ///   - tag: The application's tag (`tag`); `nil` leaves it out.
    ///   - relatedRequest: For a response covering `;req` components, the request it answers.
    public func signatureFields(
        for message: some HTTPMessageView,
        label: String = "sig1",
        components: [ComponentIdentifier]? = nil,
        created: Date?,
        expires: Date? = nil,
        nonce: String? = nil,
        tag: String? = nil,
        relatedRequest: (any HTTPMessageView)? = nil
    ) throws -> [(name: String, value: String)] {
        let components = components ?? Self.defaultComponents(for: message)
        guard components.contains(.contentDigest), !message.containsField("content-digest") else {
            return try signatureFields(message, label, components, created, expires, nonce, tag, relatedRequest)
        }
        let digest = message.withBodyBytes { ContentDigest.fieldValue(forBytes: $0, algorithm: digestAlgorithm) }
        let withDigest = MessageAddingField(base: message, name: "Content-Digest", value: digest)
        return try [("Content-Digest", digest)]
            + signatureFields(withDigest, label, components, created, expires, nonce, tag, relatedRequest)
    }

    /// `Signature-Input` and `Signature` for a message that has every field the base covers.
    private func signatureFields(
        _ message: some HTTPMessageView,
        _ label: String,
        _ components: [ComponentIdentifier],
        _ created: Date?,
        _ expires: Date?,
        _ nonce: String?,
        _ tag: String?,
        _ relatedRequest: (any HTTPMessageView)?
    ) throws -> [(name: String, value: String)] {
        var added: [(name: String, value: String)] = []
        if let existing = message.combinedField("signature-input"),
            (try StructuredFieldParser.parseDictionary(existing))[label] != nil
        {
            throw SignetError(
                .malformedHeader,
                "the message already has a signature labelled \(label.debugDescription)"
            )
        }
        let parameters = SignatureParameters(
            components: components,
            created: created.map { Int64($0.timeIntervalSince1970.rounded(.down)) },
            expires: expires.map { Int64($0.timeIntervalSince1970.rounded(.down)) },
            nonce: nonce,
            algorithm: includeAlgorithm ? algorithm.name : nil,
            keyID: keyID,
            tag: tag
        )
        let base = try SignatureBase(message: message, parameters: parameters, relatedRequest: relatedRequest)
        let signature = try algorithm.sign(base.bytes, with: key)
        let labelKey = try StructuredFieldSerializer.key(label)
        added.append(("Signature-Input", "\(labelKey)=\(try parameters.serialized)"))
        added.append(("Signature", "\(labelKey)=:\(Base64.encode(signature)):"))
        return added
    }
}

/// Nonces for the `nonce` parameter.
public enum Nonce {
    /// 16 random bytes as base64url (128 bits: collisions are not a concern).
    public static func random() -> String {
        var generator = SystemRandomNumberGenerator()
        return Base64.urlEncode((0..<16).map { _ in UInt8.random(in: .min ... .max, using: &generator) })
    }
}
