// SPDX-License-Identifier: Apache-2.0
import PropertyBased
import SignetCore
import Testing

/// iOS 27's app build (validation category and bundle version) and the policy that judges it.
@Suite struct AppBuildPolicyTests {
    @Test func categoriesHaveApplesNumbersAndTheirNames() {
        // The numbering of Apple's code signing (es_cs_validation_category_t).
        let expected: [(String, UInt32)] = [
            ("platform", 1), ("testflight", 2), ("development", 3), ("app-store", 4), ("enterprise", 5),
            ("developer-id", 6), ("local-signing", 7), ("rosetta", 8), ("oop-jit", 9), ("none", 10),
        ]
        for (name, number) in expected {
            #expect(AppValidationCategory(name: name)?.rawValue == number)
            #expect(AppValidationCategory(rawValue: number).name == name)
        }
        // A category without a name yet is kept, and allowed, by its number.
        #expect(AppValidationCategory(rawValue: 11).name == "11")
        #expect(AppValidationCategory(name: "11") == AppValidationCategory(rawValue: 11))
        for bad in ["App Store", "appstore", "", "-1", "+4", "4294967296", " 4"] {
            #expect(AppValidationCategory(name: bad) == nil, "\(bad)")
        }
    }

    @Test func bundleVersionsCompareAsNumbers() throws {
        let v = { (text: String) in try #require(BundleVersion(text)) }
        #expect(try v("2.1") < v("2.10"))
        #expect(try v("9") < v("10"))
        #expect(try v("2.1") == v("2.1.0"))
        #expect(try v("2.1.0").hashValue == v("2.1").hashValue)
        #expect(try v("2026.11.3") > v("2026.11"))
        #expect(try v("007") == v("7"))
        for bad in ["", ".", "1.", ".1", "1..2", "1.a", "v1", "1-beta", "1 ", "1.2.3.4.5.6.7.8.9", "1234567890123456789"] {
            #expect(BundleVersion(bad) == nil, "\(bad.debugDescription)")
        }
    }

    /// Against a model: a build passes exactly when it declares what a `requireDeclared` policy
    /// needs, its category (where declared) is allowed, and its version (where declared) is at least
    /// the minimum; a refusal names the first check it fails.
    @Test func aPolicyAcceptsExactlyWhatItsModelAccepts() async {
        let category = Gen.int(in: 0...6).map { $0 == 0 ? nil : AppValidationCategory(rawValue: UInt32($0)) }
        let version = Gen.int(in: 0...4).map { $0 == 0 ? nil : "\($0).\($0 % 2)" }
        let allowed = Gen.int(in: 0...63).map { bits -> Set<AppValidationCategory>? in
            bits == 0 ? nil : Set((1...6).filter { bits & (1 << ($0 - 1)) != 0 }.map { AppValidationCategory(rawValue: UInt32($0)) })
        }
        let minimum = Gen.int(in: 0...4).map { $0 == 0 ? nil : BundleVersion("\($0)") }
        await propertyCheck(count: 400, input: category, version, allowed, minimum, Gen.bool) { category, version, allowed, minimum, required in
            let build = AppBuild(category: category, bundleVersion: version)
            let policy = AppBuildPolicy(categories: allowed, minimumBundleVersion: minimum, requireDeclared: required)
            let expected: SignetError.Code? =
                if required && (category == nil || version == nil) {
                    .appBuildUndeclared
                } else if let allowed, let category, !allowed.contains(category) {
                    .appCategoryRefused
                } else if let minimum, let version, BundleVersion(version)! < minimum {
                    .appVersionRefused
                } else {
                    nil
                }
            do {
                try policy.check(build)
                #expect(expected == nil, "\(build) passed \(policy)")
            } catch let error as SignetError {
                #expect(error.code == expected, "\(build) under \(policy): \(error.code)")
                #expect(error.code.httpStatus == 403)
            } catch {
                Issue.record("\(error)")
            }
        }
    }

    @Test func aVersionThatIsNotNumbersIsRefusedWhereAMinimumIsAsked() throws {
        let policy = AppBuildPolicy(minimumBundleVersion: BundleVersion("3"))
        let error = #expect(throws: SignetError.self) { try policy.check(AppBuild(category: .appStore, bundleVersion: "3-beta")) }
        #expect(error?.code == .appVersionRefused)
        // Without a minimum the version is not judged.
        try AppBuildPolicy(categories: [.appStore]).check(AppBuild(category: .appStore, bundleVersion: "3-beta"))
    }

    @Test func anUndeclaredBuildPassesUnlessThePolicyRequiresOne() throws {
        let strict = AppBuildPolicy(categories: [.appStore], minimumBundleVersion: BundleVersion("42"))
        try strict.check(AppBuild())
        var required = strict
        required.requireDeclared = true
        let error = #expect(throws: SignetError.self) { try required.check(AppBuild()) }
        #expect(error?.code == .appBuildUndeclared)
        let half = #expect(throws: SignetError.self) { try required.check(AppBuild(category: .appStore)) }
        #expect(half?.code == .appBuildUndeclared)
        try required.check(AppBuild(category: .appStore, bundleVersion: "42"))
    }
}
