// SPDX-License-Identifier: Apache-2.0
import Foundation

/// The pins for one host pattern, and what to do when they do not match.
///
/// A set must hold a backup pin — one not in the live chain, for the key that will replace the
/// current one — unless the configuration waives it explicitly; a set without one locks clients out
/// at the next key change. Expiry never silently turns pinning off: past the soft date the set keeps
/// enforcing and asks for a refresh; past the optional hard date it does what `hardExpiry` says.
public struct PinSet: Sendable {
    /// Where in the served chain a pin may match.
    public enum Position: String, Sendable, Hashable, CaseIterable {
        case leaf, intermediate, root
    }

    public enum Mode: String, Sendable, Hashable {
        /// A mismatch refuses the connection (and is reported).
        case enforce
        /// A mismatch is reported; the connection goes ahead.
        case reportOnly = "report-only"
    }

    /// What happens after the hard expiry date.
    public enum HardExpiryBehaviour: String, Sendable, Hashable {
        /// Keep enforcing; connections fail if the pins went stale (safe, may lock out).
        case keepEnforcing = "keep-enforcing"
        /// Switch to report-only (available, no longer pinned).
        case reportOnly = "report-only"
    }

    public var pattern: HostPattern
    public var pins: Set<SPKIPin>
    public var positions: Set<Position>
    public var mode: Mode
    public var softExpiry: Date?
    public var hardExpiry: (date: Date, behaviour: HardExpiryBehaviour)?
    public var backupWaived: Bool

    public init(
        pattern: HostPattern,
        pins: Set<SPKIPin>,
        positions: Set<Position> = Set(Position.allCases),
        mode: Mode = .enforce,
        softExpiry: Date? = nil,
        hardExpiry: (date: Date, behaviour: HardExpiryBehaviour)? = nil,
        backupWaived: Bool = false
    ) throws {
        guard !pins.isEmpty else { throw SignetError(.malformedHeader, "a pin set needs pins") }
        guard pins.count >= 2 || backupWaived else {
            throw SignetError(.malformedHeader, "a pin set needs a backup pin (or an explicit waiver)")
        }
        guard !positions.isEmpty else { throw SignetError(.malformedHeader, "a pin set needs a chain position") }
        self.pattern = pattern
        self.pins = pins
        self.positions = positions
        self.mode = mode
        self.softExpiry = softExpiry
        self.hardExpiry = hardExpiry
        self.backupWaived = backupWaived
    }

    /// Evaluates a chain (DER, leaf first) that already passed chain and hostname validation.
    ///
    /// - Parameters:
    ///   - chain: The validated chain (leaf to root): positions and pins are taken from it.
    ///   - servedChain: What the server sent, for the report; `chain` when `nil`.
    ///   - host: The host name connected to, for the report.
    ///   - port: The port connected to, for the report.
    ///   - now: The client's time, against the pin set's soft and hard expiry.
    public func evaluate(
        chain: [[UInt8]],
        servedChain: [[UInt8]]? = nil,
        host: String,
        port: Int = 443,
        now: Date
    ) -> PinEvaluation {
        var seen: [PinEvaluation.SeenPin] = []
        var parseFailure = false
        for (index, der) in chain.enumerated() {
            let position: Position = index == 0 ? .leaf : index == chain.count - 1 ? .root : .intermediate
            if let pin = try? SPKIPin(certificateDER: der) {
                seen.append(.init(position: position, pin: pin))
            } else {
                parseFailure = true
            }
        }
        let matched = !parseFailure && seen.contains { positions.contains($0.position) && pins.contains($0.pin) }
        let noBackup = !backupWaived && pins.allSatisfy { pin in seen.contains { $0.pin == pin } }
        let refresh = softExpiry.map { now >= $0 } ?? false
        var effectiveMode = mode
        if let hardExpiry, now >= hardExpiry.date, hardExpiry.behaviour == .reportOnly { effectiveMode = .reportOnly }

        let decision: PinEvaluation.Decision
        if matched {
            decision = .allow
        } else if effectiveMode == .reportOnly {
            decision = .allowReported
        } else {
            decision = .deny
        }
        let report =
            matched
            ? nil
            : PinFailureReport(
                date: now,
                hostname: host,
                port: port,
                notedHostname: pattern.description,
                includeSubdomains: pattern.kind != .exact,
                enforce: effectiveMode == .enforce,
                servedChainDER: servedChain ?? chain,
                validatedChainDER: chain,
                knownPins: pins.map(\.hpkpDescription).sorted(),
                effectiveExpiration: hardExpiry?.date
            )
        return PinEvaluation(
            decision: decision,
            seen: seen,
            pins: pins,
            host: host,
            report: report,
            needsRefresh: refresh,
            backupMissing: noBackup
        )
    }
}

/// The outcome of a pin check.
public struct PinEvaluation: Sendable {
    public enum Decision: Sendable, Hashable {
        case allow
        /// Report-only: the pins did not match but the connection may go ahead.
        case allowReported
        /// `pin_mismatch`: refuse the connection.
        case deny
    }

    public struct SeenPin: Sendable, Hashable {
        public var position: PinSet.Position
        public var pin: SPKIPin
    }

    public var decision: Decision
    /// The pin of every certificate served, leaf first.
    public var seen: [SeenPin]
    public var pins: Set<SPKIPin>
    public var host: String
    /// For a mismatch: the TrustKit/HPKP-shaped report to send (to the app's own server only).
    public var report: PinFailureReport?
    /// Past the soft expiry: still enforcing, but the app should fetch fresh pins.
    public var needsRefresh: Bool
    /// Every configured pin is in the live chain: no backup for the next key change.
    public var backupMissing: Bool

    /// The error to throw for a denial.
    public var error: SignetError? {
        decision == .deny ? SignetError(.pinMismatch, message) : nil
    }

    /// An OkHttp-style explanation: the served chain's pins, then the pinned ones.
    public var message: String {
        var text = "Certificate pinning failure!\n  Peer certificate chain:\n"
        for entry in seen { text += "    \(entry.pin) (\(entry.position.rawValue))\n" }
        text += "  Pinned certificates for \(host):\n"
        for pin in pins.sorted(by: { $0.base64 < $1.base64 }) { text += "    \(pin)\n" }
        return text
    }
}

/// A pin validation failure report in the HPKP (RFC 7469 §3) / TrustKit JSON shape.
public struct PinFailureReport: Sendable {
    public var date: Date
    public var hostname: String
    public var port: Int
    public var notedHostname: String
    public var includeSubdomains: Bool
    public var enforce: Bool
    public var servedChainDER: [[UInt8]]
    /// The chain validation built (up to the trusted root); the served chain when not given.
    public var validatedChainDER: [[UInt8]]?
    public var knownPins: [String]
    public var effectiveExpiration: Date?

    public init(
        date: Date,
        hostname: String,
        port: Int,
        notedHostname: String,
        includeSubdomains: Bool,
        enforce: Bool,
        servedChainDER: [[UInt8]],
        validatedChainDER: [[UInt8]]? = nil,
        knownPins: [String],
        effectiveExpiration: Date? = nil
    ) {
        self.validatedChainDER = validatedChainDER
        self.date = date
        self.hostname = hostname
        self.port = port
        self.notedHostname = notedHostname
        self.includeSubdomains = includeSubdomains
        self.enforce = enforce
        self.servedChainDER = servedChainDER
        self.knownPins = knownPins
        self.effectiveExpiration = effectiveExpiration
    }

    /// The JSON document.
    public var json: [UInt8] {
        let formatter = ISO8601DateFormatter()
        var object: [String: Any] = [
            "date-time": formatter.string(from: date),
            "hostname": hostname,
            "port": port,
            "noted-hostname": notedHostname,
            "include-subdomains": includeSubdomains,
            "enforce-pinning": enforce,
            "served-certificate-chain": servedChainDER.map(Self.pem),
            "validated-certificate-chain": (validatedChainDER ?? servedChainDER).map(Self.pem),
            "known-pins": knownPins,
            "validation-result": 1,
        ]
        if let effectiveExpiration { object["effective-expiration-date"] = formatter.string(from: effectiveExpiration) }
        return Array((try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data("{}".utf8))
    }

    static func pem(_ der: [UInt8]) -> String {
        let base64 = Base64.encode(der)
        var lines: [String] = []
        var index = base64.startIndex
        while index < base64.endIndex {
            let end = base64.index(index, offsetBy: 64, limitedBy: base64.endIndex) ?? base64.endIndex
            lines.append(String(base64[index..<end]))
            index = end
        }
        return "-----BEGIN CERTIFICATE-----\n" + lines.joined(separator: "\n") + "\n-----END CERTIFICATE-----"
    }
}
