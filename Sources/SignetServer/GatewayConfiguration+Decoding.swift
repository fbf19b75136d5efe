// SPDX-License-Identifier: Apache-2.0
import Foundation
import SignetCore
import SignetMiddleware

/// Reading the configuration: JSON over the declared defaults, misspelt keys refused by their path,
/// then the environment.
extension GatewayConfiguration {
    /// Decodes a configuration document over the defaults declared above — the only place they
    /// live: a key the document leaves out keeps its default. Objects merge key by key (so
    /// `"policy": {"maxAgeSeconds": 60}` keeps the other policy defaults); arrays, values and the
    /// `store` (one of three kinds) replace.
    public static func decode(_ data: Data) throws -> GatewayConfiguration {
        let given: Any
        do {
            given = try JSONSerialization.jsonObject(with: data)
        } catch {
            throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "not valid JSON"))
        }
        guard let document = given as? [String: Any] else {
            throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "not a JSON object"))
        }
        // A misspelt key would otherwise be ignored and its default silently used.
        let known = Set(Mirror(reflecting: GatewayConfiguration(upstream: "")).children.compactMap(\.label))
        if let unknown = document.keys.sorted().first(where: { !known.contains($0) }) {
            throw DecodingError.dataCorrupted(
                .init(
                    codingPath: [],
                    debugDescription: "\(unknown.debugDescription) is not a configuration key (known: \(known.sorted().joined(separator: ", ")))"
                )
            )
        }
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        // No default upstream: leaving it out is an error, not an empty URL.
        var defaults = try JSONSerialization.jsonObject(with: encoder.encode(GatewayConfiguration(upstream: "")))
            as? [String: Any] ?? [:]
        defaults["upstream"] = nil
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        let merged = Self.merge(document, over: defaults, replacing: ["store"])
        let configuration = try decoder.decode(
            GatewayConfiguration.self,
            from: JSONSerialization.data(withJSONObject: merged)
        )
        // Inside objects too (`routes[0].acess`, `policy.maxAgeSecond`): what was decoded, encoded
        // again, holds every key decoding used; a given key missing there was not used.
        let used = try JSONSerialization.jsonObject(with: encoder.encode(configuration))
        if let unknown = Self.unusedKey(given: document, used: used, path: "") {
            throw DecodingError.dataCorrupted(
                .init(codingPath: [], debugDescription: "\(unknown) is not a configuration key")
            )
        }
        return configuration
    }

    /// The first key of `given` (depth first, in sorted order) with no counterpart in `used`.
    private static func unusedKey(given: Any, used: Any, path: String) -> String? {
        switch (given, used) {
        case (let given as [String: Any], let used as [String: Any]):
            for key in given.keys.sorted() {
                let at = path.isEmpty ? key : path + "." + key
                guard let inner = used[key] else {
                    if given[key] is NSNull { continue }  // an optional set to null: absent either way
                    return at
                }
                if let found = unusedKey(given: given[key]!, used: inner, path: at) { return found }
            }
        case (let given as [Any], let used as [Any]):
            for (index, element) in zip(given, used).map({ $0 }).enumerated() {
                if let found = unusedKey(given: element.0, used: element.1, path: "\(path)[\(index)]") {
                    return found
                }
            }
        default:
            break
        }
        return nil
    }

    private static func merge(_ given: [String: Any], over defaults: [String: Any], replacing: Set<String>) -> [String: Any] {
        var result = defaults
        for (key, value) in given {
            if !replacing.contains(key), let inner = value as? [String: Any], let base = defaults[key] as? [String: Any] {
                result[key] = merge(inner, over: base, replacing: [])
            } else {
                result[key] = value
            }
        }
        return result
    }

    /// Reads a JSON file, then applies `SIGNET_LISTEN_HOST`, `SIGNET_LISTEN_PORT`, `SIGNET_UPSTREAM`,
    /// `SIGNET_STORE` (a file path or a `postgres://` URL), `SIGNET_PUBLIC_SCHEME`,
    /// `SIGNET_PUBLIC_AUTHORITY`, `SIGNET_ADMIN_TOKEN`, `SIGNET_ADMIN_LISTEN_PORT`, `SIGNET_DEBUG` and
    /// `SIGNET_DEVELOPMENT`.
    public static func load(file: String?, environment: [String: String]) throws -> GatewayConfiguration {
        var configuration: GatewayConfiguration
        if let file {
            guard let data = FileManager.default.contents(atPath: file) else {
                throw SignetError(.malformedMessage, "cannot read configuration file \(file)")
            }
            do {
                configuration = try decode(data)
            } catch let error as DecodingError {
                throw SignetError(.malformedMessage, "configuration \(file): \(Self.describe(error))")
            } catch {
                throw SignetError(.malformedMessage, "configuration \(file): \(error)")
            }
        } else if let upstream = environment["SIGNET_UPSTREAM"] {
            configuration = GatewayConfiguration(upstream: upstream)
        } else {
            throw SignetError(.malformedMessage, "give --config FILE or SIGNET_UPSTREAM")
        }
        if let host = environment["SIGNET_LISTEN_HOST"] { configuration.listen.host = host }
        if let port = environment["SIGNET_LISTEN_PORT"] {
            guard let number = Int(port), (0...65535).contains(number) else {
                throw SignetError(.malformedMessage, "SIGNET_LISTEN_PORT is a port number 0 to 65535, not \"\(port)\"")
            }
            configuration.listen.port = number
        }
        if let port = environment["SIGNET_ADMIN_LISTEN_PORT"] {
            guard let number = Int(port), (0...65535).contains(number) else {
                throw SignetError(.malformedMessage, "SIGNET_ADMIN_LISTEN_PORT is a port number 0 to 65535, not \"\(port)\"")
            }
            guard configuration.adminListener != nil else {
                throw SignetError(.malformedMessage, "SIGNET_ADMIN_LISTEN_PORT needs an adminListener in the configuration")
            }
            configuration.adminListener?.listen.port = number
        }
        if let upstream = environment["SIGNET_UPSTREAM"] { configuration.upstream = upstream }
        if let store = environment["SIGNET_STORE"] {
            configuration.store = store.hasPrefix("postgres") ? .postgres(store) : .sqlite(store)
        }
        if let scheme = environment["SIGNET_PUBLIC_SCHEME"] { configuration.publicScheme = scheme }
        if let authority = environment["SIGNET_PUBLIC_AUTHORITY"] { configuration.publicAuthority = authority }
        if let token = environment["SIGNET_ADMIN_TOKEN"] { configuration.adminToken = token }
        if let debug = environment["SIGNET_DEBUG"] { configuration.debug = try flag(debug, "SIGNET_DEBUG") }
        if let development = environment["SIGNET_DEVELOPMENT"] {
            configuration.development = try flag(development, "SIGNET_DEVELOPMENT")
        }
        try configuration.validate()
        return configuration
    }

    /// An environment switch: a typo ("ture") refused rather than read as off.
    static func flag(_ value: String, _ name: String) throws -> Bool {
        switch value.lowercased() {
        case "1", "true", "yes", "on": return true
        case "0", "false", "no", "off", "": return false
        default: throw SignetError(.malformedMessage, "\(name) is one of 1, true, yes, on, 0, false, no, off, not \"\(value)\"")
        }
    }

    /// `routes[2].access: expected a string`: the key path, then what was wrong there.
    static func describe(_ error: DecodingError) -> String {
        func path(_ keys: [any CodingKey]) -> String {
            keys.reduce("") { text, key in
                if let index = key.intValue { return text + "[\(index)]" }
                return text.isEmpty ? key.stringValue : text + "." + key.stringValue
            }
        }
        switch error {
        case .keyNotFound(let key, let context):
            return "\(path(context.codingPath + [key])): missing"
        case .typeMismatch(let type, let context):
            return "\(path(context.codingPath)): expected \(type)"
        case .valueNotFound(let type, let context):
            return "\(path(context.codingPath)): expected \(type), found null"
        case .dataCorrupted(let context):
            let at = path(context.codingPath)
            return at.isEmpty ? context.debugDescription : "\(at): \(context.debugDescription)"
        @unknown default:
            return "\(error)"
        }
    }
}
