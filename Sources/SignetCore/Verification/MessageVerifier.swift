// SPDX-License-Identifier: Apache-2.0
import Foundation

/// Verifies RFC 9421 signatures under a ``VerificationPolicy`` and applies both replay guards.
///
/// Order of checks: parse and select the signature, check its parameters and time window, look the
/// key up (its record fixes the algorithm and names the owner), authorise the owner for what is
/// asked, build the signature base, check `Content-Digest` against the bytes received, check the
/// signature, admit what it established, and only then claim `(keyid, nonce)` and advance a signed
/// counter — so traffic that fails verification, or is not allowed where it goes, never writes to a
/// store.
///
/// ```swift
/// let verifier = MessageVerifier(keys: ring, nonces: MemoryNonceStore())
/// let verified = try await verifier.verify(request, now: Date())
/// print(verified.keyID, verified.components)
/// ```
public struct MessageVerifier: Sendable {
    public var keys: any KeyResolver
    public var algorithms: SignatureAlgorithms
    public var policy: VerificationPolicy
    /// Where nonces are claimed; `nil` checks no replay (only for offline diagnosis).
    public var nonces: (any NonceStore)?
    /// The key id to use when a signature names none (for tools given `--keyid`).
    public var fallbackKeyID: String?
    /// Where signed counters (App Attest's) are advanced; a signature carrying a counter is refused
    /// when this is `nil`.
    public var counters: (any CounterStore)?
    /// Counters below the highest still accepted once each (``CounterWindow``); 0 is strict.
    public var counterWindow: Int

    public init(
        keys: any KeyResolver,
        algorithms: SignatureAlgorithms = .standard,
        policy: VerificationPolicy = .standard,
        nonces: (any NonceStore)?,
        counters: (any CounterStore)? = nil,
        counterWindow: Int = 0,
        fallbackKeyID: String? = nil
    ) {
        self.keys = keys
        self.algorithms = algorithms
        self.policy = policy
        self.nonces = nonces
        self.counters = counters
        self.counterWindow = counterWindow
        self.fallbackKeyID = fallbackKeyID
    }

    /// Verifies the signature the policy selects.
    ///
    /// - Parameters:
    ///   - message: The message with its body exactly as received.
    ///   - relatedRequest: For a response, the request it answers (for `;req` components).
    ///   - now: The verifier's current time.
    ///   - authorize: Called with each usable key record as soon as the key is known, before any
    ///     cryptography and before a store is written; throw to refuse (`trust_level_insufficient`).
    ///   - admit: Called once the signature verified, with what the algorithm established and the
    ///     key's owner, before the nonce is claimed or a counter advanced; throw to refuse what only
    ///     the signature tells (an App Attest assertion's app build).
    /// - Returns: What was verified.
    /// - Throws: ``SignetError`` with the reason code; past base construction it carries the base.
    nonisolated(nonsending) public func verify(
        _ message: some HTTPMessageView,
        relatedRequest: (any HTTPMessageView)? = nil,
        now: Date,
        authorize: (KeyRecord) throws -> Void = { _ in },
        admit: (AlgorithmEvidence, KeyOwner?) throws -> Void = { _, _ in }
    ) async throws -> VerifiedSignature {
        let fields = try SignatureFields(
            of: message,
            maximumBytes: policy.maximumSignatureHeaderBytes,
            limits: policy.signatureLimits
        )
        // One candidate (nearly every request) is settled without a key lookup or a suspension.
        let candidates = try candidates(from: fields.entries)
        let entry = candidates.count == 1 ? candidates[0] : try await disambiguate(candidates, message: message, now: now)
        try checkParameters(entry.parameters, now: now)
        try checkCoverage(entry.parameters.components, of: message)

        guard let keyID = entry.parameters.keyID ?? fallbackKeyID else {
            throw SignetError(.parameterMissing, "the signature has no keyid")
        }
        let records = try KeyRing.usable(try await keys.records(for: keyID), keyID: keyID, at: now)
        let algorithms = try vet(records, messageAlg: entry.parameters.algorithm, authorize: authorize)

        let base = try SignatureBase(message: message, parameters: entry.parameters, relatedRequest: relatedRequest)
        do {
            try checkDigest(message, components: entry.parameters.components)
            let (evidence, algorithmName, owner) = try firstVerifying(entry.signature, over: base.bytes, records, algorithms)
            try admit(evidence, owner)
            try await claimNonce(entry.parameters, keyID: keyID, now: now)
            if let counter = evidence.counter {
                try await advanceCounter(counter, deviceID: owner?.deviceID ?? keyID)
            }
            return VerifiedSignature(
                label: entry.label,
                keyID: keyID,
                algorithm: algorithmName,
                components: entry.parameters.components,
                created: entry.parameters.created.map { Date(timeIntervalSince1970: TimeInterval($0)) },
                expires: entry.parameters.expires.map { Date(timeIntervalSince1970: TimeInterval($0)) },
                nonce: entry.parameters.nonce,
                tag: entry.parameters.tag,
                owner: owner,
                evidence: evidence,
                signatureBaseBytes: base.bytes
            )
        } catch let error as SignetError {
            throw error.withSignatureBase(base.text)
        }
    }

    /// What can be judged of a request before its body is read, at no store write: its signature
    /// fields are present and parse within the policy's limits, a signature is selected, it names a
    /// key, that key is usable and its owner authorised. A server calls it when the head arrives, so
    /// an unsigned or unknown sender costs no buffered body; the request is still judged in every
    /// respect by ``verify(_:relatedRequest:now:authorize:admit:)`` once it is complete.
    ///
    /// Nothing time-bound is decided here (window, expiry): those belong to the moment the request
    /// is complete.
    ///
    /// - Parameters:
    ///   - message: The request's head; its body is not read.
    ///   - now: For the key's validity only.
    ///   - authorize: As in ``verify(_:relatedRequest:now:authorize:admit:)``.
    nonisolated(nonsending) public func screen(
        _ message: some HTTPMessageView,
        now: Date,
        authorize: (KeyRecord) throws -> Void = { _ in }
    ) async throws {
        let fields = try SignatureFields(
            of: message,
            maximumBytes: policy.maximumSignatureHeaderBytes,
            limits: policy.signatureLimits
        )
        let candidates = try candidates(from: fields.entries)
        // Several candidates are settled by `verify`, which weighs their windows; one is common.
        guard candidates.count == 1 else { return }
        // A covered field that would not reach the application is refused on the head alone.
        try checkDelivered(candidates[0].parameters.components, of: message)
        guard let keyID = candidates[0].parameters.keyID ?? fallbackKeyID else {
            throw SignetError(.parameterMissing, "the signature has no keyid")
        }
        let records = try KeyRing.usable(try await keys.records(for: keyID), keyID: keyID, at: now)
        _ = try vet(records, messageAlg: candidates[0].parameters.algorithm, authorize: authorize)
    }

    // MARK: Steps

    /// The signatures the policy's selection leaves: the labelled one, those with the tag, or all.
    private func candidates(from entries: [SignatureFields.Entry]) throws -> [SignatureFields.Entry] {
        switch policy.selection {
        case .label(let label):
            guard let entry = entries.first(where: { $0.label == label }) else {
                throw SignetError(.signatureMissing, "the message has no signature labelled \(label.debugDescription)")
            }
            return [entry]
        case .tag(let tag):
            let tagged = entries.filter { $0.parameters.tag == tag }
            guard !tagged.isEmpty else {
                throw SignetError(.tagMismatch, "no signature has tag \(tag.debugDescription)")
            }
            return tagged
        case .only:
            // Fields of blanks name none: refused here, before (at the head) a body is read for nothing.
            guard !entries.isEmpty else { throw SignetError(.signatureMissing, "the signature fields name no signature") }
            return entries
        }
    }

    /// Several signatures: keep those that pass the checks that cost nothing (window, parameters,
    /// coverage), then of those the ones whose key this verifier can use now (a signer rolling keys
    /// over attaches one per key): only a signature that could be accepted costs a key lookup. More
    /// than one left is ambiguous, never "any will do".
    nonisolated(nonsending) private func disambiguate(
        _ candidates: [SignatureFields.Entry],
        message: some HTTPMessageView,
        now: Date
    ) async throws -> SignatureFields.Entry {
        var plausible: [SignatureFields.Entry] = []
        var firstRefusal: (any Error)?
        for entry in candidates {
            do {
                try checkParameters(entry.parameters, now: now)
                try checkCoverage(entry.parameters.components, of: message)
                plausible.append(entry)
            } catch {
                firstRefusal = firstRefusal ?? error
            }
        }
        if plausible.isEmpty, let firstRefusal { throw firstRefusal }
        if plausible.count == 1 { return plausible[0] }
        var usable: [SignatureFields.Entry] = []
        for entry in plausible {
            guard let keyID = entry.parameters.keyID ?? fallbackKeyID else { continue }
            let records = try await keys.records(for: keyID)
            if records.contains(where: { $0.isUsable(at: now) }) { usable.append(entry) }
        }
        // None usable: the first one's key says why (unknown, expired, revoked); choosing would not help.
        if usable.isEmpty { return plausible[0] }
        guard usable.count == 1 else {
            throw SignetError(
                .ambiguousSignature,
                "\(candidates.count) signatures match (\(candidates.map(\.label).joined(separator: ", "))); select one by label or tag"
            )
        }
        return usable[0]
    }

    private func checkParameters(_ parameters: SignatureParameters, now: Date) throws {
        if let tag = policy.requiredTag, parameters.tag != tag {
            throw SignetError(.tagMismatch, "the signature's tag is not \(tag.debugDescription)")
        }
        if policy.requireCreated, parameters.created == nil {
            throw SignetError(.parameterMissing, "the signature has no created parameter")
        }
        if policy.requireExpires, parameters.expires == nil {
            throw SignetError(.parameterMissing, "the signature has no expires parameter")
        }
        if policy.requireKeyID, parameters.keyID == nil {
            throw SignetError(.parameterMissing, "the signature has no keyid parameter")
        }
        if policy.requireNonce, parameters.nonce == nil {
            throw SignetError(.nonceMissing, "the signature has no nonce")
        }
        let seconds = Int64(now.timeIntervalSince1970.rounded(.down))
        if let created = parameters.created {
            if created > seconds + policy.clockSkew {
                throw SignetError(.createdInFuture, "created is \(created - seconds) s in the future")
            }
            if let maximumAge = policy.maximumAge, seconds - created > maximumAge + policy.clockSkew {
                throw SignetError(.createdTooOld, "created is \(seconds - created) s old, the limit is \(maximumAge) s")
            }
        }
        if let expires = parameters.expires {
            if let created = parameters.created, expires < created {
                throw SignetError(.malformedHeader, "expires is before created")
            }
            if seconds > expires + policy.clockSkew {
                throw SignetError(.expired, "the signature expired \(seconds - expires) s ago")
            }
        }
    }

    private func checkCoverage(_ components: [ComponentIdentifier], of message: some HTTPMessageView) throws {
        try checkDelivered(components, of: message)
        for rule in policy.componentRules where rule.applies(to: message) {
            let satisfied = rule.oneOf.contains { set in set.allSatisfy(components.contains) }
            if !satisfied {
                let wanted = rule.oneOf.map { $0.map(\.description).joined(separator: " ") }.joined(separator: " | ")
                throw SignetError(.componentNotCovered, "the signature must cover \(wanted)")
            }
        }
    }

    /// Every covered field reaches the application: none that `Connection` names, none the next
    /// hop removes (``VerificationPolicy/removedOnTheWay``). Needs the head only.
    private func checkDelivered(_ components: [ComponentIdentifier], of message: some HTTPMessageView) throws {
        // A field `Connection` names is hop-by-hop (RFC 9110 §7.6.1): the next hop removes it, so a
        // covered one would not reach the application — `Connection: content-type` would strip the
        // type the signature vouched for. Names read as CGI-style servers read them (`_` as `-`).
        let hopByHop = Set(FieldList.members(message.fieldValues("connection")).map(CGIFieldName.folded))
        if !hopByHop.isEmpty,
            let named = components.first(where: { !$0.name.hasPrefix("@") && hopByHop.contains($0.name) })
        {
            throw SignetError(
                .malformedHeader,
                "Connection names \(named.name), which the signature covers: it would not reach the application"
            )
        }
        if let removed = policy.removedOnTheWay,
            let named = components.first(where: { !$0.name.hasPrefix("@") && removed($0.name) })
        {
            throw SignetError(
                .malformedHeader,
                "the signature covers \(named.name), which is removed on the way: it would not reach the application"
            )
        }
    }

    /// The caller's authorisation of each record, then each record's algorithm (the record's,
    /// never the message's), before any cryptography: a client the route would refuse learns
    /// nothing of the key's algorithm. Records are read through a buffer: an array's subscript
    /// copies the whole record (a dozen references) on every access.
    private func vet(
        _ records: [KeyRecord],
        messageAlg: String?,
        authorize: (KeyRecord) throws -> Void
    ) throws -> [any SignatureAlgorithm] {
        try records.withUnsafeBufferPointer { records in
            for index in records.indices { try authorize(records[index]) }
            return try records.indices.map { try algorithm(for: records[$0], messageAlg: messageAlg) }
        }
    }

    /// The first record whose key verifies the signature: what it established, the algorithm's
    /// name and the key's owner.
    private func firstVerifying(
        _ signature: [UInt8],
        over base: [UInt8],
        _ records: [KeyRecord],
        _ algorithms: [any SignatureAlgorithm]
    ) throws -> (AlgorithmEvidence, String, KeyOwner?) {
        try records.withUnsafeBufferPointer { records in
            var lastError: (any Error)?
            for index in records.indices {
                do {
                    let evidence = try algorithms[index].verify(signature, over: base, with: records[index].key)
                    return (evidence, algorithms[index].name, records[index].owner)
                } catch {
                    lastError = error
                }
            }
            throw lastError ?? SignetError(.signatureInvalid, "no key verified")
        }
    }

    private func algorithm(for record: KeyRecord, messageAlg: String?) throws -> any SignatureAlgorithm {
        if let messageAlg, messageAlg != record.algorithm {
            var error = SignetError(.algMismatch, "the message says \(messageAlg), the key is for \(record.algorithm)")
            // Named for registered keys only: an app's own key is what Accept-Signature helps sign
            // with; a shared secret's client has its algorithm built in.
            if let owner = record.owner, owner.trustLevel != .sharedSecret { error.keyAlgorithm = (record.keyID, record.algorithm) }
            throw error
        }
        let algorithm = try algorithms.require(record.algorithm)
        guard algorithm.keyType == record.key.type else {
            throw SignetError(
                .algMismatch,
                "key \(record.keyID) is \(record.key.type.rawValue), not for \(record.algorithm)"
            )
        }
        return algorithm
    }

    private func checkDigest(_ message: some HTTPMessageView, components: [ComponentIdentifier]) throws {
        let covered = components.contains { $0.name == "content-digest" && !$0.isFromRelatedRequest }
        let hasBody = message.bodyByteCount > 0
        guard covered || (policy.requireContentDigest && hasBody) else { return }
        let field = message.combinedField("content-digest")
        if policy.requireContentDigest, hasBody {
            guard field != nil else {
                throw SignetError(.digestMissing, "the message has a body but no Content-Digest")
            }
            guard covered else { throw SignetError(.digestNotCovered, "the signature does not cover content-digest") }
        }
        // A covered digest is always checked against the bytes received, whatever the policy.
        if covered, let field { try message.withBodyBytes { try ContentDigest.verify(field, bodyBytes: $0) } }
    }

    nonisolated(nonsending) private func claimNonce(_ parameters: SignatureParameters, keyID: String, now: Date) async throws {
        guard let nonces, let nonce = parameters.nonce else { return }
        let claimed = try await nonces.claim(
            keyID: keyID,
            nonce: nonce,
            until: nonceExpiry(parameters, now: now),
            now: now
        )
        guard claimed else { throw SignetError(.nonceReplayed, "nonce \(nonce.debugDescription) was already used") }
    }

    nonisolated(nonsending) private func advanceCounter(_ counter: UInt64, deviceID: String) async throws {
        guard let counters else {
            throw SignetError(.counterNotIncreasing, "no store to advance the signed counter in")
        }
        guard try await counters.advanceCounter(deviceID: deviceID, to: counter, window: counterWindow) else {
            throw SignetError(
                .counterNotIncreasing,
                counterWindow == 0
                    ? "counter \(counter) is not above the stored one"
                    : "counter \(counter) was used already or is older than the \(counterWindow)-counter window"
            )
        }
    }

    /// The moment the signature stops being acceptable: no replay can succeed after it.
    func nonceExpiry(_ parameters: SignatureParameters, now: Date) -> Date {
        // The earlier of the two closes, without an array for them (one a verified request).
        var close: Int64?
        if let created = parameters.created, let maximumAge = policy.maximumAge { close = created + maximumAge }
        if let expires = parameters.expires { close = min(close ?? expires, expires) }
        guard let close else {
            return now.addingTimeInterval(TimeInterval(policy.nonceRetentionFallback))
        }
        return Date(timeIntervalSince1970: TimeInterval(close + policy.clockSkew + 1))
    }
}
