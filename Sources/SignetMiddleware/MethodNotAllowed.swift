// SPDX-License-Identifier: Apache-2.0
import HTTPTypes
import SignetCore

/// A path that exists, asked with a method it does not take: `405 method_not_allowed`, with `Allow`
/// naming the methods it does take (RFC 9110 §15.5.6), rendered by ``ProblemMiddleware``.
public struct MethodNotAllowed: Error, Sendable, CustomStringConvertible {
    /// What the path takes, in the order `Allow` lists them.
    public var allowed: [HTTPRequest.Method]

    public init(allowed: [HTTPRequest.Method]) {
        self.allowed = allowed
    }

    /// The `Allow` field's value.
    public var allow: String { allowed.map(\.rawValue).joined(separator: ", ") }

    public var error: SignetError { SignetError(.methodNotAllowed, "this path takes \(allow)") }

    public var description: String { error.description }
}
