// SPDX-License-Identifier: Apache-2.0
import Foundation
import SignetCore

/// Where a known agent's key directory comes from: fetched and cached by the gateway.
public protocol AgentDirectorySource: Sendable {
    /// The directory at `url`, as cached or fetched now.
    ///
    /// - Throws: `agent_directory_unavailable` when it cannot be fetched and no copy is cached.
    func directory(at url: String, now: Date) async throws -> AgentKeyDirectory
}

/// The known agents a route takes (Web Bot Auth, draft-ietf-webbotauth-httpsig-protocol after -01):
/// a request whose signature carries one of ``tags`` and whose `Signature-Agent` names the
/// directory of a configured agent is verified with the key that directory publishes under the
/// signature's `keyid` (its RFC 7638 thumbprint). Its owner is `TrustLevel.agent`, named by the
/// configuration's name for it, which the upstream reads as `Signet-Agent`.
public struct AgentAcceptance: Sendable {
    /// Directory URL (as `SignatureAgent.directoryURL(_:)` writes it) → the agent's name.
    public let agents: [String: String]
    /// The `tag` values taken: `web-bot-auth`, and profiles of it such as Visa's
    /// `agent-browser-auth` and `agent-payer-auth`.
    public let tags: Set<String>
    /// The longest `expires - created` taken (the draft recommends 24 hours at most).
    public let maximumValidity: TimeInterval
    let source: any AgentDirectorySource

    public init(agents: [String: String], tags: Set<String>, maximumValidity: TimeInterval, source: any AgentDirectorySource) {
        self.agents = agents
        self.tags = tags
        self.maximumValidity = maximumValidity
        self.source = source
    }

    /// The key record for `entry`, the request's one signature, when `Signature-Agent` names an agent
    /// for it; `nil` when the request names none.
    ///
    /// - Throws: `tag_mismatch`, `parameter_missing`, `expired`, `component_not_covered`,
    ///   `agent_unknown`, `agent_directory_unavailable`, `unknown_key`.
    func record(for entry: SignatureFields.Entry, agentField values: [String], now: Date) async throws -> KeyRecord? {
        guard let (url, legacy) = try SignatureAgent.directory(for: entry.label, in: values) else { return nil }
        let parameters = entry.parameters
        guard let tag = parameters.tag, tags.contains(tag) else {
            throw SignetError(.tagMismatch, "an agent's signature carries one of the tags \(tags.sorted().joined(separator: ", "))")
        }
        guard let created = parameters.created, let expires = parameters.expires, let keyID = parameters.keyID else {
            throw SignetError(.parameterMissing, "an agent's signature gives created, expires and keyid")
        }
        guard TimeInterval(expires - created) <= maximumValidity else {
            throw SignetError(.expired, "an agent's signature may be valid for \(Int(maximumValidity)) s at most")
        }
        // The member naming the directory is under the signature (§5.2.1), and so is the target.
        let agentCovered = parameters.components.contains { component in
            component.name == "signature-agent" && (legacy || component.parameters["key"] == .string(entry.label))
        }
        guard agentCovered, parameters.components.contains(where: { $0.name == "@authority" || $0.name == "@target-uri" }) else {
            throw SignetError(
                .componentNotCovered,
                "an agent's signature covers @authority (or @target-uri) and its Signature-Agent member"
            )
        }
        guard let name = agents[url] else {
            throw SignetError(.agentUnknown, "Signature-Agent names a directory of no agent this route takes")
        }
        let directory = try await source.directory(at: url, now: now)
        guard let published = directory.keys[keyID] else {
            throw SignetError(.unknownKey, "the agent \(name) publishes no key \(keyID.debugDescription)")
        }
        return KeyRecord(
            keyID: keyID,
            algorithm: published.algorithm,
            key: published.key,
            notBefore: published.notBefore,
            notAfter: published.notAfter,
            owner: KeyOwner(trustLevel: .agent, agent: name)
        )
    }
}
