// SPDX-License-Identifier: Apache-2.0
import Foundation
import SignetCore

/// The app-build policy (iOS 27's validation category and bundle version), as `appAttest` gives it
/// for the whole gateway and as a route's options replace it.
extension GatewayConfiguration {
    /// The route options that name an app-build policy, on the signature modes that admit only
    /// attested devices (`app-attest`, `attested`).
    static let appBuildOptions: [AccessMode.Option] = [
        AccessMode.Option(name: "appCategories", kind: .string),
        AccessMode.Option(name: "minimumAppVersion", kind: .string),
        AccessMode.Option(name: "requireAppBuild", kind: .bool),
    ]

    /// An app-build policy from its three settings, each checked; `nil` when none is given.
    ///
    /// - Throws: ``ConfigurationError`` naming `at` for an unknown category or a version that is not
    ///   numbers.
    static func appBuildPolicy(
        categories: [String]?,
        minimumVersion: String?,
        requireDeclared: Bool?,
        at: String
    ) throws -> AppBuildPolicy? {
        guard categories != nil || minimumVersion != nil || requireDeclared != nil else { return nil }
        var policy = AppBuildPolicy(requireDeclared: requireDeclared ?? false)
        if let categories {
            guard !categories.isEmpty else {
                throw ConfigurationError.invalid("\(at).appCategories", "\(at).appCategories names at least one category")
            }
            policy.categories = Set(
                try categories.map { name in
                    guard let category = AppValidationCategory(name: name) else {
                        let known = AppValidationCategory.names.map(\.1).joined(separator: ", ")
                        throw ConfigurationError.invalid(
                            "\(at).appCategories",
                            "\(at).appCategories: \(name.debugDescription) is not a validation category (\(known), or a number)"
                        )
                    }
                    return category
                }
            )
        }
        if let minimumVersion {
            guard let version = BundleVersion(minimumVersion) else {
                throw ConfigurationError.invalid(
                    "\(at).minimumAppVersion",
                    "\(at).minimumAppVersion is a CFBundleVersion of numbers and periods (42, 2.1.0)"
                )
            }
            policy.minimumBundleVersion = version
        }
        return policy
    }

    /// The policy a route of a signature mode applies: `appAttest`'s, with each setting the route
    /// gives in its place (`appCategories` as a comma-separated list). `nil` when neither says
    /// anything, and when the route says nothing (the request verifier then applies `appAttest`'s).
    static func appBuildPolicy(
        for access: Route.Access,
        _ configuration: GatewayConfiguration,
        at: String
    ) throws -> AppBuildPolicy? {
        let categories = access.string("appCategories")
        let minimum = access.string("minimumAppVersion")
        let required: Bool? = access.options["requireAppBuild"] == nil ? nil : access.flag("requireAppBuild")
        guard categories != nil || minimum != nil || required != nil else { return nil }
        let app = configuration.appAttest
        return try appBuildPolicy(
            categories: categories.map { $0.split(separator: ",", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) } }
                ?? app?.appCategories,
            minimumVersion: minimum ?? app?.minimumAppVersion,
            requireDeclared: required ?? app?.requireAppBuild,
            at: at
        )
    }
}

extension GatewayConfiguration.AppAttest {
    /// This section's app-build policy, checked; `nil` when it gives none.
    func appBuildPolicy(at: String) throws -> AppBuildPolicy? {
        try GatewayConfiguration.appBuildPolicy(
            categories: appCategories,
            minimumVersion: minimumAppVersion,
            requireDeclared: requireAppBuild,
            at: at
        )
    }
}
