// SPDX-License-Identifier: Apache-2.0
import Foundation
import SignetCore

/// What App Transport Security lets the app do with a host's server trust, read from the app's
/// `NSAppTransportSecurity` (Info.plist).
///
/// A private root (``ServerTrustEvaluator/Roots/only(_:)`` or ``ServerTrustEvaluator/Roots/systemAnd(_:)``:
/// a company CA, the development gateway's certificate) is accepted by Signet on the connection's
/// own `SecTrust`; ATS still refuses the handshake afterwards — a trust the system would not grant
/// is "loosening" — unless the host has an exception that allows it (Apple's "Performing manual
/// server trust authentication"): `NSExceptionAllowsInsecureHTTPLoads` for the domain, which does
/// not lower the TLS version or forward-secrecy requirements, or `NSAllowsArbitraryLoads`.
/// The client names the missing exception when a connection fails that way, and logs it when the
/// transport is made.
struct AppTransportSecurity: Sendable {
    struct Exception: Sendable {
        var includesSubdomains: Bool
        var allowsInsecureHTTPLoads: Bool
    }

    var allowsArbitraryLoads: Bool
    var exceptions: [String: Exception]

    /// From the app's Info.plist dictionary (`Bundle.main.infoDictionary`).
    init(infoDictionary: [String: Any]?) {
        let ats = infoDictionary?["NSAppTransportSecurity"] as? [String: Any] ?? [:]
        // Any of the more specific keys makes the system ignore NSAllowsArbitraryLoads (iOS 10+).
        let specific = ["NSAllowsArbitraryLoadsInWebContent", "NSAllowsArbitraryLoadsForMedia", "NSAllowsLocalNetworking"]
        allowsArbitraryLoads = Self.flag(ats["NSAllowsArbitraryLoads"]) && !specific.contains { ats[$0] != nil }
        var exceptions: [String: Exception] = [:]
        for (domain, value) in ats["NSExceptionDomains"] as? [String: Any] ?? [:] {
            let entry = value as? [String: Any] ?? [:]
            exceptions[domain.lowercased()] = Exception(
                includesSubdomains: Self.flag(entry["NSIncludesSubdomains"]),
                allowsInsecureHTTPLoads: Self.flag(entry["NSExceptionAllowsInsecureHTTPLoads"])
            )
        }
        self.exceptions = exceptions
    }

    /// Whether ATS lets the app accept a chain the system would not, for `host`.
    func allowsCustomTrust(for host: String) -> Bool {
        if allowsArbitraryLoads { return true }
        let host = host.lowercased()
        if let exact = exceptions[host] { return exact.allowsInsecureHTTPLoads }
        // The closest parent domain that includes its subdomains decides.
        var labels = host.split(separator: ".").dropFirst()
        while !labels.isEmpty {
            if let parent = exceptions[labels.joined(separator: ".")], parent.includesSubdomains {
                return parent.allowsInsecureHTTPLoads
            }
            labels = labels.dropFirst()
        }
        return false
    }

    /// The configured https origins whose private roots ATS would refuse: none when the roots are
    /// the system's.
    func refusedPrivateRoots(origins: [Origin], roots: ServerTrustEvaluator.Roots) -> [Origin] {
        if case .system = roots { return [] }
        return origins.filter { $0.scheme == "https" && !allowsCustomTrust(for: $0.host) }
    }

    /// What to add to Info.plist for `host`, said exactly.
    static func exceptionNeeded(for host: String) -> String {
        "App Transport Security refused the private root Signet accepted for \(host): add "
            + "NSAppTransportSecurity > NSExceptionDomains > \(host) > NSExceptionAllowsInsecureHTTPLoads = YES "
            + "to Info.plist (it keeps ATS's TLS requirements; see docs/ios.md, \"Private roots\")"
    }

    private static func flag(_ value: Any?) -> Bool {
        (value as? Bool) ?? ((value as? NSNumber)?.boolValue ?? false)
    }
}
