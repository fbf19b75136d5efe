// SPDX-License-Identifier: Apache-2.0

/// Why a configuration cannot be used, said the way a compiler says it:
/// `signet.json:12:18: routes[2].access: "opne" is not one of open, verified, …`.
///
/// Its own type, not a `SignetError`: those codes are what the gateway answers
/// clients, and a broken file is the operator's, at start-up or reload.
public struct ConfigurationError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What kind of mistake, stable for scripts and tests.
    public enum Kind: String, Sendable {
        /// The file is not JSON (or not strict JSON: a trailing comma, a key given twice).
        case syntax
        /// A key that means nothing where it is.
        case unknownKey = "unknown-key"
        /// A key that must be given.
        case missingKey = "missing-key"
        /// A value of the wrong JSON kind (a string where a number goes).
        case wrongType = "wrong-type"
        /// A value of the right kind that is not allowed, or settings that do not go together.
        case invalidValue = "invalid-value"
        /// A file the configuration names cannot be read, created or used.
        case file
        /// A `SIGNET_*` environment variable with a value that means nothing.
        case environment
        /// A change a reload cannot apply (`listen`, `tls`, `store`, `upstream`…): a restart does.
        case restartRequired = "restart-required"
    }

    public var kind: Kind
    /// The key path (`routes[2].access`), empty for the document as a whole.
    public var path: String
    /// What is wrong, starting with the key it is about.
    public var message: String
    /// The keys valid where an unknown key was found.
    public var validKeys: [String]
    /// The configuration file, once known.
    public var file: String?
    /// Where in the file (1-based), once known.
    public var line: Int?
    public var column: Int?

    /// - Parameters:
    ///   - kind: What kind of mistake.
    ///   - path: The key path the mistake is at, for its line and column.
    ///   - message: What is wrong, naming the key.
    ///   - validKeys: For an unknown key, the keys valid there.
    public init(_ kind: Kind, at path: String, _ message: String, validKeys: [String] = []) {
        self.kind = kind
        self.path = path
        self.message = message
        self.validKeys = validKeys
    }

    /// An invalid value at `path`.
    static func invalid(_ path: String, _ message: String) -> ConfigurationError {
        ConfigurationError(.invalidValue, at: path, message)
    }

    /// This error about a key inside `parent` (`prefix` → `routes[2].prefix`).
    func under(_ parent: String) -> ConfigurationError {
        var nested = self
        nested.path = path.isEmpty ? parent : parent + "." + path
        if message.hasPrefix(path), !path.isEmpty { nested.message = parent + "." + message }
        return nested
    }

    /// This error, placed in `file` at the position `map` has for its path (or the nearest
    /// enclosing key it has).
    func located(in file: String?, map: JSONSourceMap?) -> ConfigurationError {
        var located = self
        if located.file == nil { located.file = file }
        if located.line == nil, let position = map?.position(nearest: path) {
            located.line = position.line
            located.column = position.column
        }
        return located
    }

    public var description: String {
        var location = ""
        if let file { location += file + ":" }
        if let line, let column { location += "\(line):\(column):" }
        let listed = validKeys.isEmpty ? "" : " (valid there: \(validKeys.joined(separator: ", ")))"
        return (location.isEmpty ? "" : location + " ") + message + listed
    }
}
