// SPDX-License-Identifier: Apache-2.0
import Foundation
import NIOHTTP1
import SignetCore
import SignetServer
import SignetTestSupport
import Testing

/// With an `adminListener`, the operator surface — console, admin API, `/metrics`, `/readyz` — is
/// served there and answers `404 not_found` on the apps' listener, and what apps call is not served
/// on the admin listener; the OpenAPI document says which listener serves each operation.
@Suite(.awaitsCleanups) struct AdminListenerTests {
    static func start() async throws -> GatewayHarness {
        try await GatewayHarness.start(transport: .router) {
            $0.adminListener = .init(listen: .init(host: "127.0.0.1", port: 0))
            $0.passwords = .init(realm: "signet-tests")
        }
    }

    static let bearer = [("Authorization", "Bearer \(GatewayHarness.adminToken)")]

    @Test func theOperatorSurfaceIsServedOnItsOwnListenerOnly() async throws {
        let harness = try await Self.start()
        Cleanup.after { try await harness.stop() }
        let admin = try #require(harness.adminBase)
        let device = try await harness.register()

        // On the apps' listener, every operator path is absent, whatever the method or credential.
        let operatorPaths: [(String, String)] = [
            ("GET", "/metrics"), ("GET", "/signet/admin/"), ("GET", "/signet/admin/sign-in"),
            ("POST", "/signet/admin/sign-in"), ("GET", "/signet/admin/devices"), ("GET", "/SIGNET/ADMIN/overview"),
            ("GET", "/signet/v1/devices/\(device.deviceID)"), ("DELETE", "/signet/v1/devices/\(device.deviceID)"),
            ("PUT", "/signet/v1/users/ada"), ("DELETE", "/signet/v1/users/ada"), ("GET", "/signet/v1/pin-reports"),
        ]
        for (method, path) in operatorPaths {
            let answer = try await GatewayHarness.send(method: method, url: harness.base + path, headers: Self.bearer)
            #expect(answer.status == 404 && answer.reason == "not_found", "\(method) \(path): \(answer.status) \(answer.text)")
        }
        // Readiness on both: the balancer probes the port it sends traffic to.
        #expect(try await GatewayHarness.readiness(harness.base + "/readyz").status == 200)
        // …and on the admin listener, as before.
        #expect(try await GatewayHarness.send(method: "GET", url: admin + "/metrics", headers: Self.bearer).status == 200)
        #expect(try await GatewayHarness.readiness(admin + "/readyz").status == 200)
        #expect(try await GatewayHarness.send(method: "GET", url: admin + "/signet/admin/sign-in").status == 200)
        #expect(try await GatewayHarness.send(method: "GET", url: admin + "/signet/v1/pin-reports", headers: Self.bearer).status == 200)
        let user = try await GatewayHarness.send(
            method: "PUT",
            url: admin + "/signet/v1/users/ada",
            headers: Self.bearer + [("Content-Type", "application/json")],
            body: Array(#"{"password":"correct horse battery staple"}"#.utf8)
        )
        #expect(user.status == 201, "\(user.text)")
        let revoked = try await GatewayHarness.send(method: "DELETE", url: admin + "/signet/v1/devices/\(device.deviceID)", headers: Self.bearer)
        #expect(revoked.status == 204, "\(revoked.text)")
        let refused = try await GatewayHarness.send(try device.signer.sign(try harness.scorePost(), created: Date(), nonce: Nonce.random()))
        #expect(refused.reason == "key_revoked", "one store behind both listeners")

        // What apps call is not served on the admin listener: no registration, no proxied route;
        // pin reports are read there, not sent.
        for (method, path) in [("POST", "/signet/v1/challenges"), ("POST", "/signet/v1/devices"), ("GET", "/scores/top"), ("POST", "/scores")] {
            let answer = try await GatewayHarness.send(method: method, url: admin + path)
            #expect(answer.status == 404 && answer.reason == "not_found", "\(method) \(path) on the admin listener: \(answer.status)")
        }
        let report = try await GatewayHarness.send(method: "POST", url: admin + "/signet/v1/pin-reports")
        #expect(report.status == 405 && report.headers.first(name: "Allow") == "GET, HEAD", "\(report.status) \(report.headers)")
        #expect(try await GatewayHarness.send(method: "GET", url: harness.base + "/scores/top").status == 200)
    }

    /// Each operation of the OpenAPI document is where `x-signet-listener` says: an `admin` one
    /// answers on the admin listener (401 without the token) and is absent on the apps' one; a
    /// `client` one is absent on the admin listener.
    @Test func theContractSaysWhichListenerServesEachOperation() async throws {
        let harness = try await Self.start()
        Cleanup.after { try await harness.stop() }
        let admin = try #require(harness.adminBase)
        let url = SignetProcess.repositoryRoot.appendingPathComponent("Sources/SignetServer/Contract/openapi.json")
        let document = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any])
        let paths = try #require(document["paths"] as? [String: [String: Any]])
        var counted = (admin: 0, client: 0)
        /// An app's operation on the admin listener: `404` where that listener serves nothing at the
        /// path, `405` with the methods it does serve there where it serves some.
        func expectAbsent(_ answer: GatewayHarness.Answer, _ name: String, servedThere: Set<String>) {
            if servedThere.isEmpty {
                #expect(answer.status == 404 && answer.reason == "not_found", "\(name): \(answer.status)")
            } else {
                let allow = Set((answer.headers.first(name: "Allow") ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) })
                let expected = servedThere.contains("GET") ? servedThere.union(["HEAD"]) : servedThere
                #expect(answer.status == 405 && answer.reason == "method_not_allowed" && allow == expected, "\(name): \(answer.status) \(allow)")
            }
        }
        /// The methods `listener` serves at `path`: its own template's, or else those of a template
        /// whose `{capture}` takes the path (`/devices/attest` is a device id where only
        /// `/devices/{id}` is served).
        func servedAt(_ path: String, on listener: String) -> Set<String> {
            func methods(_ template: String) -> Set<String> {
                Set((paths[template] ?? [:]).compactMap { method, value in
                    ((value as? [String: Any])?["x-signet-listener"] as? String) == listener ? method.uppercased() : nil
                })
            }
            let own = methods(path)
            if !own.isEmpty { return own }
            let segments = path.split(separator: "/")
            for template in paths.keys where template.contains("{") {
                let pattern = template.split(separator: "/")
                guard pattern.count == segments.count, zip(pattern, segments).allSatisfy({ $0.hasPrefix("{") || $0 == $1 }) else { continue }
                if !methods(template).isEmpty { return methods(template) }
            }
            return []
        }
        for (template, item) in paths {
            let path = template.replacingOccurrences(of: "{id}", with: "dev_none").replacingOccurrences(of: "{name}", with: "nobody")
            func served(on listener: String) -> Set<String> { servedAt(template, on: listener) }
            for (method, value) in item {
                guard let operation = value as? [String: Any], let listener = operation["x-signet-listener"] as? String else { continue }
                let name = "\(method.uppercased()) \(template)"
                let onAdmin = try await GatewayHarness.send(method: method.uppercased(), url: admin + path)
                if listener == "admin" {
                    counted.admin += 1
                    let onClient = try await GatewayHarness.send(method: method.uppercased(), url: harness.base + path, headers: Self.bearer)
                    // Operator paths are hidden on the apps' listener, whatever else is served there.
                    #expect(onClient.status == 404 && onClient.reason == "not_found", "\(name) on listen: \(onClient.status)")
                    #expect(onAdmin.status == 401 && onAdmin.reason == "admin_unauthorized", "\(name) on the admin listener: \(onAdmin.status)")
                } else {
                    #expect(listener == "client", "\(name): x-signet-listener is client or admin")
                    counted.client += 1
                    expectAbsent(onAdmin, "\(name) on the admin listener", servedThere: served(on: "admin"))
                }
            }
        }
        #expect(counted.admin == 6 && counted.client == 13, "\(counted)")
    }

    /// The admin token and the console's cookie never cross a network in clear: an admin listener
    /// off loopback needs TLS (or `development`).
    @Test func anAdminListenerOffLoopbackNeedsTLS() throws {
        var configuration = GatewayConfiguration(upstream: "http://127.0.0.1:9")
        configuration.adminListener = .init(listen: .init(host: "0.0.0.0", port: 9444))
        let refused = #expect(throws: ConfigurationError.self) { try configuration.validate() }
        #expect(refused?.path == "adminListener" && refused?.message.contains("needs tls") == true)
        configuration.adminListener?.tls = .init(development: true)
        try configuration.validate()
        configuration.adminListener?.tls = nil
        configuration.development = true
        try configuration.validate()
        configuration.development = false
        configuration.adminListener?.listen = .init(host: "0.0.0.0", port: 8080)
        configuration.adminListener?.tls = .init(development: true)
        configuration.listen = .init(host: "0.0.0.0", port: 8080)
        #expect(throws: ConfigurationError.self, "the same address as listen") { try configuration.validate() }
    }

    /// A reload applies to both listeners: a new admin token is the one the admin listener takes.
    @Test func aReloadAppliesToBothListeners() async throws {
        let harness = try await Self.start()
        Cleanup.after { try await harness.stop() }
        let admin = try #require(harness.adminBase)
        var next = try #require(harness.gateways[0].reloader.configuration)
        let token = "a-new-admin-token-for-the-reload-0123456789"
        next.adminToken = token
        try harness.gateways[0].reloader.reload(to: next)
        #expect(try await GatewayHarness.send(method: "GET", url: admin + "/metrics", headers: Self.bearer).status == 401)
        #expect(try await GatewayHarness.send(method: "GET", url: admin + "/metrics", headers: [("Authorization", "Bearer \(token)")]).status == 200)
        #expect(try await GatewayHarness.send(method: "GET", url: harness.base + "/metrics", headers: [("Authorization", "Bearer \(token)")]).status == 404)
        var moved = next
        moved.adminListener?.listen.port = 1
        let refused = #expect(throws: ConfigurationError.self) { try harness.gateways[0].reloader.reload(to: moved) }
        #expect(refused?.kind == .restartRequired && refused?.message.contains("adminListener changed") == true)
    }
}
