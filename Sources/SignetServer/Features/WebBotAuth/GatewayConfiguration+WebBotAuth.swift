// SPDX-License-Identifier: Apache-2.0
import Foundation
import SignetCore

extension GatewayConfiguration {
    /// Known agents (Web Bot Auth, draft-ietf-webbotauth-httpsig-protocol after -01): automated
    /// clients that sign with keys they publish in a directory. Off when absent.
    public struct WebBotAuth: Codable, Sendable, Equatable {
        /// The agents taken, each by the directory its `Signature-Agent` names.
        public var agents: [Agent]
        /// The signature `tag` values taken: `web-bot-auth` when absent; Visa's Trusted Agent
        /// Protocol signs with `agent-browser-auth` and `agent-payer-auth`.
        public var tags: [String]?
        var acceptedTags: Set<String> { Set(tags ?? ["web-bot-auth"]) }
        /// How long a directory is kept when its answer says nothing (`Cache-Control: max-age`):
        /// 3600 s when absent, 60 to 86400.
        public var refreshSeconds: Int?
        var refresh: Int { refreshSeconds ?? 3600 }
        /// The longest `expires - created` an agent's signature may state: 86400 (the draft's 24
        /// hours) when absent, 60 to 86400.
        public var maxValiditySeconds: Int?
        var maxValidity: Int { maxValiditySeconds ?? 86_400 }
        /// Whether a directory must come signed by its keys (§5.5); off when absent: a signature a
        /// directory carries is checked either way.
        public var requireSignedDirectory: Bool?

        /// One known agent.
        public struct Agent: Codable, Sendable, Equatable {
            /// How routes, logs and the upstream (`Signet-Agent`) name it: letters, digits, `.`, `_`, `-`.
            public var name: String
            /// Its key directory: `https://agent.example/.well-known/http-message-signatures-directory`,
            /// or the agent's origin (that path is then taken). Plain http only on loopback.
            public var directory: String

            public init(name: String, directory: String) {
                self.name = name
                self.directory = directory
            }
        }

        public init(agents: [Agent], tags: [String]? = nil, refreshSeconds: Int? = nil, maxValiditySeconds: Int? = nil) {
            self.agents = agents
            self.tags = tags
            self.refreshSeconds = refreshSeconds
            self.maxValiditySeconds = maxValiditySeconds
        }

        /// Directory URL → name, as requests are matched.
        func directories() throws -> [String: String] {
            var byURL: [String: String] = [:]
            for (index, agent) in agents.enumerated() {
                let at = "webBotAuth.agents[\(index)]"
                guard !agent.name.isEmpty, agent.name.utf8.count <= 64,
                    agent.name.utf8.allSatisfy({ $0 == 0x2D || $0 == 0x2E || $0 == 0x5F || (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0) })
                else {
                    throw ConfigurationError.invalid("\(at).name", "\(at).name is 1 to 64 letters, digits, '.', '_' or '-'")
                }
                try GatewayConfiguration.checkHTTPS(agent.directory, name: "\(at).directory")
                let url: String
                do {
                    url = try SignatureAgent.directoryURL(agent.directory)
                } catch {
                    throw ConfigurationError.invalid("\(at).directory", "\(at).directory is an absolute URL")
                }
                guard byURL[url] == nil, !byURL.values.contains(agent.name) else {
                    throw ConfigurationError.invalid(at, "\(at): another agent has this name or directory")
                }
                byURL[url] = agent.name
            }
            return byURL
        }

        func validate() throws {
            guard !agents.isEmpty else { throw ConfigurationError.invalid("webBotAuth.agents", "webBotAuth.agents names at least one agent") }
            _ = try directories()
            if let tags {
                guard !tags.isEmpty, tags.allSatisfy({ !$0.isEmpty && $0.utf8.count <= 64 }) else {
                    throw ConfigurationError.invalid("webBotAuth.tags", "webBotAuth.tags are 1 to 64 characters, at least one")
                }
            }
            if let seconds = refreshSeconds, !(60...86_400).contains(seconds) {
                throw ConfigurationError.invalid("webBotAuth.refreshSeconds", "webBotAuth.refreshSeconds is 60 to 86400")
            }
            if let seconds = maxValiditySeconds, !(60...86_400).contains(seconds) {
                throw ConfigurationError.invalid("webBotAuth.maxValiditySeconds", "webBotAuth.maxValiditySeconds is 60 to 86400")
            }
        }
    }
}
