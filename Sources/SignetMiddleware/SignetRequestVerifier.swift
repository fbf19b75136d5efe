// SPDX-License-Identifier: Apache-2.0
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import SignetCore

/// Turns a Hummingbird request into a verified ``SignetIdentity``, or a `SignetError`.
///
/// Reads the exact body bytes (bounded), rebuilds the message as the client signed it — with the
/// public scheme and authority from configuration when Signet sits behind a TLS-terminating proxy —
/// and verifies it with the route's requirement checked as soon as the key is known. Both replay
/// guards (nonce, signed counter) are the `MessageVerifier`'s. Used by
/// ``SignetVerificationMiddleware``, in the gateway as in any Hummingbird app.
public struct SignetRequestVerifier: Sendable {
    public var verifier: MessageVerifier
    /// `https` when clients reach Signet over TLS, even if a proxy terminates it.
    public var publicScheme: String
    /// The authority clients address; `nil` takes the request's own `Host`.
    public var publicAuthority: String?
    public var maximumBodyBytes: Int
    /// Refuses (or only flags) App Attest devices whose risk metric is above a limit.
    public var riskLimit: RiskLimit?
    /// Which app builds an App Attest assertion may declare (iOS 27), wherever a request is verified
    /// and the route gives no policy of its own; any when `nil`.
    public var appBuild: AppBuildPolicy?

    public init(
        verifier: MessageVerifier,
        publicScheme: String,
        publicAuthority: String? = nil,
        maximumBodyBytes: Int = 1 << 20,
        riskLimit: RiskLimit? = nil,
        appBuild: AppBuildPolicy? = nil
    ) {
        self.riskLimit = riskLimit
        self.appBuild = appBuild
        self.verifier = verifier
        self.publicScheme = publicScheme
        self.publicAuthority = publicAuthority
        self.maximumBodyBytes = maximumBodyBytes
    }

    /// Verifies `request`, leaving its body collected in it for whoever handles it next.
    ///
    /// - Parameters:
    ///   - request: The request; its body is read (bounded) and left in it.
    ///   - receivedTarget: The target as the client sent it, when routing normalised it
    ///     (``SignetRequestState/receivedTarget``): the signature covers what the client sent.
    ///   - requirement: What the route asks of the key, checked before any cryptography.
    ///   - appBuild: The route's app-build policy, in place of ``appBuild``.
    ///   - signatureKeys: The keys the route takes in `Signature-Key`; none when `nil`.
    ///   - now: The verifier's time.
    nonisolated(nonsending) public func verify(
        _ request: inout Request,
        receivedTarget: String? = nil,
        requirement: AccessRequirement = .verified,
        appBuild: AppBuildPolicy? = nil,
        signatureKeys: SignatureKeyAcceptance? = nil,
        now: Date
    ) async throws -> (identity: SignetIdentity, message: ServerMessage) {
        let message = try await message(for: &request, receivedTarget: receivedTarget)
        let identity = try await verify(
            message: message, requirement: requirement, appBuild: appBuild, signatureKeys: signatureKeys, now: now)
        return (identity, message)
    }

    /// Verifies `request` at the moment its body is complete: the body is read first (bounded), then
    /// `clock` is read, so a request held open is judged — window, nonce claim, counter — when it
    /// ends, never when it began. A sender whose head cannot verify is refused before the body is
    /// read (``screen(_:receivedTarget:requirement:signatureKeys:now:)``).
    ///
    /// - Parameters:
    ///   - request: The request; its body is read (bounded) and left in it.
    ///   - receivedTarget: The target as the client sent it, when routing normalised it
    ///     (``SignetRequestState/receivedTarget``).
    ///   - requirement: What the route asks of the key, checked before any cryptography.
    ///   - appBuild: The route's app-build policy, in place of ``appBuild``.
    ///   - signatureKeys: The keys the route takes in `Signature-Key`; none when `nil`.
    ///   - screened: The head was screened and the body read already (the gateway does both
    ///     before routing): nothing is screened twice.
    ///   - clock: Read once for the screen and again when the body is complete.
    nonisolated(nonsending) public func verifyWhenComplete(
        _ request: inout Request,
        receivedTarget: String? = nil,
        requirement: AccessRequirement = .verified,
        appBuild: AppBuildPolicy? = nil,
        signatureKeys: SignatureKeyAcceptance? = nil,
        screened: Bool = false,
        clock: @Sendable () -> Date
    ) async throws -> (identity: SignetIdentity, message: ServerMessage) {
        if !screened {
            try await screen(request, receivedTarget: receivedTarget, requirement: requirement, signatureKeys: signatureKeys, now: clock())
        }
        let body = try await request.collectBody(upTo: maximumBodyBytes, refusing: "a request body")
        return try await verifyComplete(
            head: request.head,
            body: body,
            receivedTarget: receivedTarget,
            requirement: requirement,
            appBuild: appBuild,
            signatureKeys: signatureKeys,
            clock: clock
        )
    }

    /// ``verifyWhenComplete(_:receivedTarget:requirement:appBuild:signatureKeys:screened:clock:)``
    /// for a request whose head was screened and whose body was read already (the gateway's
    /// event-loop data plane holds both): no body to collect, no request to build.
    nonisolated(nonsending) package func verifyComplete(
        head: HTTPRequest,
        body: ByteBuffer,
        receivedTarget: String?,
        requirement: AccessRequirement,
        appBuild: AppBuildPolicy?,
        signatureKeys: SignatureKeyAcceptance?,
        clock: @Sendable () -> Date
    ) async throws -> (identity: SignetIdentity, message: ServerMessage) {
        let message = try message(head: head, body: body, receivedTarget: receivedTarget)
        let identity = try await verify(
            message: message, requirement: requirement, appBuild: appBuild, signatureKeys: signatureKeys, now: clock())
        return (identity, message)
    }

    /// Verifies a message; a key whose owner does not meet `requirement` is refused before any
    /// cryptography, and an App Attest assertion whose app build the policy refuses once its
    /// signature verified — both before a nonce is claimed or a counter advanced.
    nonisolated(nonsending) public func verify(
        message: some HTTPMessageView,
        requirement: AccessRequirement = .verified,
        appBuild: AppBuildPolicy? = nil,
        signatureKeys: SignatureKeyAcceptance? = nil,
        now: Date
    ) async throws -> SignetIdentity {
        SignetIdentity(
            try await verifySignature(
                message: message, requirement: requirement, appBuild: appBuild, signatureKeys: signatureKeys, now: now)
        )
    }

    /// ``verify(message:requirement:appBuild:signatureKeys:now:)``, returning all that verified (the
    /// signature base among it, for checks bound to it).
    nonisolated(nonsending) public func verifySignature(
        message: some HTTPMessageView,
        requirement: AccessRequirement = .verified,
        appBuild: AppBuildPolicy? = nil,
        signatureKeys: SignatureKeyAcceptance? = nil,
        now: Date
    ) async throws -> VerifiedSignature {
        let buildPolicy = appBuild ?? self.appBuild
        let verifier = try await verifier(for: message, signatureKeys: signatureKeys, now: now)
        do {
            return try await verifier.verify(
                message,
                now: now,
                authorize: { record in
                    try requirement.authorize(record.owner)
                    try riskLimit?.check(record.owner)
                },
                admit: { evidence, owner in try Self.admit(evidence, of: owner, under: buildPolicy) }
            )
        } catch let error as SignetError where error.code == .signatureInvalid {
            throw Self.namingTheURL(error, of: message)
        }
    }

    /// Checks the app build a verified signature declares against `policy`: every App Attest
    /// signature is judged, and a debug device's (which stands in for an attested device) — one
    /// that carried no build as undeclared, so it fails closed where a build is required. Android
    /// keys (whose app identity their attestation proves) and device keys declare none and pass.
    static func admit(_ evidence: AlgorithmEvidence, of owner: KeyOwner?, under policy: AppBuildPolicy?) throws {
        guard let policy, evidence.appBuild != nil || owner?.trustLevel == .appAttest || owner?.trustLevel == .debug
        else { return }
        // An App Attest device's key that signed without an assertion (a key its client attestation
        // names, delivered in `Signature-Key`) declares no build and cannot: where the policy asks
        // anything of a build, it is refused rather than let past checks it gives no fact for.
        if evidence.appBuild == nil, owner?.trustLevel == .appAttest, !policy.isEmpty {
            throw SignetError(
                .appBuildUndeclared,
                "the App Attest device signed without an assertion, which alone declares the app build this route judges"
            )
        }
        try policy.check(evidence.appBuild ?? AppBuild())
    }

    /// `signature_invalid` saying which URL the gateway verified: public facts about the gateway, and
    /// the usual cause — a client that signed `http://127.0.0.1:8080` while the gateway checks
    /// `https://api.example.com` (`publicScheme`, `publicAuthority`) fails here, and nothing else said so.
    static func namingTheURL(_ error: SignetError, of message: some HTTPMessageView) -> SignetError {
        guard let target = message.requestTarget else { return error }
        var named = SignetError(
            error.code,
            "\(error.reason); the gateway verified @scheme \(target.scheme), @authority \(target.authority), @target-uri \(target.targetURI)",
            signatureBase: error.signatureBase
        )
        named.retryAfterSeconds = error.retryAfterSeconds
        return named
    }

    /// Refuses, from its head alone, a request that cannot verify: no signature, one that does not
    /// parse, an unknown or unusable key, an owner the route does not admit
    /// (`MessageVerifier.screen`). Called before the body is read, so such a sender costs no
    /// buffered body; passing it decides nothing, the complete request is still verified.
    nonisolated(nonsending) public func screen(
        _ request: Request,
        receivedTarget: String? = nil,
        requirement: AccessRequirement = .verified,
        signatureKeys: SignatureKeyAcceptance? = nil,
        now: Date
    ) async throws {
        var head = request.head
        if let receivedTarget { head.path = receivedTarget }
        let message = try ServerMessage(request: head, body: ByteBuffer(), scheme: publicScheme, authority: publicAuthority)
        try await verifier(for: message, signatureKeys: signatureKeys, now: now).screen(message, now: now) { record in
            try requirement.authorize(record.owner)
            try riskLimit?.check(record.owner)
        }
    }

    /// The message verifier for `message`: this one, or — where the route takes keys in
    /// `Signature-Key` and the message delivers one — this one with the delivered key found under
    /// its thumbprint, which a signature without `keyid` names.
    nonisolated(nonsending) func verifier(for message: some HTTPMessageView, signatureKeys: SignatureKeyAcceptance?, now: Date) async throws
        -> MessageVerifier
    {
        guard let signatureKeys, let delivered = try await signatureKeys.record(for: message, policy: verifier.policy, now: now)
        else { return verifier }
        var verifier = self.verifier
        verifier.keys = DeliveredKeyResolver(delivered: delivered, others: verifier.keys)
        verifier.fallbackKeyID = delivered.keyID
        // The key is the one delivered: a keyid may name it (its thumbprint), none is required (§4.3).
        verifier.policy.requireKeyID = false
        return verifier
    }

    /// The refusals a client can put right by signing otherwise: answered with `Accept-Signature`.
    static let answeredWithAcceptSignature = SignatureRequest.answeredRefusals

    /// `Accept-Signature` (RFC 9421 §5.1) for a refusal of `request` that the client can put right
    /// by signing otherwise (`answeredWithAcceptSignature`): the components and parameters this
    /// gateway's policy asks of its signature — and `alg_mismatch`, answered with the key named and
    /// the algorithm its record is for. `nil` for any other refusal.
    ///
    /// On a route that takes keys in the request (`signatureKeys`), what such a key's signature
    /// needs besides: from a known agent (the request names a `Signature-Agent`, or the route
    /// takes only agents) `@authority`, its `Signature-Agent` member, `created`, `expires` and a
    /// tag the route takes (Web Bot Auth); with a key in `Signature-Key`, `signature-key` (§7.8).
    public func acceptSignature(
        refusing error: SignetError,
        _ request: Request,
        requirement: AccessRequirement? = nil,
        signatureKeys: SignatureKeyAcceptance? = nil
    ) -> HTTPFields? {
        let named = error.code == .algMismatch ? error.keyAlgorithm : nil
        guard Self.answeredWithAcceptSignature.contains(error.code) || named != nil else { return nil }
        var asked = verifier.policy.signatureRequest(method: request.method.rawValue, hasBody: Self.hasBody(request))
        if let named {
            asked.keyID = named.keyID
            asked.algorithm = named.algorithm
        }
        if let signatureKeys {
            if let agents = signatureKeys.agents, requirement == .trustLevel(.agent) || request.headers[Self.signatureAgentField] != nil {
                if !asked.components.contains(where: { $0.name == "@authority" || $0.name == "@target-uri" }) { asked.components.append(.authority) }
                var member = SFParameters()
                member["key"] = .string(asked.label)
                asked.components.append(ComponentIdentifier(SignatureAgent.fieldName.lowercased(), parameters: member))
                asked.created = true
                asked.expires = true
                asked.tag = agents.tags.contains("web-bot-auth") ? "web-bot-auth" : agents.tags.sorted().first
            } else if !signatureKeys.schemes.isEmpty, request.headers[Self.signatureKeyField] != nil {
                asked.components.append(ComponentIdentifier(SignatureKey.fieldName.lowercased()))
            }
        }
        guard let value = try? SignatureRequest.fieldValue([asked]) else { return nil }
        var fields = HTTPFields()
        fields[Self.acceptSignatureField] = value
        return fields
    }

    /// Whether `request` has a body. HTTP/2 frames a body without either field: there the methods
    /// that carry one are asked to cover it (a digest of an empty body is as good a cover as none).
    static func hasBody(_ request: Request) -> Bool {
        request.headers[.contentLength].map { $0 != "0" }
            ?? (request.headers.contains(.transferEncoding) || [.post, .put, .patch].contains(request.method))
    }

    /// `error` as the client should see it: with `Accept-Signature` where signing otherwise would
    /// put it right, and — on a route that takes keys in `Signature-Key` — the draft's
    /// `Signature-Error` (with `Accept-Signature-Scheme` or `Accept-Signature-Alg` where a scheme or
    /// algorithm was refused); as it is otherwise. A 403 carries none of the draft's fields (§5).
    public func refusal(
        _ error: SignetError,
        for request: Request,
        requirement: AccessRequirement? = nil,
        signatureKeys: SignatureKeyAcceptance? = nil
    ) -> any Error {
        var fields = acceptSignature(refusing: error, request, requirement: requirement, signatureKeys: signatureKeys) ?? HTTPFields()
        if let signatureKeys, !signatureKeys.schemes.isEmpty,
            let signatureError = SignatureErrorField(for: error.code, requiredInput: requiredInput(for: request))
        {
            fields[Self.signatureErrorField] = signatureError.fieldValue
            if error.code == .signatureKeyUnsupported || error.code == .signatureMissing {
                fields[Self.acceptSignatureSchemeField] = signatureKeys.acceptSignatureScheme
            }
            if error.code == .algUnsupported {
                fields[Self.acceptSignatureAlgField] = JOSESignatureAlgorithm.names.joined(separator: ", ")
            }
        }
        guard !fields.isEmpty else { return error }
        return ChallengedRefusal(error, challenges: error.code.httpStatus == 401 ? ["Signature"] : [], fields: fields)
    }

    /// What a signature with a delivered key must cover on `request`: the policy's components and
    /// `signature-key` (§7.8), for `Signature-Error`'s `required_input`.
    func requiredInput(for request: Request) -> [String] {
        let asked = verifier.policy.signatureRequest(method: request.method.rawValue, hasBody: Self.hasBody(request))
        return asked.components.map(\.name) + ["signature-key"]
    }

    public static var signatureErrorField: HTTPField.Name { HTTPField.Name(SignatureErrorField.fieldName)! }
    public static var acceptSignatureSchemeField: HTTPField.Name { HTTPField.Name("Accept-Signature-Scheme")! }
    public static var acceptSignatureAlgField: HTTPField.Name { HTTPField.Name("Accept-Signature-Alg")! }

    public static var acceptSignatureField: HTTPField.Name { HTTPField.Name("Accept-Signature")! }
    static var signatureKeyField: HTTPField.Name { HTTPField.Name(SignatureKey.fieldName)! }
    static var signatureAgentField: HTTPField.Name { HTTPField.Name(SignatureAgent.fieldName)! }

    /// The SignetCore view of `request`, body included (read, bounded, and left in the request).
    nonisolated(nonsending) public func message(for request: inout Request, receivedTarget: String? = nil) async throws -> ServerMessage {
        let body = try await request.collectBody(upTo: maximumBodyBytes, refusing: "a request body")
        return try message(head: request.head, body: body, receivedTarget: receivedTarget)
    }

    /// The message of a request whose body was read already, refused as ``message(for:receivedTarget:)``
    /// refuses one past ``maximumBodyBytes``.
    package func message(head: HTTPRequest, body: ByteBuffer, receivedTarget: String?) throws -> ServerMessage {
        guard body.readableBytes <= maximumBodyBytes else {
            throw SignetError(.bodyTooLarge, "a request body is at most \(maximumBodyBytes) bytes")
        }
        var head = head
        if let receivedTarget { head.path = receivedTarget }
        return try ServerMessage(request: head, body: body, scheme: publicScheme, authority: publicAuthority)
    }
}
