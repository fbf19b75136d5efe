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
    ///
    /// - Throws: ``ConfigurationError``, with the line and column of the key it is about.
    public static func decode(_ data: Data) throws -> GatewayConfiguration {
        let map = try JSONSourceMap(Array(data))
        do {
            return try decode(data, map: map)
        } catch let error as ConfigurationError {
            throw error.located(in: nil, map: map)
        }
    }

    private static func decode(_ data: Data, map: JSONSourceMap) throws -> GatewayConfiguration {
        let given: Any
        do {
            given = try JSONSerialization.jsonObject(with: data)
        } catch {
            throw ConfigurationError(.syntax, at: "", "not valid JSON")
        }
        guard let document = given as? [String: Any] else {
            throw ConfigurationError(.syntax, at: "", "the configuration is a JSON object ({…})")
        }
        // A misspelt key would otherwise be ignored and its default silently used.
        let known = Set(Mirror(reflecting: GatewayConfiguration(upstream: "")).children.compactMap(\.label)).sorted()
        if let unknown = document.keys.sorted().first(where: { !known.contains($0) }) {
            throw ConfigurationError(.unknownKey, at: unknown, "\(unknown.debugDescription) is not a configuration key", validKeys: known)
        }
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        let configuration: GatewayConfiguration
        do {
            // No default upstream: leaving it out is an error, not an empty URL.
            var defaults = try JSONSerialization.jsonObject(with: encoder.encode(GatewayConfiguration(upstream: "")))
                as? [String: Any] ?? [:]
            defaults["upstream"] = nil
            let merged = Self.merge(document, over: defaults, replacing: ["store"])
            configuration = try decoder.decode(GatewayConfiguration.self, from: JSONSerialization.data(withJSONObject: merged))
        } catch let error as ConfigurationError {
            throw error
        } catch DecodingError.keyNotFound(let key, let context) {
            // A misspelt key is the likelier story than a missing one: `acess` beside no `access`.
            let at = Self.path(context.codingPath)
            if let object = Self.object(at: context.codingPath, in: document),
                let near = object.keys.sorted().first(where: { Self.isNear($0, key.stringValue) })
            {
                let nearPath = at.isEmpty ? near : at + "." + near
                throw ConfigurationError(
                    .unknownKey,
                    at: nearPath,
                    "\(nearPath) is not a configuration key (did you mean \(key.stringValue)?)"
                )
            }
            let missing = Self.path(context.codingPath + [key])
            throw ConfigurationError(.missingKey, at: at, "\(missing): missing")
        } catch let error as DecodingError {
            throw Self.configurationError(error)
        } catch {
            throw ConfigurationError(.syntax, at: "", "\(error)")
        }
        // Inside objects too (`routes[0].acess`, `policy.maxAgeSecond`): what was decoded, encoded
        // again, holds every key decoding used; a given key missing there was not used.
        guard let used = try? JSONSerialization.jsonObject(with: encoder.encode(configuration)) else {
            throw ConfigurationError(.invalidValue, at: "", "the configuration does not encode again")
        }
        if let (unknown, valid) = Self.unusedKey(given: document, used: used, decoded: configuration, path: "") {
            throw ConfigurationError(.unknownKey, at: unknown, "\(unknown) is not a configuration key", validKeys: valid ?? [])
        }
        return configuration
    }

    /// The first key of `given` (depth first, in sorted order) with no counterpart in `used`, and
    /// the keys valid where it is (read from the decoded value, `decoded`, by reflection).
    private static func unusedKey(given: Any, used: Any, decoded: Any?, path: String) -> (String, [String]?)? {
        switch (given, used) {
        case (let given as [String: Any], let used as [String: Any]):
            for key in given.keys.sorted() {
                let at = path.isEmpty ? key : path + "." + key
                guard let inner = used[key] else {
                    if given[key] is NSNull { continue }  // an optional set to null: absent either way
                    return (at, decoded.flatMap(Self.fieldNames))
                }
                if let found = unusedKey(given: given[key]!, used: inner, decoded: decoded.flatMap { Self.field(key, of: $0) }, path: at) {
                    return found
                }
            }
        case (let given as [Any], let used as [Any]):
            for (index, element) in zip(given, used).map({ $0 }).enumerated() {
                let decodedElement = decoded.flatMap { Self.element(index, of: $0) }
                if let found = unusedKey(given: element.0, used: element.1, decoded: decodedElement, path: "\(path)[\(index)]") {
                    return found
                }
            }
        default:
            break
        }
        return nil
    }

    /// The stored properties of a decoded struct: the keys a configuration object may hold.
    private static func fieldNames(_ value: Any) -> [String]? {
        guard let value = unwrapped(value) else { return nil }
        let mirror = Mirror(reflecting: value)
        guard mirror.displayStyle == .struct else { return nil }
        return mirror.children.compactMap(\.label).filter { !$0.hasPrefix("_") }.sorted()
    }

    private static func field(_ key: String, of value: Any) -> Any? {
        unwrapped(value).flatMap { Mirror(reflecting: $0).children.first { $0.label == key }?.value }
    }

    private static func element(_ index: Int, of value: Any) -> Any? {
        guard let value = unwrapped(value), Mirror(reflecting: value).displayStyle == .collection else { return nil }
        return Mirror(reflecting: value).children.dropFirst(index).first?.value
    }

    private static func unwrapped(_ value: Any) -> Any? {
        let mirror = Mirror(reflecting: value)
        guard mirror.displayStyle == .optional else { return value }
        return mirror.children.first.flatMap { unwrapped($0.value) }
    }

    /// The object of the given document at a decoding path.
    private static func object(at path: [any CodingKey], in document: Any) -> [String: Any]? {
        var current: Any = document
        for key in path {
            if let index = key.intValue, let list = current as? [Any], list.indices.contains(index) {
                current = list[index]
            } else if let object = current as? [String: Any], let next = object[key.stringValue] {
                current = next
            } else {
                return nil
            }
        }
        return current as? [String: Any]
    }

    /// Two spellings of one key: at most two letters apart (case aside), not equal.
    static func isNear(_ a: String, _ b: String) -> Bool {
        let a = Array(a.lowercased()), b = Array(b.lowercased())
        guard a != b, abs(a.count - b.count) <= 2 else { return false }
        var previous = Array(0...b.count)
        for i in 1...max(a.count, 1) where !a.isEmpty {
            var row = [i] + Array(repeating: 0, count: b.count)
            for j in 1...max(b.count, 1) where !b.isEmpty {
                row[j] = min(previous[j] + 1, row[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            previous = row
        }
        return previous[b.count] <= 2
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
    ///
    /// - Throws: ``ConfigurationError``: placed in the file at its key's line and column.
    public static func load(file: String?, environment: [String: String]) throws -> GatewayConfiguration {
        var configuration: GatewayConfiguration
        var map: JSONSourceMap?
        if let file {
            guard let data = FileManager.default.contents(atPath: file) else {
                throw ConfigurationError(.file, at: "", "cannot read configuration file \(file)")
            }
            do {
                map = try JSONSourceMap(Array(data))
                configuration = try decode(data, map: map!)
            } catch let error as ConfigurationError {
                throw error.located(in: file, map: map)
            }
        } else if let upstream = environment["SIGNET_UPSTREAM"] {
            configuration = GatewayConfiguration(upstream: upstream)
        } else {
            throw ConfigurationError(.missingKey, at: "", "give --config FILE or SIGNET_UPSTREAM")
        }
        try configuration.apply(environment: environment)
        do {
            try configuration.validate()
        } catch let error as ConfigurationError {
            throw error.located(in: file, map: map)
        } catch {
            throw ConfigurationError(.invalidValue, at: "", "\(error)").located(in: file, map: map)
        }
        return configuration
    }

    /// `SIGNET_*` over the file's values; a value that means nothing is refused, not ignored.
    private mutating func apply(environment: [String: String]) throws {
        if let host = environment["SIGNET_LISTEN_HOST"] { listen.host = host }
        if let port = environment["SIGNET_LISTEN_PORT"] { listen.port = try Self.port(port, "SIGNET_LISTEN_PORT") }
        if let port = environment["SIGNET_ADMIN_LISTEN_PORT"] {
            guard adminListener != nil else {
                throw ConfigurationError(.environment, at: "", "SIGNET_ADMIN_LISTEN_PORT needs an adminListener in the configuration")
            }
            adminListener?.listen.port = try Self.port(port, "SIGNET_ADMIN_LISTEN_PORT")
        }
        if let upstream = environment["SIGNET_UPSTREAM"] { self.upstream = upstream }
        if let store = environment["SIGNET_STORE"] {
            self.store = store.hasPrefix("postgres") ? .postgres(store) : .sqlite(store)
        }
        if let scheme = environment["SIGNET_PUBLIC_SCHEME"] { publicScheme = scheme }
        if let authority = environment["SIGNET_PUBLIC_AUTHORITY"] { publicAuthority = authority }
        if let token = environment["SIGNET_ADMIN_TOKEN"] { adminToken = token }
        if let debug = environment["SIGNET_DEBUG"] { self.debug = try Self.flag(debug, "SIGNET_DEBUG") }
        if let development = environment["SIGNET_DEVELOPMENT"] {
            self.development = try Self.flag(development, "SIGNET_DEVELOPMENT")
        }
    }

    /// What a Swift type is called in JSON, for people who write the file, not the code.
    static func jsonName(of type: Any.Type) -> String {
        let name = "\(type)"
        if name == "String" { return "a string" }
        if name == "Bool" { return "true or false" }
        if ["Int", "Int64", "Int32", "UInt8", "Double", "TimeInterval"].contains(name) { return "a number" }
        if name.hasPrefix("Array") { return "a list" }
        if name == "Date" { return "a date (RFC 3339)" }
        return "an object"
    }

    /// An environment port number, refused rather than ignored when it is none.
    static func port(_ value: String, _ name: String) throws -> Int {
        guard let number = Int(value), (0...65535).contains(number) else {
            throw ConfigurationError(.environment, at: "", "\(name) is a port number 0 to 65535, not \"\(value)\"")
        }
        return number
    }

    /// An environment switch: a typo ("ture") refused rather than read as off.
    static func flag(_ value: String, _ name: String) throws -> Bool {
        switch value.lowercased() {
        case "1", "true", "yes", "on": return true
        case "0", "false", "no", "off", "": return false
        default: throw ConfigurationError(.environment, at: "", "\(name) is one of 1, true, yes, on, 0, false, no, off, not \"\(value)\"")
        }
    }

    /// `a.b[0].c`: a decoding path as the configuration's errors name it.
    static func path(_ keys: [any CodingKey]) -> String {
        keys.reduce("") { text, key in
            if let index = key.intValue { return text + "[\(index)]" }
            return text.isEmpty ? key.stringValue : text + "." + key.stringValue
        }
    }

    /// `routes[2].access: expected a string`: the key path, then what was wrong there.
    static func configurationError(_ error: DecodingError) -> ConfigurationError {
        switch error {
        case .keyNotFound(let key, let context):
            return ConfigurationError(.missingKey, at: path(context.codingPath), "\(path(context.codingPath + [key])): missing")
        case .typeMismatch(let type, let context):
            let at = path(context.codingPath)
            return ConfigurationError(.wrongType, at: at, "\(at): expected \(jsonName(of: type))")
        case .valueNotFound(let type, let context):
            let at = path(context.codingPath)
            return ConfigurationError(.wrongType, at: at, "\(at): expected \(jsonName(of: type)), found null")
        case .dataCorrupted(let context):
            let at = path(context.codingPath)
            return ConfigurationError(.invalidValue, at: at, at.isEmpty ? context.debugDescription : "\(at): \(context.debugDescription)")
        @unknown default:
            return ConfigurationError(.invalidValue, at: "", "\(error)")
        }
    }
}
