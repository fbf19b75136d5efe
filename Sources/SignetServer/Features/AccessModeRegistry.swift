// SPDX-License-Identifier: Apache-2.0
import Foundation

/// Every access mode, each registered by the one feature that owns it (``GatewayFeature/accessModes``),
/// read from ``FeatureRegistry``. A route names a mode the registry has, or the configuration is
/// refused as it is read; the gateway then starts only when the mode's owner is configured
/// (``SignetGateway/checkRouteOwners(_:)``): no route is ever left without its gate.
enum AccessModeRegistry {
    /// The modes, in the registry's order (the order errors list them).
    static let modes: [AccessMode] = FeatureRegistry.types.flatMap { $0.accessModes }

    /// Each mode's owner.
    private static let owners: [String: (mode: AccessMode, owner: any GatewayFeature.Type)] = {
        var owners: [String: (AccessMode, any GatewayFeature.Type)] = [:]
        for type in FeatureRegistry.types {
            for mode in type.accessModes {
                // Two owners of one name would make the registry's answer an accident of order.
                precondition(owners[mode.name] == nil, "access mode \(mode.name) is registered twice")
                owners[mode.name] = (mode, type)
            }
        }
        return owners
    }()

    static func mode(named name: String) -> AccessMode? { owners[name]?.mode }

    /// The feature type that owns the mode `name`.
    static func owner(of name: String) -> (any GatewayFeature.Type)? { owners[name]?.owner }

    /// Checks every route's mode against the configuration (``AccessMode/check``).
    static func check(_ configuration: GatewayConfiguration) throws {
        for (index, route) in configuration.routes.enumerated() {
            let at = "routes[\(index)]"
            guard let mode = mode(named: route.access.mode) else {
                throw ConfigurationError.invalid("\(at).access", "\(at).access: \(route.access.mode.debugDescription) is not one of \(modes.map(\.name).joined(separator: ", "))")
            }
            try mode.check(route, configuration, at)
        }
    }
}
