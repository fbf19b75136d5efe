// SPDX-License-Identifier: Apache-2.0

/// Which app builds a route (or registration) accepts, judged from the ``AppBuild`` an App Attest
/// device signed into its attestation or assertion.
///
/// ```swift
/// let policy = AppBuildPolicy(categories: [.appStore, .testFlight], minimumBundleVersion: BundleVersion("42"))
/// try policy.check(AppBuild(category: .development, bundleVersion: "57"))  // app_category_refused
/// ```
public struct AppBuildPolicy: Sendable, Hashable {
    /// The categories accepted; any when `nil`.
    public var categories: Set<AppValidationCategory>?
    /// The lowest `CFBundleVersion` accepted; any when `nil`.
    public var minimumBundleVersion: BundleVersion?
    /// Whether a device that writes no category or no bundle version (iOS 26 and older) is refused
    /// (`app_build_undeclared`). When `false` such a device passes every check it gives no fact for:
    /// the policy can only judge what the device says.
    public var requireDeclared: Bool

    public init(
        categories: Set<AppValidationCategory>? = nil,
        minimumBundleVersion: BundleVersion? = nil,
        requireDeclared: Bool = false
    ) {
        self.categories = categories
        self.minimumBundleVersion = minimumBundleVersion
        self.requireDeclared = requireDeclared
    }

    /// Whether the policy asks anything at all.
    public var isEmpty: Bool { categories == nil && minimumBundleVersion == nil && !requireDeclared }

    /// Throws `app_build_undeclared`, `app_category_refused` or `app_version_refused` (all 403) for a
    /// build this policy does not accept.
    public func check(_ build: AppBuild) throws {
        if requireDeclared, build.category == nil || build.bundleVersion == nil {
            let missing = build.category == nil ? "apple_validation_category_01" : "apple_bundle_version_01"
            throw SignetError(
                .appBuildUndeclared,
                "the device wrote no \(missing) (iOS 26 and older write none) and this route requires it"
            )
        }
        if let categories, let category = build.category, !categories.contains(category) {
            let allowed = categories.map(\.name).sorted().joined(separator: ", ")
            throw SignetError(.appCategoryRefused, "the app is signed as \(category.name); this route accepts \(allowed)")
        }
        if let minimum = minimumBundleVersion, let text = build.bundleVersion {
            guard let version = BundleVersion(text) else {
                throw SignetError(.appVersionRefused, "the app's bundle version is not numbers to compare with \(minimum)")
            }
            guard version >= minimum else {
                throw SignetError(.appVersionRefused, "the app's bundle version \(version) is below \(minimum)")
            }
        }
    }
}
