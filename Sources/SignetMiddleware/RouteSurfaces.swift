// SPDX-License-Identifier: Apache-2.0

/// Which of Signet's endpoints a router serves: what apps call (challenges, registration, tokens,
/// pin reports), what operators call (device and user administration, pin-report listing), or
/// both on one listener.
///
/// The gateway serves the operator surface on a listener of its own when one is configured, so
/// that nothing the upstream serves on the apps' origin shares an origin with the console.
public struct RouteSurfaces: OptionSet, Sendable, Hashable {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }

    /// The endpoints apps call.
    public static let client = RouteSurfaces(rawValue: 1)
    /// The endpoints behind the admin credentials.
    public static let `operator` = RouteSurfaces(rawValue: 2)
    public static let all: RouteSurfaces = [.client, .operator]
}
