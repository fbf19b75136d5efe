// SPDX-License-Identifier: Apache-2.0

/// Which hosts a pin set applies to: `api.example.com` (exactly), `*.example.com` (one more label),
/// `**.example.com` (any depth below, not the domain itself). Case-insensitive.
public struct HostPattern: Sendable, Hashable, CustomStringConvertible {
    public enum Kind: Sendable, Hashable {
        case exact, oneLabel, anyDepth
    }

    public let kind: Kind
    /// The domain part, lowercased, without the wildcard.
    public let domain: String

    public init(_ pattern: String) throws {
        let lowered = pattern.lowercased()
        if lowered.hasPrefix("**.") {
            (kind, domain) = (.anyDepth, String(lowered.dropFirst(3)))
        } else if lowered.hasPrefix("*.") {
            (kind, domain) = (.oneLabel, String(lowered.dropFirst(2)))
        } else {
            (kind, domain) = (.exact, lowered)
        }
        guard !domain.isEmpty, !domain.contains("*"), !domain.hasPrefix("."), !domain.hasSuffix(".") else {
            throw SignetError(.malformedHeader, "invalid host pattern \(pattern.debugDescription)")
        }
    }

    public func matches(_ host: String) -> Bool {
        let host = host.lowercased()
        switch kind {
        case .exact: return host == domain
        case .oneLabel:
            guard host.hasSuffix("." + domain) else { return false }
            let label = host.dropLast(domain.count + 1)
            return !label.isEmpty && !label.contains(".")
        case .anyDepth:
            return host.hasSuffix("." + domain) && host.count > domain.count + 1
        }
    }

    public var description: String {
        switch kind {
        case .exact: domain
        case .oneLabel: "*." + domain
        case .anyDepth: "**." + domain
        }
    }
}
