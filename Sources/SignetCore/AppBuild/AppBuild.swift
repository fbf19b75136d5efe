// SPDX-License-Identifier: Apache-2.0

/// What an App Attest device says of the app binary that signed: how the binary was signed (its
/// ``AppValidationCategory``) and its `CFBundleVersion`.
///
/// From iOS 27 the device writes both into the authenticator data of the attestation and of every
/// assertion (the extensions `apple_validation_category_01` and `apple_bundle_version_01`), signed
/// with the rest: a re-signed App Store binary reports another category on each request. iOS 26 and
/// older write neither; such a build is *undeclared*, and an ``AppBuildPolicy`` says what that means.
public struct AppBuild: Sendable, Hashable {
    /// How the binary was signed, where the device wrote it.
    public var category: AppValidationCategory?
    /// `CFBundleVersion` as the device wrote it (at most ``maximumVersionBytes``).
    public var bundleVersion: String?

    /// Longer bundle versions are refused as malformed: Apple's are a few short numbers.
    public static let maximumVersionBytes = 64

    public init(category: AppValidationCategory? = nil, bundleVersion: String? = nil) {
        self.category = category
        self.bundleVersion = bundleVersion
    }

    /// Whether the device wrote neither fact (iOS 26 and older).
    public var isUndeclared: Bool { category == nil && bundleVersion == nil }
}
