// SPDX-License-Identifier: Apache-2.0
import SignetCore
import SignetMiddleware
import SignetStore

@testable import SignetServer

/// Reads the internal route table as short names, for the route tests.
enum RouteTableProbe {
    static func make(_ routes: [GatewayConfiguration.Route]) throws -> (String, String) -> String {
        let table = try RouteTable(routes)
        return { method, path in
            switch table.requirement(method: method, path: path) {
            case .open: "open"
            case .verified: "verified"
            case .trustLevel(let level): level.rawValue
            case .legacyQueryHMAC: "legacy"
            case .legacyEnvelope: "envelope"
            case .clientCertificate: "mtls"
            case .password: "password"
            case .passwordOrDevice: "password-or-device"
            case .tokens: "tokens"
            case .playIntegrity: "play-integrity"
            }
        }
    }
}
