// SPDX-License-Identifier: Apache-2.0
import Foundation
@testable import SignetClient
import SignetTestSupport
import Testing

/// The privacy manifest ships with the client and says what it sends; its claim that no
/// required-reason API is called is checked against the sources of every module an app links.
struct PrivacyManifestTests {
    @Test func theManifestShipsWithTheClientAndDeclaresWhatItSends() throws {
        let url = try #require(Bundle.module.url(forResource: "PrivacyInfo", withExtension: "xcprivacy"))
        let manifest = try #require(
            try PropertyListSerialization.propertyList(from: Data(contentsOf: url), format: nil) as? [String: Any]
        )
        #expect(manifest["NSPrivacyTracking"] as? Bool == false)
        #expect((manifest["NSPrivacyTrackingDomains"] as? [Any])?.isEmpty == true)
        let collected = try #require(manifest["NSPrivacyCollectedDataTypes"] as? [[String: Any]])
        let types = Set(collected.compactMap { $0["NSPrivacyCollectedDataType"] as? String })
        #expect(types == ["NSPrivacyCollectedDataTypeDeviceID", "NSPrivacyCollectedDataTypeOtherDiagnosticData"])
        for entry in collected {
            #expect(entry["NSPrivacyCollectedDataTypeTracking"] as? Bool == false)
            #expect(entry["NSPrivacyCollectedDataTypePurposes"] as? [String] == ["NSPrivacyCollectedDataTypePurposeAppFunctionality"])
        }
        #expect((manifest["NSPrivacyAccessedAPITypes"] as? [Any])?.isEmpty == true)
    }

    /// Apple's required-reason APIs (file timestamps, system boot time, disk space, active
    /// keyboards, user defaults): declaring none is true only while no client module calls one.
    @Test func noModuleAnAppLinksCallsARequiredReasonAPI() throws {
        let patterns = [
            #"\.creationDate\b"#, #"\.modificationDate\b"#, #"contentModificationDate"#, #"creationDateKey"#,
            #"\b(f|l)?stat\("#, #"getattrlist"#, #"systemUptime"#, #"mach_absolute_time"#,
            #"volumeAvailableCapacity"#, #"\bstatfs\("#, #"UserDefaults"#, #"activeInputModes"#,
        ].map { try! Regex($0) }
        let modules = ["SignetCore", "SignetTrust", "SignetClient", "SignetAppAttest", "SignetAndroid", "SignetSimulator"]
        var found: [String] = []
        for module in modules {
            let folder = SignetProcess.repositoryRoot.appendingPathComponent("Sources/\(module)")
            let files = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: nil)?
                .compactMap { $0 as? URL }.filter { $0.pathExtension == "swift" } ?? []
            #expect(!files.isEmpty, "\(module)")
            for file in files {
                let text = try String(contentsOf: file, encoding: .utf8)
                for pattern in patterns where text.contains(pattern) {
                    found.append("\(module)/\(file.lastPathComponent)")
                }
            }
        }
        #expect(found.isEmpty, "a required-reason API: declare it in PrivacyInfo.xcprivacy, with its reason: \(found)")
    }
}
