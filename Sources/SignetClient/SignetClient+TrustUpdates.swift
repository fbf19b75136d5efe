// SPDX-License-Identifier: Apache-2.0
import Foundation
import Logging
import SignetCore
import SignetTrust

/// Signed trust documents: pin sets that change without an app release, taken only over a
/// connection the current pins accept, only when signed by a compiled-in trust key, newer than the
/// one held and not expired. Whatever goes wrong, the document held stays in force and the refusal
/// is reported home (a `trust_update_refused` report on the pin-report channel).
extension SignetClient {
    /// The document to start from: the stored one when it still verifies and is newer than the one
    /// compiled in, else the compiled-in one; its pin sets then apply to new connections.
    @discardableResult
    public func loadTrust() async throws -> TrustDocument? {
        guard let updates = configuration.trustUpdates else { return nil }
        let keys = try await trustKeyCollection(updates)
        var best: TrustDocument?
        // A compiled-in document past its expiry still says what the app shipped with; its pin sets'
        // hard-expiry setting decides what happens after it (see PinSet).
        if let compiled = updates.compiledDocument {
            best = try await keys.verify(compiled, now: .distantPast)
        }
        if let stored = try? updates.store?.load(), let document = try? await keys.verify(stored, now: clock()),
            document.version > best?.version ?? Int.min
        {
            best = document
        }
        if let best { try apply(best) }
        return best
    }

    /// Fetches the gateway's document over a connection that passes the pins in force and takes it
    /// if it is signed by a trust key, newer than the one held and not expired.
    @discardableResult
    public func updateTrust(origin: Origin? = nil) async -> TrustUpdateOutcome {
        let origin = origin ?? configuration.origins[0]
        do {
            guard let updates = configuration.trustUpdates else {
                throw SignetError(.trustDocumentInvalid, "no trust keys are configured")
            }
            if trustDocument == nil { try await loadTrust() }
            let keys = try await trustKeyCollection(updates)
            let raw = try await exchange(TransportRequest(origin: origin, method: "GET", path: updates.path))
            guard raw.status == 200 else {
                throw SignetError(.trustDocumentInvalid, "the gateway answered \(raw.status) for its trust document")
            }
            let jws = String(decoding: raw.body, as: UTF8.self)
            let document = try await keys.verify(jws, now: clock())
            _ = try document.pinSetValues()
            if let held = trustDocument {
                if document.version == held.version, document == held { return .unchanged(version: held.version) }
                guard document.version > held.version else {
                    throw SignetError(
                        .trustVersionRollback,
                        "version \(document.version) is not above the \(held.version) held"
                    )
                }
            }
            try apply(document)
            configuration.logger.debug("trust document applied", metadata: ["version": "\(document.version)", "origin": "\(origin)"])
            // Applied first: a store that cannot write (a Keychain without its entitlement, a full
            // disk) costs the next launch a fetch, not this run the newer pins.
            do {
                try updates.store?.save(jws)
                trustStoreFailure = nil
            } catch {
                trustStoreFailure = (error as? SignetError) ?? SignetError(.trustDocumentInvalid, "cannot store the trust document: \(error)")
            }
            return .updated(version: document.version)
        } catch {
            let refusal = (error as? SignetError) ?? SignetError(.connectionFailed, "\(error)")
            recordTrustRefusal(refusal, origin: origin)
            await deliverPinReports()
            return .refused(refusal)
        }
    }

    // MARK: Helpers

    private func trustKeyCollection(_ updates: TrustUpdates) async throws -> TrustKeys {
        if let trustKeys { return trustKeys }
        let keys = try await TrustKeys(publicKeys: updates.trustKeys)
        trustKeys = keys
        return keys
    }

    /// The document's pin sets replace the configured ones for the hosts it names; its OHTTP and
    /// response-signing keys, when it names any, replace the configured ones.
    private func apply(_ document: TrustDocument) throws {
        let pinSets = try document.pinSetValues()
        let named = Set(pinSets.map(\.pattern))
        trust.pinSets = pinSets + configuration.trust.pinSets.filter { !named.contains($0.pattern) }
        trustDocument = document
        if let keys = try? document.ohttpKeyConfigurations(), !keys.isEmpty { obliviousKeys = keys }
        if let named = document.responseKeys, !named.isEmpty {
            responseKeys = KeyRing(
                try named.sorted(by: { $0.key < $1.key }).map { keyID, pem in
                    let key = try VerificationKey(pem: pem)
                    return KeyRecord(keyID: keyID, algorithm: key.type.defaultAlgorithm, key: key)
                }
            )
        }
        liveTrust.update(pinSets: trust.pinSets, responseKeys: responseKeys)
    }

    private func recordTrustRefusal(_ refusal: SignetError, origin: Origin) {
        var report: [String: Any] = [
            "type": "trust_update_refused", "hostname": origin.host, "port": origin.port,
            "reason": refusal.code.rawValue, "detail": refusal.reason,
            "date-time": ISO8601DateFormatter().string(from: clock()),
        ]
        if let held = trustDocument?.version { report["version-held"] = held }
        guard let json = try? JSONSerialization.data(withJSONObject: report, options: [.sortedKeys]) else { return }
        pendingPinReports.append(Array(json))
        if pendingPinReports.count > Self.maximumPendingPinReports { pendingPinReports.removeFirst() }
    }
}
