// SPDX-License-Identifier: Apache-2.0
import Foundation
import Logging
import NIOSSL
import PostgresNIO
import SignetCore
import SignetStore

/// Connection settings from a `postgres://` URL.
extension PostgresStore {
    /// The client configuration for `postgres://user:password@host:port/database[?sslmode=…]`.
    ///
    /// `sslmode` as libpq spells it: `disable` (the default: loopback or a private network),
    /// `require` (encrypted, server not authenticated), `verify-full` (chain to the system roots or
    /// to `sslrootcert=PATH`, and the host name). `prefer`/`verify-ca` are refused: the first
    /// silently falls back to plain text, the second skips the host check.
    static func configuration(url: String) throws -> PostgresClient.Configuration {
        guard let components = URLComponents(string: url), ["postgres", "postgresql"].contains(components.scheme),
            let host = components.host, let user = components.user
        else { throw SignetError(.storeUnavailable, "not a postgres:// URL") }
        let database = components.path.hasPrefix("/") ? String(components.path.dropFirst()) : components.path
        return PostgresClient.Configuration(
            host: host,
            port: components.port ?? 5432,
            username: user,
            password: components.password?.removingPercentEncoding,
            database: database.isEmpty ? nil : database,
            tls: try tls(components.queryItems ?? [])
        )
    }

    static func tls(_ query: [URLQueryItem]) throws -> PostgresClient.Configuration.TLS {
        let mode = query.last { $0.name == "sslmode" }?.value ?? "disable"
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.minimumTLSVersion = .tlsv12
        switch mode {
        case "disable":
            return .disable
        case "require":
            tls.certificateVerification = .none
            return .require(tls)
        case "verify-full":
            if let rootFile = query.last(where: { $0.name == "sslrootcert" })?.value {
                guard FileManager.default.isReadableFile(atPath: rootFile) else {
                    throw SignetError(.storeUnavailable, "cannot read sslrootcert \(rootFile)")
                }
                tls.trustRoots = .file(rootFile)
            }
            tls.certificateVerification = .fullVerification
            return .require(tls)
        default:
            throw SignetError(.storeUnavailable, "sslmode \(mode) is not supported: use disable, require or verify-full")
        }
    }
}
