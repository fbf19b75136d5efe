// SPDX-License-Identifier: Apache-2.0
import Foundation
import SignetCore
import SignetMiddleware

extension GatewayConfiguration {
    /// Where state lives: `{"sqlite": "signet.sqlite"}`, `{"postgres": "postgres://…"}` or
    /// `{"memory": true}` — exactly one.
    public enum Store: Codable, Sendable, Equatable {
        /// The embedded default: one SQLite file (created on first start).
        case sqlite(String)
        /// A PostgreSQL URL, for several gateway instances.
        case postgres(String)
        /// Nothing survives a restart; for tests and trials.
        case memory

        public var sqlite: String? { if case .sqlite(let path) = self { path } else { nil } }
        public var postgres: String? { if case .postgres(let url) = self { url } else { nil } }

        private enum Kind: String, CodingKey, CaseIterable { case sqlite, postgres, memory }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: Kind.self)
            guard container.allKeys.count == 1, let kind = container.allKeys.first else {
                throw DecodingError.dataCorrupted(
                    .init(codingPath: decoder.codingPath, debugDescription: "configure exactly one of sqlite, postgres, memory")
                )
            }
            switch kind {
            case .sqlite: self = .sqlite(try container.decode(String.self, forKey: .sqlite))
            case .postgres: self = .postgres(try container.decode(String.self, forKey: .postgres))
            case .memory:
                guard try container.decode(Bool.self, forKey: .memory) else {
                    throw DecodingError.dataCorrupted(
                        .init(codingPath: decoder.codingPath + [kind], debugDescription: "only true turns it on")
                    )
                }
                self = .memory
            }
        }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: Kind.self)
            switch self {
            case .sqlite(let path): try container.encode(path, forKey: .sqlite)
            case .postgres(let url): try container.encode(url, forKey: .postgres)
            case .memory: try container.encode(true, forKey: .memory)
            }
        }
    }
}
