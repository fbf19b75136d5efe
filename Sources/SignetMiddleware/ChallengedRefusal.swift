// SPDX-License-Identifier: Apache-2.0
import HTTPTypes
import SignetCore

/// A refusal that tells the client how to authenticate: the reason code, the `WWW-Authenticate`
/// challenges the answer carries (Digest and Basic for the route, `Signature` where a device may
/// sign instead, `DPoP` for a token bound to a key), and any other fields it needs. A server
/// concern, kept out of SignetCore's error, which the client SDK links: ``ProblemResponse`` writes
/// the challenges and reads the code through ``ProblemResponse/signetError(from:)`` as for any
/// other refusal; ``ProblemMiddleware`` (and a `monitor` route's gate) add the other fields.
public struct ChallengedRefusal: Error, Sendable, CustomStringConvertible {
    /// What went wrong, with its stable code.
    public var error: SignetError
    /// `WWW-Authenticate` values, in the order offered.
    public var challenges: [String]
    /// Other fields the answer carries (DPoP's `DPoP-Nonce`, `Accept-Signature`).
    public var fields: HTTPFields
    /// Fields of the request that never reach the upstream, even when a `monitor` route forwards
    /// the refused request (a DPoP route's token and proof).
    public var withheld: [HTTPField.Name]

    public init(_ error: SignetError, challenges: [String], fields: HTTPFields = [:], withheld: [HTTPField.Name] = []) {
        self.error = error
        self.challenges = challenges
        self.fields = fields
        self.withheld = withheld
    }

    public var description: String { error.description }
}
