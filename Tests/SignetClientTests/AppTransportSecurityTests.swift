// SPDX-License-Identifier: Apache-2.0
import Foundation
@testable import SignetClient
import SignetCore
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// App Transport Security and the system's trust errors, as the client reads them: which private
/// roots ATS will refuse (from the Info.plist the app ships), the error that names the missing
/// key, and reason codes from `OSStatus` rather than from English text.
struct AppTransportSecurityTests {
    static let api = try! Origin("https://api.example.com")
    static let staging = try! Origin("https://staging.api.example.com")
    static let privateRoots = ServerTrustEvaluator.Roots.only([])

    @Test func withoutAnExceptionAPrivateRootIsRefusedAndTheSystemsRootsNeverAre() {
        let none = AppTransportSecurity(infoDictionary: [:])
        #expect(none.refusedPrivateRoots(origins: [Self.api, Self.staging], roots: Self.privateRoots) == [Self.api, Self.staging])
        #expect(none.refusedPrivateRoots(origins: [Self.api], roots: .systemAnd([])) == [Self.api])
        #expect(none.refusedPrivateRoots(origins: [Self.api], roots: .system).isEmpty)
        #expect(none.refusedPrivateRoots(origins: [try! Origin("http://127.0.0.1:8080")], roots: Self.privateRoots).isEmpty)
    }

    @Test func theDomainsExceptionOrAParentsWithSubdomainsAllowsIt() {
        let plist: [String: Any] = [
            "NSAppTransportSecurity": [
                "NSExceptionDomains": [
                    "example.com": ["NSIncludesSubdomains": true, "NSExceptionAllowsInsecureHTTPLoads": true],
                    "staging.api.example.com": ["NSExceptionMinimumTLSVersion": "TLSv1.2"],
                ]
            ]
        ]
        let ats = AppTransportSecurity(infoDictionary: plist)
        #expect(ats.allowsCustomTrust(for: "api.example.com"))
        #expect(ats.allowsCustomTrust(for: "API.Example.COM"))
        // Its own entry, without the key, decides: the parent's does not reach past it.
        #expect(!ats.allowsCustomTrust(for: "staging.api.example.com"))
        #expect(!ats.allowsCustomTrust(for: "example.org"))
        #expect(ats.refusedPrivateRoots(origins: [Self.api, Self.staging], roots: Self.privateRoots) == [Self.staging])

        let withoutSubdomains = AppTransportSecurity(infoDictionary: [
            "NSAppTransportSecurity": ["NSExceptionDomains": ["example.com": ["NSExceptionAllowsInsecureHTTPLoads": true]]]
        ])
        #expect(withoutSubdomains.allowsCustomTrust(for: "example.com") && !withoutSubdomains.allowsCustomTrust(for: "api.example.com"))
    }

    @Test func arbitraryLoadsAllowItUnlessAMoreSpecificKeyOverridesThem() {
        let arbitrary = AppTransportSecurity(infoDictionary: ["NSAppTransportSecurity": ["NSAllowsArbitraryLoads": true]])
        #expect(arbitrary.allowsCustomTrust(for: "api.example.com"))
        let overridden = AppTransportSecurity(infoDictionary: [
            "NSAppTransportSecurity": ["NSAllowsArbitraryLoads": true, "NSAllowsLocalNetworking": true]
        ])
        #expect(!overridden.allowsCustomTrust(for: "api.example.com"))
        let number = AppTransportSecurity(infoDictionary: ["NSAppTransportSecurity": ["NSAllowsArbitraryLoads": NSNumber(value: 1)]])
        #expect(number.allowsCustomTrust(for: "api.example.com"))
    }

    @Test func aHandshakeATSRefusedIsNamedWithTheKeyThatFixesIt() throws {
        let refused = try #require(
            URLSessionTransport.atsRefusal(URLError(.secureConnectionFailed), origin: Self.api, atsRefused: [Self.api])
        )
        #expect(refused.code == .certificateUntrusted)
        #expect(refused.reason.contains("NSExceptionDomains > api.example.com > NSExceptionAllowsInsecureHTTPLoads"))
        // The system's own word for it, whatever the Info.plist says.
        let said = URLError(.serverCertificateUntrusted, userInfo: ["_kCFStreamErrorCodeKey": -9886])
        #expect(URLSessionTransport.atsRefusal(said, origin: Self.api, atsRefused: []) != nil)
        // Other failures stay what they are.
        #expect(URLSessionTransport.atsRefusal(URLError(.secureConnectionFailed), origin: Self.api, atsRefused: []) == nil)
        #expect(URLSessionTransport.atsRefusal(URLError(.timedOut), origin: Self.api, atsRefused: [Self.api]) == nil)
    }

    @Test func theSystemsTrustErrorsMapByCodeNotByText() {
        #expect(SystemTrustFailure.code(osStatus: -67602) == .hostnameMismatch)
        #expect(SystemTrustFailure.code(osStatus: -67818) == .certificateExpired)
        #expect(SystemTrustFailure.code(osStatus: -67819) == .certificateExpired)
        #expect(SystemTrustFailure.code(osStatus: -67843) == .certificateUntrusted)
        #expect(SystemTrustFailure.code(osStatus: -67820) == .certificateUntrusted)
        #expect(SystemTrustFailure.code(osStatus: 1) == .certificateUntrusted)
        #expect(SystemTrustFailure.explanation(osStatus: -67819).contains("clock"))
    }
}
