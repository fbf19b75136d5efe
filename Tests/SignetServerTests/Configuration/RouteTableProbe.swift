// SPDX-License-Identifier: Apache-2.0
import SignetCore
import SignetMiddleware
import SignetStore

@testable import SignetServer

/// Reads the internal route table as the access mode's name, for the route tests.
enum RouteTableProbe {
    static func make(_ routes: [GatewayConfiguration.Route]) throws -> (String, String) -> String {
        let table = try RouteTable(routes)
        return { method, path in table.access(method: method, path: path).mode }
    }
}
