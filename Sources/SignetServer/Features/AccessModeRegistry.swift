// SPDX-License-Identifier: Apache-2.0
import Foundation

/// Every access mode, each registered by the one feature that owns it (``GatewayFeature/accessModes``),
/// read from ``FeatureRegistry``. A route names a mode the registry has, or the configuration is
/// refused as it is read; the gateway then starts only when the mode's owner is configured
/// (``SignetGateway/checkRouteOwners(_:)``): no route is ever left without its gate.
enum AccessModeRegistry {
    /// The modes, in the registry's order (the order errors list them).
    static let modes: [AccessMode] = FeatureRegistry.listed.flatMap { $0.accessModes }

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

    /// Checks every route's mode against the configuration (``check(_:at:in:)``).
    static func check(_ configuration: GatewayConfiguration) throws {
        for (index, route) in configuration.routes.enumerated() {
            _ = try check(route, at: "routes[\(index)]", in: configuration)
        }
    }

    /// Checks one route: its mode is registered, its options are the mode's, and the mode's check
    /// against the configuration passes (``AccessMode/check``); returns the mode's owner.
    ///
    /// - Throws: ``ConfigurationError`` at `at` (`routes[2]`) or below it.
    static func check(_ route: GatewayConfiguration.Route, at: String, in configuration: GatewayConfiguration) throws -> any GatewayFeature.Type {
        guard let (mode, owner) = owners[route.access.mode] else {
            throw ConfigurationError.invalid("\(at).access", "\(at).access: \(route.access.mode.debugDescription) is not one of \(modes.map(\.name).joined(separator: ", "))")
        }
        try checkOptions(route.access, of: mode, at: at)
        if route.mode == .monitor, let why = mode.notMonitorable {
            throw ConfigurationError.invalid("\(at).mode", "\(at).mode: a \(mode.name) route cannot be monitored: \(why)")
        }
        try mode.check(route, configuration, at)
        return owner
    }

    /// The options a route carries are its mode's, of their types, the required ones given: as
    /// reading a file checks them, for a route made in code (an embedder's, a test's), where a
    /// misspelt or mistyped option would otherwise read as off.
    private static func checkOptions(_ access: GatewayConfiguration.Route.Access, of mode: AccessMode, at: String) throws {
        for (name, value) in access.options.sorted(by: { $0.key < $1.key }) {
            guard let option = mode.options.first(where: { $0.name == name }) else {
                throw ConfigurationError.invalid("\(at).\(name)", "\(at).\(name) is not an option of \(mode.name) routes")
            }
            switch (option.kind, value) {
            case (.string, .string), (.bool, .bool): continue
            case (.string, _): throw ConfigurationError(.wrongType, at: "\(at).\(name)", "\(at).\(name): expected a string")
            case (.bool, _): throw ConfigurationError(.wrongType, at: "\(at).\(name)", "\(at).\(name): expected true or false")
            }
        }
        for option in mode.options where option.required && access.options[option.name] == nil {
            throw ConfigurationError.invalid("\(at).\(option.name)", "\(at).\(option.name): a \(mode.name) route needs \(option.purpose)")
        }
    }
}
