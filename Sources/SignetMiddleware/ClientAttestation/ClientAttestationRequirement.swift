// SPDX-License-Identifier: Apache-2.0

/// What a route asks of the client attestations its requests carry.
public struct ClientAttestationRequirement: Sendable, Hashable {
    /// This server's identifier, which each PoP's `aud` must be (the draft's RFC 9728 resource
    /// identifier for a resource server, the RFC 8414 issuer for an authorization server).
    public var audience: String
    /// Each PoP must carry a challenge this gateway issued recently (§7), which bounds how far
    /// ahead of use a proof can be made; every answer of the route carries a fresh one.
    public var requireChallenge: Bool
    /// `OAuth-Client-Attestation` and its PoP reach the upstream, for an authorization server behind
    /// the gateway that authenticates the client itself (`attest_jwt_client_auth`); withheld
    /// otherwise, the identity fields speaking for them.
    public var forward: Bool

    public init(audience: String, requireChallenge: Bool = false, forward: Bool = false) {
        self.audience = audience
        self.requireChallenge = requireChallenge
        self.forward = forward
    }
}
