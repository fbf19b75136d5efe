// SPDX-License-Identifier: Apache-2.0
import Foundation
import SignetCore
import SignetServer
import Testing

/// The app-build settings (`appAttest.appCategories`, `minimumAppVersion`, `requireAppBuild`, and
/// the same as route options), each refusal at its path: a misspelt category would otherwise
/// refuse every device, or a route option admit what `appAttest` refuses without saying so.
@Suite struct AppBuildConfigurationTests {
    static func refusal(
        appAttest: Bool = true,
        _ change: (inout GatewayConfiguration) -> Void
    ) -> String? {
        var configuration = GatewayConfiguration(upstream: "http://127.0.0.1:9000")
        if appAttest { configuration.appAttest = .init(appIDs: ["ABCDE12345.com.example.scores"]) }
        change(&configuration)
        return configuration.refusalPath
    }

    static func route(_ mode: String, _ options: [String: GatewayConfiguration.Route.Access.Option]) -> GatewayConfiguration.Route {
        .init(prefix: "/api", access: .init(mode: mode, options: options))
    }

    @Test func theGatewaysPolicyIsCheckedAtItsPaths() {
        #expect(Self.refusal { $0.appAttest?.appCategories = ["app-store", "testflight", "4", "11"] } == nil)
        #expect(Self.refusal { $0.appAttest?.appCategories = ["appstore"] } == "appAttest.appCategories")
        #expect(Self.refusal { $0.appAttest?.appCategories = [] } == "appAttest.appCategories")
        #expect(Self.refusal { $0.appAttest?.minimumAppVersion = "2.1.0" } == nil)
        #expect(Self.refusal { $0.appAttest?.minimumAppVersion = "2.1-beta" } == "appAttest.minimumAppVersion")
        #expect(Self.refusal { $0.appAttest?.requireAppBuild = true } == nil)
    }

    @Test func routeOptionsAreCheckedWhereAppAttestDevicesAreAdmitted() {
        let store: [String: GatewayConfiguration.Route.Access.Option] = [
            "appCategories": .string("app-store, testflight"), "minimumAppVersion": .string("42"), "requireAppBuild": .bool(true),
        ]
        for mode in ["app-attest", "attested"] {
            #expect(Self.refusal { $0.routes = [Self.route(mode, store)] } == nil, "\(mode)")
        }
        // A plain device key passes these routes, and declares no build: the options would promise
        // what the route does not keep. No App Attest device reaches an Android route.
        for mode in ["verified", "shared-secret", "device-key", "android-key-attestation"] {
            #expect(Self.refusal { $0.routes = [Self.route(mode, store)] }?.hasPrefix("routes[0]") == true, "\(mode)")
        }
        #expect(Self.refusal { $0.routes = [Self.route("open", ["appCategories": .string("app-store")])] }?.hasPrefix("routes[0]") == true)
        #expect(Self.refusal(appAttest: false) { $0.routes = [Self.route("app-attest", store)] }?.hasPrefix("routes[0]") == true)
        #expect(Self.refusal { $0.routes = [Self.route("app-attest", ["appCategories": .string("app-store,,")])] }?.hasPrefix("routes[0]") == true)
        #expect(Self.refusal { $0.routes = [Self.route("app-attest", ["appCategories": .string("App Store")])] }?.hasPrefix("routes[0]") == true)
        #expect(Self.refusal { $0.routes = [Self.route("app-attest", ["minimumAppVersion": .string("v2")])] }?.hasPrefix("routes[0]") == true)
    }

    @Test func theJSONSpellingReadsAsDocumented() throws {
        let document = """
            {
              "upstream": "http://127.0.0.1:9000",
              "appAttest": {"appIDs": ["ABCDE12345.com.example.scores"], "appCategories": ["app-store", "testflight"],
                            "minimumAppVersion": "42", "requireAppBuild": false},
              "routes": [
                {"prefix": "/pay", "access": "app-attest", "appCategories": "app-store", "minimumAppVersion": "57", "requireAppBuild": true},
                {"prefix": "/", "access": "attested"}
              ]
            }
            """
        let configuration = try GatewayConfiguration.decode(Data(document.utf8))
        try configuration.validate()
        #expect(configuration.appAttest?.appCategories == ["app-store", "testflight"])
        #expect(configuration.routes[0].access.string("appCategories") == "app-store")
        #expect(configuration.routes[0].access.flag("requireAppBuild"))
    }
}
