// SPDX-License-Identifier: Apache-2.0

/// The `Signature-Agent` request field of Web Bot Auth (draft-ietf-webbotauth-httpsig-protocol, after
/// -01 §5.2.1): where the key of an automated agent's signature is published. A Dictionary keyed by
/// signature label whose members are `https` URIs without parameters — the key directory itself, or
/// an origin whose directory is at ``wellKnownPath`` — or, in the legacy form, one string for the
/// request's signature.
public enum SignatureAgent {
    public static let fieldName = "Signature-Agent"
    public static let wellKnownPath = "/.well-known/http-message-signatures-directory"
    /// The field may not be longer: a handful of URLs.
    public static let maximumFieldBytes = 4096

    /// The agent's directory URL for the signature labelled `label`, and whether the field was the
    /// legacy string (covered as plain `signature-agent`, not `;key=`). `nil` when the request has no
    /// member for that label (or only one with parameters, which §5.2.1 says to ignore).
    ///
    /// - Throws: `malformed_header` for a field that does not parse or a member that is not an
    ///   absolute `https` URI.
    public static func directory(for label: String, in values: [String]) throws -> (url: String, legacy: Bool)? {
        guard !values.isEmpty else { return nil }
        let value = values.joined(separator: ", ")
        guard value.utf8.count <= maximumFieldBytes else {
            throw SignetError(.malformedHeader, "Signature-Agent is longer than \(maximumFieldBytes) bytes")
        }
        if let item = try? StructuredFieldParser.parseItem(value), case .string(let uri) = item.bareItem {
            return (try directoryURL(uri), true)
        }
        let dictionary: SFDictionary
        do {
            dictionary = try StructuredFieldParser.parseDictionary(value, limits: .init(members: 8, innerListItems: 0, parameters: 8))
        } catch {
            throw SignetError(.malformedHeader, "Signature-Agent is neither a dictionary of URIs nor one URI")
        }
        guard let entry = dictionary[label], case .item(let item) = entry.member, item.parameters.isEmpty else { return nil }
        guard case .string(let uri) = item.bareItem else {
            throw SignetError(.malformedHeader, "the Signature-Agent member \(label) is not a string")
        }
        return (try directoryURL(uri), false)
    }

    /// The directory a member names: the URI without its query, or the well-known directory of an
    /// origin. Scheme and host lowercased, so configured and received URLs compare as strings.
    public static func directoryURL(_ uri: String) throws -> String {
        let lower = uri.lowercased()
        guard lower.hasPrefix("https://") || lower.hasPrefix("http://") else {
            throw SignetError(.malformedHeader, "a Signature-Agent URI is absolute https")
        }
        let scheme = lower.hasPrefix("https://") ? "https" : "http"
        var rest = Substring(uri.dropFirst(scheme.count + 3))
        if let query = rest.firstIndex(where: { $0 == "?" || $0 == "#" }) { rest = rest[..<query] }
        let slash = rest.firstIndex(of: "/") ?? rest.endIndex
        let authority = rest[..<slash].lowercased()
        guard !authority.isEmpty, !authority.contains("@"),
            authority.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F })
        else {
            throw SignetError(.malformedHeader, "a Signature-Agent URI names no host, or a user")
        }
        let path = rest[slash...]
        return "\(scheme)://\(authority)" + (path.isEmpty || path == "/" ? wellKnownPath : String(path))
    }
}
