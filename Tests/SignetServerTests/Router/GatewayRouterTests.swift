// SPDX-License-Identifier: Apache-2.0
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import PropertyBased
import SignetCore
import SignetMiddleware
import SignetServer
import SignetStore
import SignetTestSupport
import Testing

/// The gateway's decisions through its router, without a socket (Hummingbird's `.router` test
/// client): which route a request belongs to, what that route asks, what each listener serves.
/// The upstream is an address nothing listens on, so a request that got past its route's gate is
/// told apart by `upstream_unreachable`; the sockets, TLS and real peers stay in the `.live` suites.
@Suite struct GatewayRouterTests {
    static let routes: [GatewayConfiguration.Route] = [
        .init(prefix: "/public", access: .open),
        .init(prefix: "/transfers", access: .deviceKey),
        .init(prefix: "/", access: .verified),
    ]

    static func gateway(_ adjust: (inout GatewayConfiguration) -> Void = { _ in }) throws -> SignetGateway {
        var configuration = GatewayConfiguration(upstream: "http://127.0.0.1:9")
        configuration.store = .memory
        configuration.routes = routes
        // What a signature covers as @authority, whatever the test client sends.
        configuration.publicAuthority = "localhost"
        configuration.sharedSecrets = [.init(keyId: "bank-v1", secretBase64: Base64.encode(GatewayHarness.bankSecret))]
        adjust(&configuration)
        var logger = Logger(label: "signet.test.router")
        logger.logLevel = .critical
        return try SignetGateway(configuration: configuration, store: MemoryStore(), logger: logger)
    }

    static func reason(_ response: TestResponse) -> String? {
        (try? JSONSerialization.jsonObject(with: Data(response.body.readableBytesView)) as? [String: Any])?["reason"] as? String
    }

    /// An access mode whose feature is not configured has no owner: the gateway does not start,
    /// naming the route, even where validation is skipped — no route is ever left out of the table,
    /// where its requests would fall to the route above it (`/` is `open` here).
    @Test(arguments: [
        GatewayConfiguration.Route.Access.playIntegrity, .legacyEnvelope, .appToken, .firebaseAppCheck,
        .password(PasswordRouteOptions()), .clientCertificate,
    ])
    func aRouteWhoseModeHasNoOwnerCannotStart(_ access: GatewayConfiguration.Route.Access) throws {
        let routes: [GatewayConfiguration.Route] = [.init(prefix: "/pay", access: access), .init(prefix: "/", access: .open)]
        let refused = #expect(throws: ConfigurationError.self) { _ = try Self.gateway { $0.routes = routes } }
        #expect(refused?.path.hasPrefix("routes") == true, "\(String(describing: refused))")
        // The same decision by the owners themselves, should validation and the features drift apart.
        let error = #expect(throws: ConfigurationError.self) { try Self.gateway().checkRouteOwners(routes) }
        #expect(error?.path == "routes[0].access", "\(String(describing: error))")
        #expect(error?.message.contains(access.mode) == true, "\(String(describing: error))")
        try Self.gateway().checkRouteOwners(Self.routes)
    }

    /// A route made in code is held to what a file is: an option its mode does not take (misspelt,
    /// or another mode's), of the wrong type, or a required one missing stops the gateway, rather
    /// than read as off — a weaker gate than the one written.
    @Test(arguments: [
        GatewayConfiguration.Route.Access(mode: "password", options: ["requireAuthint": .bool(true)]),
        .init(mode: "password", options: ["requireAuthInt": .string("true")]),
        .init(mode: "app-token", options: ["audiance": .string("payments")]),
        .init(mode: "device-key", options: ["keyId": .string("bank-v1")]),
        .init(mode: "legacy-query-hmac"),
    ])
    func aRouteMadeInCodeWithOptionsItsModeDoesNotTakeCannotStart(_ access: GatewayConfiguration.Route.Access) throws {
        let routes: [GatewayConfiguration.Route] = [.init(prefix: "/pay", access: access), .init(prefix: "/", access: .open)]
        let refused = #expect(throws: ConfigurationError.self) {
            _ = try Self.gateway {
                $0.routes = routes
                $0.passwords = .init(realm: "r")
                $0.tokens = .init(issuer: "i", audience: ["payments"], keyFile: "/nonexistent/tokens.pem")
            }
        }
        #expect(refused?.path.hasPrefix("routes[0]") == true, "\(String(describing: refused))")
        let error = #expect(throws: ConfigurationError.self) { try Self.gateway().checkRouteOwners(routes) }
        #expect(error?.path.hasPrefix("routes[0].") == true, "\(String(describing: error))")
    }

    @Test func eachRouteAsksWhatItsAccessModeSays() async throws {
        let gateway = try Self.gateway()
        try await gateway.application().test(.router) { client in
            // Open: past the gate, to an upstream that is not there.
            let open = try await client.execute(uri: "/public/scores", method: .get)
            #expect(open.status == .badGateway && Self.reason(open) == "upstream_unreachable")
            // Verified and device-key routes: nothing unsigned gets past.
            for uri in ["/transfers", "/transfers/1", "/anything"] {
                let refused = try await client.execute(uri: uri, method: .post, body: ByteBuffer(string: "{}"))
                #expect(refused.status == .unauthorized && Self.reason(refused) == "signature_missing", "\(uri)")
            }
            // A shared secret's signature is verified, but /transfers asks for a device key.
            let bank = MessageSigner(key: try SigningKey(secret: GatewayHarness.bankSecret), keyID: "bank-v1", algorithm: HMACSHA256())
            for (path, expected) in [("/transfers", "trust_level_insufficient"), ("/balance", "upstream_unreachable")] {
                let signed = try bank.sign(
                    try HTTPMessage.request(method: "GET", uri: "http://localhost\(path)"),
                    created: Date(),
                    nonce: Nonce.random()
                )
                var headers = HTTPFields()
                for field in signed.fields.lines { headers.append(HTTPField(name: HTTPField.Name(field.name)!, value: field.value)) }
                let answer = try await client.execute(uri: path, method: .get, headers: headers)
                #expect(Self.reason(answer) == expected, "\(path): \(answer.status)")
            }
            #expect(try await client.execute(uri: "/healthz", method: .get).status == .ok)
            #expect(try await client.execute(uri: "/signet/v1/openapi.json", method: .get).status == .ok)
        }
    }

    @Test func theAppsListenerAnswersNoOperatorPathWhenOperatorsHaveAListenerOfTheirOwn() async throws {
        let gateway = try Self.gateway {
            $0.adminToken = String(repeating: "t", count: 32)
            $0.adminListener = .init(listen: .init(host: "127.0.0.1", port: 0))
        }
        try await gateway.application().test(.router) { client in
            for uri in ["/metrics", "/signet/admin/", "/signet/v1/devices/d1", "/METRICS"] {
                let answer = try await client.execute(uri: uri, method: .get)
                #expect(answer.status == .notFound && Self.reason(answer) == "not_found", "\(uri)")
            }
            // Readiness is for the balancer, which probes the traffic port.
            #expect(try await client.execute(uri: "/readyz", method: .get).status != .notFound)
        }
        try await gateway.adminApplication().test(.router) { client in
            let metrics = try await client.execute(uri: "/metrics", method: .get)
            #expect(metrics.status == .unauthorized, "operators' figures need the admin token")
            let proxied = try await client.execute(uri: "/public/scores", method: .get)
            #expect(proxied.status == .notFound, "the admin listener proxies nothing")
        }
    }

    /// Whatever the spelling of a path under `/transfers` — case, dot segments, encoded slashes,
    /// doubled slashes — an unsigned request never reaches the upstream: it is refused for its
    /// signature, or as ambiguous, or not found; never answered by the proxy.
    @Test func noSpellingOfAProtectedPathGetsAnUnsignedRequestPastItsGate() async throws {
        let gateway = try Self.gateway()
        let segments = ["transfers", "TRANSFERS", "Transfers", "public", "..", ".", "%2e%2e", "%2F", "x", "", "%00", ";a"]
        try await gateway.application().test(.router) { client in
            await propertyCheck(count: 300, input: Gen.element(of: segments).map { $0 ?? "" }.array(of: 1...5)) { parts in
                let uri = "/transfers/" + parts.joined(separator: "/")
                guard let answer = try? await client.execute(uri: uri, method: .post, body: ByteBuffer(string: "{}")) else { return }
                let reason = Self.reason(answer)
                // Only a path whose dot segments (plain or percent-encoded) lead out from under
                // /transfers into /public may pass: it is routed, and forwarded, as that path.
                if reason == "upstream_unreachable" {
                    #expect(uri.contains("..") || uri.lowercased().contains("%2e%2e"), "\(uri) reached the upstream unsigned")
                }
                #expect(answer.status != .internalServerError, "\(uri)")
            }
        }
    }
}
