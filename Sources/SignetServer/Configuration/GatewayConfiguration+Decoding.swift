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
        let document = map.value
        guard case .object = document else {
            throw ConfigurationError(.syntax, at: "", "the configuration is a JSON object ({…})")
        }
        let decoder = ConfigurationDecoder()
        let configuration: GatewayConfiguration
        do {
            configuration = try decoder.decode(GatewayConfiguration.self, from: defaults.merging(document, replacing: ["store"]))
        } catch let error as ConfigurationError {
            throw error
        } catch DecodingError.keyNotFound(let key, let context) {
            // A misspelt key is the likelier story than a missing one: `acess` beside no `access`.
            let at = Self.path(context.codingPath)
            if case .object(let members) = Self.value(at: context.codingPath, in: document),
                let near = members.map(\.key).sorted().first(where: { Self.isNear($0, key.stringValue) })
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
        }
        // Inside objects too (`routes[0].acess`, `policy.maxAgeSecond`): a key no decoder asked
        // for is read by nothing.
        if let (unknown, valid) = decoder.firstKeyNotAsked(in: document) {
            // A top-level key is quoted: it may be anything, spaces and all.
            let named = unknown.contains(where: { $0 == "." || $0 == "[" }) ? unknown : unknown.debugDescription
            throw ConfigurationError(.unknownKey, at: unknown, "\(named) is not a configuration key", validKeys: valid)
        }
        return configuration
    }

    /// The declared defaults as a document, once: what a key the file leaves out keeps. No
    /// default upstream: leaving it out is an error, not an empty URL.
    private static let defaults: JSONValue = {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        guard let bytes = try? encoder.encode(GatewayConfiguration(upstream: "")),
            case .object(let members) = (try? JSONSourceMap(Array(bytes)))?.value
        else { preconditionFailure("the default configuration encodes as a JSON object") }
        return .object(members.filter { $0.key != "upstream" })
    }()

    /// The value of the document at a decoding path.
    private static func value(at path: [any CodingKey], in document: JSONValue) -> JSONValue? {
        var current = document
        for key in path {
            if let index = key.intValue, case .array(let elements) = current, elements.indices.contains(index) {
                current = elements[index]
            } else if let next = current[key.stringValue] {
                current = next
            } else {
                return nil
            }
        }
        return current
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

    /// Reads a JSON file, then applies `SIGNET_LISTEN_HOST`, `SIGNET_LISTEN_PORT`, `SIGNET_UPSTREAM`,
    /// `SIGNET_STORE` (a file path or a `postgres://` URL), `SIGNET_PUBLIC_SCHEME`,
    /// `SIGNET_PUBLIC_AUTHORITY`, `SIGNET_ADMIN_TOKEN`, `SIGNET_ADMIN_LISTEN_PORT`, `SIGNET_INSTANCE`,
    /// `SIGNET_DEBUG` and `SIGNET_DEVELOPMENT`.
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
        if let instance = environment["SIGNET_INSTANCE"] { self.instance = instance }
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
