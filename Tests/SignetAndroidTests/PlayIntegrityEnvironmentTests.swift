// SPDX-License-Identifier: Apache-2.0
import Foundation
import SignetAndroid
import SignetCore
import Testing

/// The opt-in signals of Play Integrity's 2026 verdicts (Play Protect, app access risk, recent
/// device activity, device attributes, device recall), read as Google writes them and judged by
/// the policy: a signal the policy asks about must be in the verdict.
@Suite struct PlayIntegrityEnvironmentTests {
    /// A verdict as Google's documentation shows one with every opt-in signal.
    static func verdict(
        playProtect: String? = "NO_ISSUES",
        appsDetected: [String]? = ["KNOWN_INSTALLED", "UNKNOWN_INSTALLED"],
        activity: String? = "LEVEL_1",
        sdk: Int? = 34,
        recall: [Bool]? = [false, false, false]
    ) throws -> PlayIntegrityVerdict {
        var base = PlayIntegrityTests.verdict()
        var device = base["deviceIntegrity"] as! [String: Any]
        if let activity { device["recentDeviceActivity"] = ["deviceActivityLevel": activity] }
        if let sdk { device["deviceAttributes"] = ["sdkVersion": sdk] }
        if let recall {
            device["deviceRecall"] = [
                "values": ["bitFirst": recall[0], "bitSecond": recall[1], "bitThird": recall[2]],
                "writeDates": ["yyyymmFirst": 202_609],
            ]
        }
        base["deviceIntegrity"] = device
        var environment: [String: Any] = [:]
        if let playProtect { environment["playProtectVerdict"] = playProtect }
        if let appsDetected { environment["appAccessRiskVerdict"] = ["appsDetected": appsDetected] }
        if !environment.isEmpty { base["environmentDetails"] = environment }
        return try JSONDecoder().decode(PlayIntegrityVerdict.self, from: try JSONSerialization.data(withJSONObject: base))
    }

    static func policy(_ change: (inout PlayIntegrityPolicy.Environment) -> Void) -> PlayIntegrityPolicy {
        var policy = PlayIntegrityTests.policy
        change(&policy.environment)
        return policy
    }

    static func outcome(_ policy: PlayIntegrityPolicy, _ verdict: PlayIntegrityVerdict) -> String {
        PlayIntegrityTests.code { try policy.judge(verdict, nonce: "challenge-1", now: PlayIntegrityTests.made) }?.rawValue ?? "accepted"
    }

    @Test func theSignalsAreRead() throws {
        let verdict = try Self.verdict(recall: [true, false, true])
        #expect(verdict.environmentDetails?.playProtectVerdict == "NO_ISSUES")
        #expect(verdict.environmentDetails?.appAccessRiskVerdict?.appsDetected == ["KNOWN_INSTALLED", "UNKNOWN_INSTALLED"])
        #expect(verdict.deviceIntegrity?.recentDeviceActivity?.deviceActivityLevel == "LEVEL_1")
        #expect(verdict.deviceIntegrity?.deviceAttributes?.sdkVersion == 34)
        #expect(verdict.deviceIntegrity?.deviceRecall?.setBits == [1, 3])
        // A policy that asks nothing of them takes any, or none.
        #expect(Self.outcome(PlayIntegrityTests.policy, try Self.verdict(playProtect: "HIGH_RISK", appsDetected: ["KNOWN_CONTROLLING"])) == "accepted")
        #expect(Self.outcome(PlayIntegrityTests.policy, try Self.verdict(playProtect: nil, appsDetected: nil, activity: nil, sdk: nil, recall: nil)) == "accepted")
    }

    @Test func eachSignalIsJudgedAndAMissingOneRefusedWhereAsked() throws {
        let protect = Self.policy { $0.maximumPlayProtectRisk = "NO_DATA" }
        #expect(Self.outcome(protect, try Self.verdict(playProtect: "NO_ISSUES")) == "accepted")
        #expect(Self.outcome(protect, try Self.verdict(playProtect: "NO_DATA")) == "accepted")
        #expect(Self.outcome(protect, try Self.verdict(playProtect: "POSSIBLE_RISK")) == "play_protect_risk")
        #expect(Self.outcome(protect, try Self.verdict(playProtect: "UNEVALUATED")) == "play_protect_risk")
        #expect(Self.outcome(protect, try Self.verdict(playProtect: nil)) == "play_protect_risk")

        let access = Self.policy { $0.refusedAppsDetected = ["KNOWN_CAPTURING", "UNKNOWN_CONTROLLING"] }
        #expect(Self.outcome(access, try Self.verdict()) == "accepted")
        #expect(Self.outcome(access, try Self.verdict(appsDetected: ["KNOWN_INSTALLED", "UNKNOWN_CONTROLLING"])) == "app_access_risk")
        #expect(Self.outcome(access, try Self.verdict(appsDetected: nil)) == "app_access_risk")

        let activity = Self.policy { $0.maximumDeviceActivityLevel = 2 }
        #expect(Self.outcome(activity, try Self.verdict(activity: "LEVEL_2")) == "accepted")
        #expect(Self.outcome(activity, try Self.verdict(activity: "LEVEL_3")) == "device_activity_excessive")
        #expect(Self.outcome(activity, try Self.verdict(activity: "UNEVALUATED")) == "device_activity_excessive")
        #expect(Self.outcome(activity, try Self.verdict(activity: nil)) == "device_activity_excessive")

        let sdk = Self.policy { $0.minimumSDKVersion = 33 }
        #expect(Self.outcome(sdk, try Self.verdict(sdk: 33)) == "accepted")
        #expect(Self.outcome(sdk, try Self.verdict(sdk: 30)) == "device_sdk_outdated")
        #expect(Self.outcome(sdk, try Self.verdict(sdk: nil)) == "device_sdk_outdated")

        let recall = Self.policy { $0.refusedRecallBits = [2] }
        #expect(Self.outcome(recall, try Self.verdict(recall: [true, false, true])) == "accepted")
        #expect(Self.outcome(recall, try Self.verdict(recall: [false, true, false])) == "device_recalled")
        #expect(Self.outcome(recall, try Self.verdict(recall: nil)) == "device_recalled")
    }

    /// A flagging policy refuses nothing for the signals, and names each finding by its code, in
    /// order; a refusing one names none. The verdicts below the signals are refused either way.
    @Test func aFlaggingPolicyLetsThroughAndNamesWhatItFound() throws {
        let flagging = Self.policy {
            $0.maximumPlayProtectRisk = "NO_ISSUES"
            $0.refusedRecallBits = [1]
            $0.maximumDeviceActivityLevel = 1
            $0.action = .flag
        }
        let risky = try Self.verdict(playProtect: "HIGH_RISK", activity: "LEVEL_3", recall: [true, false, false])
        #expect(Self.outcome(flagging, risky) == "accepted")
        #expect(flagging.environment.flags(risky) == ["play_protect_risk", "device_activity_excessive", "device_recalled"])
        #expect(flagging.environment.flags(try Self.verdict()) == [])
        var refusing = flagging
        refusing.environment.action = .refuse
        #expect(Self.outcome(refusing, risky) == "play_protect_risk")
        #expect(refusing.environment.flags(risky) == [])
        #expect(refusing.environment.findings(risky).map(\.code.rawValue) == flagging.environment.flags(risky))
        var weak = flagging
        weak.minimumDeviceIntegrity = .strong
        #expect(Self.outcome(weak, risky) == "integrity_verdict_insufficient")
    }
}
