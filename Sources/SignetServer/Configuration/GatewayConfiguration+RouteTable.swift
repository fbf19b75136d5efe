// SPDX-License-Identifier: Apache-2.0
import Foundation
import SignetCore

extension GatewayConfiguration {
    /// The route table as operators read it, in the order it is matched (longest prefix first;
    /// unmatched paths are verified): `PREFIX  METHODS  ACCESS [details] [(monitor)]`, one line a route.
    public var routeTableLines: [String] {
        let rows = routes.sorted { ($0.prefix.count, $1.prefix) > ($1.prefix.count, $0.prefix) }.map { route in
            let options = route.optionsText
            let access = route.access.mode + (options.isEmpty ? "" : " " + options) + (route.mode == .monitor ? " (monitor)" : "")
            return (route.prefix, route.methods?.map { $0.uppercased() }.sorted().joined(separator: ",") ?? "any", access)
        }
        let prefixWidth = max(6, rows.map(\.0.count).max() ?? 0)
        let methodWidth = max(7, rows.map(\.1.count).max() ?? 0)
        func line(_ prefix: String, _ methods: String, _ access: String) -> String {
            prefix.padding(toLength: prefixWidth, withPad: " ", startingAt: 0) + "  "
                + methods.padding(toLength: methodWidth, withPad: " ", startingAt: 0) + "  " + access
        }
        var lines = [line("PREFIX", "METHODS", "ACCESS")]
        lines += rows.map { line($0.0, $0.1, $0.2) }
        if !routes.contains(where: { $0.prefix == "/" }) { lines.append(line("(other)", "any", "verified")) }
        return lines
    }
}
