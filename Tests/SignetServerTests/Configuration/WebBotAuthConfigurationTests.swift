// SPDX-License-Identifier: Apache-2.0
import Foundation
import SignetServer
import Testing

/// The `webBotAuth` settings and the routes that take agents, each refusal at its path: a directory
/// over plain HTTP off this machine, two agents of one name or directory, a route naming an agent
/// nobody configured.
@Suite struct WebBotAuthConfigurationTests {
    static func refusal(_ change: (inout GatewayConfiguration) -> Void) -> String? {
        var configuration = GatewayConfiguration(upstream: "http://127.0.0.1:9000")
        configuration.webBotAuth = .init(agents: [.init(name: "example-bot", directory: "https://bot.example")])
        change(&configuration)
        return configuration.refusalPath
    }

    @Test func eachBadSettingIsRefusedAtItsPath() {
        #expect(Self.refusal { _ in } == nil)
        #expect(Self.refusal { $0.webBotAuth?.agents[0].directory = "http://bot.example" } == "webBotAuth.agents[0].directory")
        #expect(Self.refusal { $0.webBotAuth?.agents[0].directory = "http://127.0.0.1:8000/keys" } == nil, "plain http on loopback")
        #expect(Self.refusal { $0.webBotAuth?.agents[0].name = "Example Bot" } == "webBotAuth.agents[0].name")
        #expect(Self.refusal { $0.webBotAuth?.agents.append(.init(name: "example-bot", directory: "https://other.example")) } == "webBotAuth.agents[1]")
        #expect(Self.refusal {
            $0.webBotAuth?.agents.append(.init(name: "twin", directory: "https://BOT.example/.well-known/http-message-signatures-directory"))
        } == "webBotAuth.agents[1]", "the origin and its well-known directory are one directory")
        #expect(Self.refusal { $0.webBotAuth?.agents = [] } == "webBotAuth.agents")
        #expect(Self.refusal { $0.webBotAuth?.tags = [] } == "webBotAuth.tags")
        #expect(Self.refusal { $0.webBotAuth?.refreshSeconds = 10 } == "webBotAuth.refreshSeconds")
        #expect(Self.refusal { $0.webBotAuth?.maxValiditySeconds = 200_000 } == "webBotAuth.maxValiditySeconds")
    }

    @Test func routesNameOnlyConfiguredAgents() {
        func route(_ mode: String, _ options: [String: GatewayConfiguration.Route.Access.Option]) -> GatewayConfiguration.Route {
            .init(prefix: "/api", access: .init(mode: mode, options: options))
        }
        #expect(Self.refusal { $0.routes = [route("agent", [:])] } == nil)
        #expect(Self.refusal { $0.routes = [route("agent", ["agents": .string("example-bot")])] } == nil)
        #expect(Self.refusal { $0.routes = [route("verified", ["agents": .string("*")])] } == nil)
        #expect(Self.refusal { $0.routes = [route("agent", ["agents": .string("nobody")])] } == "routes[0].agents")
        #expect(Self.refusal { $0.routes = [route("verified", ["agents": .string("example-bot, nobody")])] } == "routes[0].agents")
        // Beside a trust level's devices too; not where no signature is verified.
        #expect(Self.refusal { $0.routes = [route("device-key", ["agents": .string("*")])] } == nil)
        #expect(Self.refusal { $0.routes = [route("attested", ["agents": .string("example-bot")])] } == nil)
        #expect(Self.refusal { $0.routes = [route("attested", ["agents": .string("nobody")])] } == "routes[0].agents")
        #expect(Self.refusal { $0.routes = [route("client-certificate", ["agents": .string("*")])] }?.hasPrefix("routes[0]") == true, "agents only beside signatures")
        #expect(Self.refusal {
            $0.webBotAuth = nil
            $0.routes = [route("verified", ["agents": .string("*")])]
        } == "routes[0].agents")
    }
}
