// SPDX-License-Identifier: Apache-2.0
import Foundation
import SignetStore

/// The latest refusals grouped by what was refused — reason, status, method and path — with a
/// count, the sources, the instances that refused, the last time, and what an operator would do next: 106 identical rows
/// read as one line.
struct RefusalGroups: Sendable {
    struct Group: Sendable {
        let reason: String
        let status: Int
        let method: String
        let path: String
        let count: Int
        let sources: Int
        /// Forwarded by a `monitor` route: refusals enforcing would have made.
        let monitored: Bool
        /// The instances that refused, by name.
        let instances: [String]
        let last: Date
        let advice: String

        /// The instances as the console shows them: the first three, then how many more.
        var instancesText: String {
            guard !instances.isEmpty else { return "—" }
            let shown = instances.prefix(3).joined(separator: ", ")
            return instances.count > 3 ? "\(shown) +\(instances.count - 3)" : shown
        }
    }

    /// How many of the latest refusals are grouped.
    static let window = 1_000
    /// How many groups are shown.
    static let shown = 20

    let groups: [Group]
    /// Of ``window``, how many refusals there were.
    let total: Int

    init(_ refusals: [RefusalRecord]) {
        var counted: [String: (first: RefusalRecord, count: Int, sources: Set<String>, instances: Set<String>, last: Date)] = [:]
        for refusal in refusals {
            let key = "\(refusal.reason) \(refusal.status) \(refusal.monitored) \(refusal.method) \(refusal.path)"
            var entry = counted[key] ?? (refusal, 0, [], [], refusal.at)
            entry.count += 1
            if let source = refusal.source { entry.sources.insert(source) }
            if let instance = refusal.instance { entry.instances.insert(instance) }
            entry.last = max(entry.last, refusal.at)
            counted[key] = entry
        }
        groups = counted.values.sorted { ($0.count, $0.last) > ($1.count, $1.last) }.prefix(Self.shown).map {
            Group(
                reason: $0.first.reason, status: $0.first.status, method: $0.first.method, path: $0.first.path,
                count: $0.count, sources: $0.sources.count, monitored: $0.first.monitored, instances: $0.instances.sorted(), last: $0.last, advice: RefusalAdvice.nextStep($0.first.reason)
            )
        }
        total = refusals.count
    }
}

/// What an operator does next about a reason code: who is likely at fault and where to look.
enum RefusalAdvice {
    static func nextStep(_ reason: String) -> String {
        advice[reason] ?? "See the reason code in docs/gateway.md; the access log has the request id of each refusal."
    }

    private static let advice: [String: String] = [
        "signature_missing": "An unsigned request to a signed route: a client without the SDK, a scanner, or a route that should be open.",
        "signature_invalid": "The signature does not verify: a proxy rewriting the request (path, Host, body), or a client signing other bytes than it sends.",
        "unknown_key": "A key id no device or secret has: a client whose registration was lost, or one talking to the wrong environment.",
        "key_revoked": "A revoked device still calling: expected after a revocation; many from one source may be a stolen key being tried.",
        "nonce_replayed": "A request sent twice: a client retrying with the same signature, or a replay. After an instance was killed mid-request, a retry gets this and is harmless.",
        "created_too_old": "Signatures older than the window: a client clock behind, or requests held in a queue before sending.",
        "created_in_future": "A client clock ahead of the gateway's: check the devices' time, or the gateway's NTP.",
        "digest_mismatch": "The body is not the one signed: something between client and gateway changes bodies (compression, a proxy).",
        "digest_missing": "The route covers the body and the request carries no Content-Digest: update the client.",
        "component_not_covered": "The signature leaves out a component the route requires: update the client's signing profile.",
        "trust_level_insufficient": "A key below the route's trust level: the route asks for App Attest or Android attestation this client lacks.",
        "rate_limited": "A source past a per-source limit: one client looping, or many behind one address (raise the limit or set trustedProxies).",
        "connection_limit": "A client with too many requests in progress: raise maxConnectionsPerClient for carrier NAT, or find the looping client.",
        "store_unavailable": "The store did not answer in time: see the store's health (signet_store_up) and the runbook 'The store goes away'.",
        "upstream_unavailable": "The upstream failed after being reached: check its logs and timeouts.",
        "upstream_unreachable": "No connection to the upstream could be made: is it running, and is the upstream address right?",
        "client_closed_request": "Clients gave up before their request was complete: slow networks, or a slow store or upstream.",
        "request_too_slow": "Bodies that did not arrive within requestTimeoutSeconds: slow networks, or a slow-body attack.",
        "path_ambiguous": "Paths servers read in different ways (encoded slashes, dot-segments, ';'): scanners, or a client building URLs wrongly.",
        "not_found": "Paths or methods no route serves: scanners, or a route missing from the configuration.",
        "csrf_invalid": "A console change without its form token or from another site: a stale tab, or a cross-site attempt.",
        "admin_unauthorized": "Wrong admin credentials: an operator's typo, or someone guessing (10 a minute per source lock it).",
        "counter_not_increasing": "An App Attest counter that did not grow: a cloned key or a replayed assertion; look at the device.",
        "app_category_refused": "App Attest devices whose app is signed in a category the route refuses: a TestFlight or development build on a store-only route, or a re-signed binary (appCategories).",
        "app_version_refused": "App Attest devices on an app version below minimumAppVersion: users who have not updated yet; raise it only as the new build ships.",
        "signature_key_invalid": "Signature-Key members that do not parse or lack what their scheme needs: a client built against another draft of Signature-Key.",
        "signature_key_unsupported": "Keys delivered in a scheme the route does not take: widen the route's signatureKey, or the client should register its key.",
        "agent_unknown": "Agents naming a key directory no configured agent has: a new bot to add to webBotAuth.agents, or one pretending to be another.",
        "agent_directory_unavailable": "A known agent's key directory cannot be fetched: check the agent's directory URL and the gateway's outbound network.",
        "app_build_undeclared": "App Attest devices on iOS 26 or older (no app build declared) on a route with requireAppBuild: expected until they update.",
        "body_too_large": "Bodies over maxBodyBytes: a client sending uploads to a signed route, or an attack.",
        "body_not_forwarded": "Bodies the proxy in front did not send with its authorization request: forward the body (Traefik forwardBody, Envoy with_request_body), or put signet serve in the path of that route.",
        "header_too_large": "Signature headers over their bound: a broken client or an attack.",
        "dpop_proof_missing": "App tokens sent without a DPoP proof to a dpop route: a client that does not make proofs yet, or a stolen token.",
        "dpop_key_mismatch": "DPoP proofs by another key than the token's: a stolen token used with the thief's key.",
        "dpop_proof_replayed": "A DPoP proof sent twice: a replayed request, or a client that reuses its proofs.",
        "dpop_proof_stale": "DPoP proofs made too long ago or in the future: a client clock that is off (tokens.dpopProofLifetime, policy.clockSkewSeconds).",
        "client_attestation_missing": "Requests to a client-attestation route without OAuth-Client-Attestation and its PoP: a client that does not attest yet.",
        "client_attestation_invalid": "Client attestations this gateway did not issue, for another client id, or of a revoked device: a forged or stolen attestation.",
        "client_attestation_expired": "Client attestations past their exp: a client that does not renew them (clientAttestation.ttlSeconds).",
        "client_attestation_pop_invalid": "Attestation PoPs not signed by the attested key or for another audience: a stolen attestation, or a client that names the wrong server (clientAttestation.audience).",
        "client_attestation_pop_stale": "Attestation PoPs made too long ago or in the future: a client clock that is off (clientAttestation.popLifetime, policy.clockSkewSeconds).",
        "client_attestation_pop_replayed": "An attestation PoP sent twice: a replayed request, or a client that reuses its PoPs.",
    ]
}
