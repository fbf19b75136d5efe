// SPDX-License-Identifier: Apache-2.0
import Foundation
import SignetCore

extension SignetClient {
    /// The target a redirect's `Location` names, relative to the request it answers (RFC 3986 §5.2,
    /// the forms servers send).
    static func resolve(_ location: String, against base: RequestTarget) throws -> RequestTarget {
        if location.contains("://") { return try RequestTarget(uri: location) }
        if location.hasPrefix("//") { return try RequestTarget(uri: base.scheme + ":" + location) }
        let path: String
        if location.hasPrefix("/") {
            path = location
        } else {
            let directory = base.path.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/")
            path = directory + "/" + location
        }
        return try RequestTarget(uri: "\(base.scheme)://\(base.authority)\(path)")
    }

    /// The origin-form request target (`/path?query`) for the request line.
    static func originForm(_ target: RequestTarget) -> String {
        let path = target.path.isEmpty ? "/" : target.path
        return target.query.map { path + "?" + $0 } ?? path
    }
}
