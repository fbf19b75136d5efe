// SPDX-License-Identifier: Apache-2.0
import Foundation
import SignetCore
import SignetServer
import SignetSimulator
import SignetStore
import SignetTestSupport
import Testing

/// iOS 27's app build through the gateway: `appAttest`'s policy at registration and on every
/// assertion, a route's options in its place, the upstream told what the device declared, and a
/// refused build writing nothing (its nonce and counter stay unspent).
@Suite(.awaitsCleanups) struct AppBuildRouterTests {
    static let appStore42 = AppBuild(category: .appStore, bundleVersion: "42")

    /// A gateway whose `appAttest` admits App Store and development builds, with routes of their own.
    static func harness(_ change: @escaping @Sendable (inout GatewayConfiguration) -> Void = { _ in }) async throws -> GatewayHarness {
        try await GatewayHarness.start(transport: .router) { configuration in
            configuration.appAttest?.appCategories = ["app-store", "development"]
            configuration.appAttest?.counterWindow = 0
            configuration.routes.insert(contentsOf: [
                .init(prefix: "/echo/store", access: .init(mode: "app-attest", options: [
                    "appCategories": .string("app-store, testflight"), "minimumAppVersion": .string("42"),
                ])),
                .init(prefix: "/echo/declared", access: .init(mode: "attested", options: ["requireAppBuild": .bool(true)])),
                .init(prefix: "/echo/watched", access: .init(mode: "app-attest", options: ["appCategories": .string("app-store")]), mode: .monitor),
            ], at: 0)
            change(&configuration)
        }
    }

    static func get(_ signer: SimulatedAppAttestSigner, _ harness: GatewayHarness, _ path: String, nonce: String = Nonce.random(), counter: UInt32? = nil, fields: [(String, String)] = []) async throws -> GatewayHarness.Answer {
        let request = try HTTPMessage.request(
            method: "GET",
            uri: harness.base + path,
            fields: MessageFields(fields.map { MessageFields.Field(name: $0.0, value: $0.1) })
        )
        return try await GatewayHarness.send(try signer.sign(request, created: Date(), nonce: nonce, counter: counter))
    }

    static func echoed(_ answer: GatewayHarness.Answer) -> [String: String] {
        answer.json["headers"] as? [String: String] ?? [:]
    }

    @Test func eachAssertionIsJudgedByItsRoutesPolicyAndTheUpstreamLearnsTheBuild() async throws {
        let harness = try await Self.harness()
        Cleanup.after { try await harness.stop() }
        let device = SimulatedAppAttestDevice(appID: GatewayHarness.appID, ca: GatewayHarness.simulatorCA, appBuild: Self.appStore42)
        let registered = try await harness.attest(device)
        #expect(registered.status == 201, "\(registered.text)")
        let signer = SimulatedAppAttestSigner(device: device)

        // An App Store build at the minimum: through, and the upstream reads what it declared (a
        // client's own spelling of the fields never reaches it).
        let store = try await Self.get(signer, harness, "/echo/store", fields: [("Signet-App-Category", "enterprise")])
        #expect(store.status == 200, "\(store.text)")
        #expect(Self.echoed(store)["signet-app-category"] == "app-store")
        #expect(Self.echoed(store)["signet-app-version"] == "42")

        // The same key, another build: each assertion is judged on what it declares.
        device.appBuild = AppBuild(category: .development, bundleVersion: "43")
        let development = try await Self.get(signer, harness, "/echo/store")
        #expect(development.status == 403 && development.reason == "app_category_refused", "\(development.text)")
        // `appAttest`'s own policy admits development builds where a route says nothing.
        let elsewhere = try await Self.get(signer, harness, "/echo/anything")
        #expect(elsewhere.status == 200 && Self.echoed(elsewhere)["signet-app-category"] == "development", "\(elsewhere.text)")
        device.appBuild = AppBuild(category: .enterprise, bundleVersion: "43")
        #expect(try await Self.get(signer, harness, "/echo/anything").reason == "app_category_refused")

        device.appBuild = AppBuild(category: .testFlight, bundleVersion: "41.9")
        let old = try await Self.get(signer, harness, "/echo/store")
        #expect(old.status == 403 && old.reason == "app_version_refused", "\(old.text)")

        // An iOS 26 device declares nothing: it passes where no build is required, and the upstream
        // gets no build fields; a route that requires one refuses it.
        device.appBuild = nil
        let undeclared = try await Self.get(signer, harness, "/echo/store")
        #expect(undeclared.status == 200, "\(undeclared.text)")
        #expect(Self.echoed(undeclared)["signet-app-category"] == nil && Self.echoed(undeclared)["signet-app-version"] == nil)
        let required = try await Self.get(signer, harness, "/echo/declared")
        #expect(required.status == 403 && required.reason == "app_build_undeclared", "\(required.text)")
        device.appBuild = AppBuild(category: .development, bundleVersion: "1")
        #expect(try await Self.get(signer, harness, "/echo/declared").status == 200)

        // A monitor route forwards a refused build with its verdict.
        let watched = try await Self.get(signer, harness, "/echo/watched")
        #expect(watched.status == 200 && Self.echoed(watched)["signet-verdict"] == "app_category_refused", "\(watched.text)")
    }

    /// The build is judged after the signature and before anything is written: a refused assertion
    /// leaves its nonce and its counter unspent, so the same nonce and counter pass once the device
    /// declares a build the route takes — and then only once.
    @Test func aRefusedBuildSpendsNeitherItsNonceNorItsCounter() async throws {
        let harness = try await Self.harness()
        Cleanup.after { try await harness.stop() }
        let device = SimulatedAppAttestDevice(appID: GatewayHarness.appID, ca: GatewayHarness.simulatorCA, appBuild: Self.appStore42)
        #expect(try await harness.attest(device).status == 201)
        let signer = SimulatedAppAttestSigner(device: device)
        let nonce = Nonce.random()
        device.appBuild = AppBuild(category: .development, bundleVersion: "42")
        let refused = try await Self.get(signer, harness, "/echo/store", nonce: nonce, counter: 1)
        #expect(refused.reason == "app_category_refused", "\(refused.text)")
        device.appBuild = Self.appStore42
        let accepted = try await Self.get(signer, harness, "/echo/store", nonce: nonce, counter: 1)
        #expect(accepted.status == 200, "\(accepted.text)")
        #expect(try await Self.get(signer, harness, "/echo/store", nonce: nonce, counter: 2).reason == "nonce_replayed")
        #expect(try await Self.get(signer, harness, "/echo/store", counter: 1).reason == "counter_not_increasing")
    }

    /// `appAttest`'s policy also decides who registers; the device's record keeps what it declared.
    @Test func registrationTakesOnlyTheBuildsAppAttestAdmits() async throws {
        let harness = try await Self.harness()
        Cleanup.after { try await harness.stop() }
        let enterprise = SimulatedAppAttestDevice(appID: GatewayHarness.appID, ca: GatewayHarness.simulatorCA, appBuild: AppBuild(category: .enterprise, bundleVersion: "42"))
        let refused = try await harness.attest(enterprise)
        #expect(refused.status == 403 && refused.reason == "app_category_refused", "\(refused.text)")

        let device = SimulatedAppAttestDevice(appID: GatewayHarness.appID, ca: GatewayHarness.simulatorCA, appBuild: Self.appStore42)
        let registered = try await harness.attest(device)
        let id = try #require(registered.json["deviceId"] as? String)
        let record = try #require(try await harness.store.device(id: id))
        #expect(record.attributes["app_category"] == "app-store" && record.attributes["app_version"] == "42")

        // Undeclared devices register unless `requireAppBuild`.
        let iOS26 = SimulatedAppAttestDevice(appID: GatewayHarness.appID, ca: GatewayHarness.simulatorCA)
        #expect(try await harness.attest(iOS26).status == 201)
        let strict = try await Self.harness { $0.appAttest?.requireAppBuild = true }
        Cleanup.after { try await strict.stop() }
        let undeclared = try await strict.attest(SimulatedAppAttestDevice(appID: GatewayHarness.appID, ca: GatewayHarness.simulatorCA))
        #expect(undeclared.status == 403 && undeclared.reason == "app_build_undeclared", "\(undeclared.text)")
    }

    /// Across a random sequence of builds one device declares, each request passes exactly when
    /// its route's policy model says so, and every nonce and counter is spent only by a request
    /// that passed.
    @Test func aRouteAdmitsExactlyTheBuildsItsPolicyAdmits() async throws {
        let harness = try await Self.harness()
        Cleanup.after { try await harness.stop() }
        let device = SimulatedAppAttestDevice(appID: GatewayHarness.appID, ca: GatewayHarness.simulatorCA, appBuild: Self.appStore42)
        #expect(try await harness.attest(device).status == 201)
        let signer = SimulatedAppAttestSigner(device: device)
        let policies: [(String, AppBuildPolicy)] = [
            ("/echo/store", AppBuildPolicy(categories: [.appStore, .testFlight], minimumBundleVersion: BundleVersion("42"))),
            ("/echo/declared", AppBuildPolicy(categories: [.appStore, .development], requireDeclared: true)),
            ("/echo/other", AppBuildPolicy(categories: [.appStore, .development])),
        ]
        var generator = SystemRandomNumberGenerator()
        var counter: UInt32 = 0
        var passed = 0
        for _ in 0..<40 {
            let category = [nil, AppValidationCategory.appStore, .testFlight, .development, .enterprise].randomElement(using: &generator)!
            let version = [nil, "41", "42", "42.0.1", "100"].randomElement(using: &generator)!
            let build = AppBuild(category: category, bundleVersion: version)
            device.appBuild = build
            let (path, policy) = policies.randomElement(using: &generator)!
            let expected = (try? policy.check(build)) != nil
            // The counter the gateway has seen is the last one that passed.
            let answer = try await Self.get(signer, harness, path, counter: counter + 1)
            #expect((answer.status == 200) == expected, "\(build) on \(path): \(answer.status) \(answer.text)")
            if answer.status == 200 {
                counter += 1
                passed += 1
            }
        }
        #expect(passed > 0, "some request passed")
    }

    /// `appAttest`'s policy holds wherever an App Attest device signs, the token endpoint included
    /// (a refused build gets no token); a debug device standing in for an attested one is judged as
    /// undeclared, and a device key cannot be given build options at all (configuration tests).
    @Test func tokenIssuanceAndDebugDevicesAreJudgedToo() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("signet-build-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let harness = try await Self.harness { configuration in
            configuration.allowDebugDevices = true
            configuration.tokens = GatewayConfiguration.Tokens(
                issuer: "https://gateway.example.com",
                audience: ["scores"],
                keyFile: folder.appendingPathComponent("tokens.pem").path
            )
        }
        Cleanup.after { try await harness.stop() }
        let device = SimulatedAppAttestDevice(appID: GatewayHarness.appID, ca: GatewayHarness.simulatorCA, appBuild: Self.appStore42)
        #expect(try await harness.attest(device).status == 201)
        let signer = SimulatedAppAttestSigner(device: device)
        func issue() async throws -> GatewayHarness.Answer {
            let request = try HTTPMessage.request(method: "POST", uri: harness.base + "/signet/v1/tokens")
            return try await GatewayHarness.send(try signer.sign(request, created: Date(), nonce: Nonce.random()))
        }
        device.appBuild = AppBuild(category: .enterprise, bundleVersion: "42")
        let refused = try await issue()
        #expect(refused.status == 403 && refused.reason == "app_category_refused", "\(refused.text)")
        device.appBuild = Self.appStore42
        let issued = try await issue()
        #expect(issued.status == 201, "\(issued.text)")

        let debugKey = try SigningKey.generate(.p256)
        let debug = try await TrustLevelRouterTests.registerDebug(debugKey, named: "CI runner", harness)
        try #require(debug.status == 201, "\(debug.text)")
        let debugSigner = MessageSigner(key: debugKey, keyID: try #require(debug.json["keyid"] as? String), algorithm: ECDSAP256SHA256())
        func debugGet(_ path: String) async throws -> GatewayHarness.Answer {
            let request = try HTTPMessage.request(method: "GET", uri: harness.base + path)
            return try await GatewayHarness.send(try debugSigner.sign(request, created: Date(), nonce: Nonce.random()))
        }
        let required = try await debugGet("/echo/declared")
        #expect(required.status == 403 && required.reason == "app_build_undeclared", "\(required.text)")
        // Where no build is required, an undeclared one passes the category check.
        #expect(try await debugGet("/echo/anything").status == 200)
    }
}
