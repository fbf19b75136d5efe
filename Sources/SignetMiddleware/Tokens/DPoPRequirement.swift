// SPDX-License-Identifier: Apache-2.0

/// What a route asks of the DPoP proofs that come with its tokens.
public struct DPoPRequirement: Sendable, Hashable {
    /// Each proof must carry a nonce this gateway issued recently (RFC 9449 §9), which bounds how
    /// far ahead of use a proof can be made.
    public var requireNonce: Bool

    public init(requireNonce: Bool = false) {
        self.requireNonce = requireNonce
    }
}
