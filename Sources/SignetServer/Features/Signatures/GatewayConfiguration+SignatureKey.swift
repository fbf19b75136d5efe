// SPDX-License-Identifier: Apache-2.0
import Foundation
import SignetCore
import SignetMiddleware

/// A signature route's `signatureKey` option: the `Signature-Key` schemes it takes
/// (draft-hardt-httpbis-signature-key-08), `hwk`, `jwt` or both, comma-separated.
extension GatewayConfiguration {
    static let signatureKeyOption = AccessMode.Option(name: "signatureKey", kind: .string)

    /// The schemes a route's `signatureKey` names; `nil` when it names none.
    ///
    /// - Throws: ``ConfigurationError`` at `at` for an unknown scheme, `hwk` on a route above
    ///   `verified` (its keys are pseudonymous: such a route refuses every one), and `jwt` without
    ///   `clientAttestation` (whose attestations are the JWTs taken).
    static func signatureKeySchemes(
        for access: Route.Access,
        _ configuration: GatewayConfiguration,
        at: String
    ) throws -> Set<SignatureKeyAcceptance.Scheme>? {
        guard let text = access.string(signatureKeyOption.name) else { return nil }
        let names = text.split(separator: ",", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
        let schemes = Set(
            try names.map { name in
                guard let scheme = SignatureKeyAcceptance.Scheme(rawValue: name) else {
                    throw ConfigurationError.invalid(
                        "\(at).signatureKey", "\(at).signatureKey: \(name.debugDescription) is not a scheme Signet takes (hwk, jwt)")
                }
                return scheme
            }
        )
        if schemes.contains(.hwk), access.mode != "verified" {
            throw ConfigurationError.invalid(
                "\(at).signatureKey",
                "\(at).signatureKey: hwk keys are pseudonymous, below every trust level: only a verified route takes them"
            )
        }
        if schemes.contains(.jwt), configuration.clientAttestation == nil {
            throw ConfigurationError.invalid(
                "\(at).signatureKey", "\(at).signatureKey: jwt keys are client attestations, and clientAttestation is not configured")
        }
        return schemes
    }
}
