// SPDX-License-Identifier: Apache-2.0
import Foundation
import JWTKit
import SignetCore

/// What an app trusts, signed by an offline trust key so it can change without an app release:
/// pin sets per host pattern, and optionally the gateway's Oblivious HTTP key configurations and
/// response-signing keys. Carried as a compact JWS (ES256 or EdDSA), so any JOSE library reads it.
///
/// Times are JWT NumericDates (seconds since 1970), in the claims and in the pin sets alike.
public struct TrustDocument: JWTPayload, Equatable {
    /// Who issued it (the operator's name for its trust key).
    public var iss: IssuerClaim
    public var iat: IssuedAtClaim
    /// After this the document is refused, by the SDK and by the gateway that would serve it.
    public var exp: ExpirationClaim
    /// Only a higher version replaces a document held (rollback refused).
    public var version: Int
    public var pinSets: [PinSetClaim]
    /// `application/ohttp-keys` of the gateway, base64url.
    public var ohttpKeys: String?
    /// The gateway's response-signing public keys, PEM, by key id.
    public var responseKeys: [String: String]?

    public init(
        issuer: String,
        issuedAt: Date,
        expires: Date,
        version: Int,
        pinSets: [PinSetClaim],
        ohttpKeys: [OHTTPKeyConfiguration]? = nil,
        responseKeys: [String: String]? = nil
    ) {
        self.iss = IssuerClaim(value: issuer)
        self.iat = IssuedAtClaim(value: issuedAt)
        self.exp = ExpirationClaim(value: expires)
        self.version = version
        self.pinSets = pinSets
        self.ohttpKeys = ohttpKeys.map { Base64.urlEncode(OHTTPKeyConfiguration.encodeList($0)) }
        self.responseKeys = responseKeys
    }

    public var issuer: String { iss.value }
    public var issuedAt: Date { iat.value }
    public var expires: Date { exp.value }

    /// Expiry is checked by ``TrustKeys/verify(_:now:)`` against the caller's clock, so that tests
    /// and the gateway's start-up check can say what "now" is.
    public func verify(using algorithm: some JWTAlgorithm) async throws {}

    /// The pin sets, as the transport evaluates them.
    public func pinSetValues() throws -> [PinSet] {
        try pinSets.enumerated().map { index, claim in
            do {
                return try claim.pinSet()
            } catch let error as SignetError {
                throw SignetError(.trustDocumentInvalid, "pinSets[\(index)]: \(error.reason)")
            }
        }
    }

    /// The Oblivious HTTP key configurations it carries, if any.
    public func ohttpKeyConfigurations() throws -> [OHTTPKeyConfiguration] {
        guard let ohttpKeys else { return [] }
        guard let bytes = Base64.urlDecode(ohttpKeys) else {
            throw SignetError(.trustDocumentInvalid, "ohttpKeys is not base64url")
        }
        do {
            return try OHTTPKeyConfiguration.decodeList(bytes)
        } catch let error as SignetError {
            throw SignetError(.trustDocumentInvalid, "ohttpKeys: \(error.reason)")
        }
    }
}

/// One pin set in a trust document: what `PinSet` holds, in JSON.
public struct PinSetClaim: Codable, Sendable, Equatable {
    /// `api.example.com`, `*.example.com` (one label) or `**.example.com` (any depth).
    public var host: String
    /// `sha256/<base64>` pins; at least two (one a backup) unless `backupWaived`.
    public var pins: [String]
    /// `enforce` (default) or `report-only`.
    public var mode: String?
    /// `leaf`, `intermediate`, `root` (default: all).
    public var positions: [String]?
    public var softExpiry: Date?
    public var hardExpiry: Date?
    /// `keep-enforcing` (default) or `report-only` after the hard expiry.
    public var hardExpiryBehaviour: String?
    public var backupWaived: Bool?

    public init(
        host: String,
        pins: [String],
        mode: String? = nil,
        softExpiry: Date? = nil,
        hardExpiry: Date? = nil,
        hardExpiryBehaviour: String? = nil
    ) {
        self.host = host
        self.pins = pins
        self.mode = mode
        self.softExpiry = softExpiry
        self.hardExpiry = hardExpiry
        self.hardExpiryBehaviour = hardExpiryBehaviour
    }

    public func pinSet() throws -> PinSet {
        guard let mode = PinSet.Mode(rawValue: mode ?? "enforce") else {
            throw SignetError(.trustDocumentInvalid, "mode is enforce or report-only")
        }
        let positions = try (positions ?? PinSet.Position.allCases.map(\.rawValue)).map { name in
            guard let position = PinSet.Position(rawValue: name) else {
                throw SignetError(.trustDocumentInvalid, "\(name.debugDescription) is not leaf, intermediate or root")
            }
            return position
        }
        var hard: (date: Date, behaviour: PinSet.HardExpiryBehaviour)?
        if let hardExpiry {
            guard let behaviour = PinSet.HardExpiryBehaviour(rawValue: hardExpiryBehaviour ?? "keep-enforcing") else {
                throw SignetError(.trustDocumentInvalid, "hardExpiryBehaviour is keep-enforcing or report-only")
            }
            hard = (hardExpiry, behaviour)
        }
        return try PinSet(
            pattern: try HostPattern(host),
            pins: Set(try pins.map(SPKIPin.init(parsing:))),
            positions: Set(positions),
            mode: mode,
            softExpiry: softExpiry,
            hardExpiry: hard,
            backupWaived: backupWaived ?? false
        )
    }
}
