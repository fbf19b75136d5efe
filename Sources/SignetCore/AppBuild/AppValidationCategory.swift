// SPDX-License-Identifier: Apache-2.0

/// How an app binary was signed, as Apple's code signing classifies it (the validation categories
/// of `es_cs_validation_category_t` and LightweightCodeRequirements' `ValidationCategory`), which
/// App Attest writes as `apple_validation_category_01` from iOS 27.
///
/// A value Signet does not name yet is kept by number (``name`` is then the decimal number), so a
/// category Apple adds later reaches the upstream and can be allowed by number before Signet names it.
public struct AppValidationCategory: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    public var rawValue: UInt32

    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// Signed by Apple, or allowed by a loaded trust cache: the operating system's own code.
    public static let platform = Self(rawValue: 1)
    /// Signed by Apple's TestFlight certificate.
    public static let testFlight = Self(rawValue: 2)
    /// Signed with an Apple-issued development certificate.
    public static let development = Self(rawValue: 3)
    /// Signed by the App Store.
    public static let appStore = Self(rawValue: 4)
    /// Signed with an Apple-issued distribution certificate, run through a provisioning profile
    /// (enterprise and ad hoc distribution).
    public static let enterprise = Self(rawValue: 5)
    /// Signed with a Developer ID certificate.
    public static let developerID = Self(rawValue: 6)
    /// Signed locally (ad hoc, on the machine itself).
    public static let localSigning = Self(rawValue: 7)
    /// Translated by Rosetta.
    public static let rosetta = Self(rawValue: 8)
    /// Out-of-process just-in-time code.
    public static let outOfProcessJIT = Self(rawValue: 9)
    /// No validation category.
    public static let none = Self(rawValue: 10)

    /// The names configuration and the upstream use, by value.
    public static let names: [(Self, String)] = [
        (.platform, "platform"), (.testFlight, "testflight"), (.development, "development"),
        (.appStore, "app-store"), (.enterprise, "enterprise"), (.developerID, "developer-id"),
        (.localSigning, "local-signing"), (.rosetta, "rosetta"), (.outOfProcessJIT, "oop-jit"), (.none, "none"),
    ]

    /// `app-store`, or the decimal number for a category without a name.
    public var name: String { Self.names.first { $0.0 == self }?.1 ?? String(rawValue) }

    public var description: String { name }

    /// A category by its ``name`` or its decimal number; `nil` for anything else.
    public init?(name: String) {
        if let named = Self.names.first(where: { $0.1 == name }) {
            self = named.0
        } else if let number = UInt32(name), name.utf8.allSatisfy({ (0x30...0x39).contains($0) }) {
            self.init(rawValue: number)
        } else {
            return nil
        }
    }
}
