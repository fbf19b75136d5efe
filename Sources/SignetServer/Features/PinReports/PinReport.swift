// SPDX-License-Identifier: Apache-2.0
import Crypto
import Foundation
import SignetCore
import SignetStore
import SwiftASN1

/// One report as received at `POST /signet/v1/pin-reports`, checked and reduced to what groups it:
/// host, reason and the served chain's SPKI pins.
///
/// Two kinds are accepted: a pin failure in the HPKP/TrustKit shape (`hostname`, `known-pins`,
/// `served-certificate-chain`), and a trust document the client refused (`type:
/// trust_update_refused`, `hostname`, `reason`).
struct PinReport {
    var hostname: String
    var reason: String
    var servedPins: [String]
    /// What a new group keeps of it: the report as sent, or a shortened copy past
    /// ``PinReportRecord/maximumSampleBytes``.
    var sample: String

    static let maximumChain = 10
    static let maximumReasonCharacters = 160

    /// - Throws: `malformed_message` for anything that is neither kind.
    init(json bytes: [UInt8]) throws {
        guard let object = try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any] else {
            throw SignetError(.malformedMessage, "a pin report is a JSON object")
        }
        let refusedTrust = object["type"] as? String == "trust_update_refused"
        // A `type` that is not text is no report of either kind (schemathesis found one accepted).
        guard let hostname = object["hostname"] as? String, !hostname.isEmpty, hostname.utf8.count <= 253,
            object["type"] == nil || object["type"] is String,
            refusedTrust
                ? object["reason"] is String
                : object["known-pins"] is [Any] && object["served-certificate-chain"] is [Any]
        else {
            throw SignetError(
                .malformedMessage,
                "a pin report needs hostname, known-pins and served-certificate-chain (HPKP/TrustKit shape), or type trust_update_refused with hostname and reason"
            )
        }
        self.hostname = hostname
        if refusedTrust {
            reason = "trust-update-refused: " + String((object["reason"] as? String ?? "").prefix(Self.maximumReasonCharacters))
            servedPins = []
        } else {
            reason = Self.reason(validationResult: object["validation-result"] as? Int)
            servedPins = (object["served-certificate-chain"] as? [Any] ?? []).prefix(Self.maximumChain).map(Self.pin)
        }
        sample = Self.sample(bytes, object: object, servedPins: servedPins)
    }

    /// The group this report counts in: `pr_` and 24 hex digits of SHA-256 over host, reason and pins.
    var groupID: String {
        let key = Array(hostname.utf8) + [0] + Array(reason.utf8) + [0] + Array(servedPins.joined(separator: " ").utf8)
        return "pr_" + Hex.encode(SHA256.hash(data: key)).prefix(24)
    }

    func record(source: String?, at now: Date) -> PinReportRecord {
        PinReportRecord(
            id: groupID,
            hostname: hostname,
            reason: reason,
            servedPins: servedPins.joined(separator: " "),
            firstSeen: now,
            lastSeen: now,
            source: source,
            json: sample
        )
    }

    /// TrustKit's `validation-result` (TSKTrustEvaluationResult); HPKP reports carry none.
    static func reason(validationResult: Int?) -> String {
        switch validationResult {
        case nil: "pin-mismatch"
        case 1: "no-matching-pin"
        case 2: "invalid-certificate-chain"
        case 4: "user-defined-trust-anchor"
        case let code?: "validation-result-\(code)"
        }
    }

    /// The SPKI pin of a served certificate (PEM), or `unparsed/` and a digest of what was sent.
    static func pin(_ entry: Any) -> String {
        let text = entry as? String ?? ""
        if let document = try? PEMDocument(pemString: text), let pin = try? SPKIPin(certificateDER: document.derBytes) {
            return pin.description
        }
        return "unparsed/" + Hex.encode(SHA256.hash(data: Array(text.utf8))).prefix(16)
    }

    /// The report as sent when it is small; else the same object with the chains replaced by their
    /// pins and long strings cut; else only the host.
    static func sample(_ bytes: [UInt8], object: [String: Any], servedPins: [String]) -> String {
        let limit = PinReportRecord.maximumSampleBytes
        if bytes.count <= limit { return String(decoding: bytes, as: UTF8.self) }
        var shortened = object.mapValues { value -> Any in
            if let text = value as? String, text.count > 512 { return String(text.prefix(512)) + "…" }
            return value
        }
        shortened["served-certificate-chain"] = object["served-certificate-chain"] == nil ? nil : servedPins
        shortened["validated-certificate-chain"] = nil
        shortened["signet-shortened"] = true
        if let data = try? JSONSerialization.data(withJSONObject: shortened, options: [.sortedKeys]), data.count <= limit {
            return String(decoding: data, as: UTF8.self)
        }
        let minimal = ["hostname": object["hostname"] as? String ?? "", "signet-shortened": true] as [String: Any]
        return String(decoding: (try? JSONSerialization.data(withJSONObject: minimal, options: [.sortedKeys])) ?? Data(), as: UTF8.self)
    }
}
