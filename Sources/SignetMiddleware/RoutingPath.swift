// SPDX-License-Identifier: Apache-2.0
import SignetCore

/// The path an upstream will act on, so that routing and forwarding see the same thing.
///
/// `/public/../api/items` is `/api/items` to nginx, Tomcat and most frameworks; matching the route
/// table on the path as received would let it through as `/public`. So the gateway decodes the
/// percent-escapes of unreserved characters, removes dot-segments (RFC 3986 §6.2.2.2, §5.2.4), routes
/// on the result and forwards the result. Paths that servers read in different ways are refused
/// with `path_ambiguous`: an encoded `/` or `\`, a `\`, NUL, an empty segment (`//`, merged by
/// nginx), a `;` (Tomcat, Jetty and Spring drop path parameters, others keep them), malformed
/// escapes, escapes whose bytes are not valid UTF-8 (overlong forms, surrogates, code points above
/// U+10FFFF: Foundation's `URL` reads such a path as empty, `/`, and decoders differ on the rest),
/// any byte RFC 3986 does not allow in a path segment, a `#` anywhere (HTTP clients drop the
/// fragment, so `/admin#` would route as a segment `admin#` and reach the upstream as `/admin`),
/// and a query byte that is not visible ASCII (no request line carries one). The signature is still
/// checked against the path the client sent and signed.
package enum RoutingPath {
    /// The normalised origin-form target: the path as described above, the query untouched.
    ///
    /// - Throws: `path_ambiguous` (400) for the paths listed in the type's description.
    package static func normalize(_ target: String) throws -> String {
        // Nearly every target is routed as sent: found so in one pass over its bytes, without the
        // copies below (two arrays a request).
        if isNormal(target.utf8) { return target }
        let bytes = Array(target.utf8)
        let queryStart = bytes.firstIndex(of: UInt8(ascii: "?")) ?? bytes.endIndex
        guard bytes.first == UInt8(ascii: "/") else {
            throw SignetError(.pathAmbiguous, "the request target is not an absolute path")
        }
        guard !bytes.contains(UInt8(ascii: "#")) else {
            throw SignetError(.pathAmbiguous, "the request target has a fragment ('#')")
        }
        var decoded: [UInt8] = []
        decoded.reserveCapacity(queryStart)
        var escapesNonASCII = false
        var index = 0
        while index < queryStart {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "%"):
                guard index + 2 < queryStart, let high = FormURLEncoding.hexValue(bytes[index + 1]),
                    let low = FormURLEncoding.hexValue(bytes[index + 2])
                else { throw SignetError(.pathAmbiguous, "the path has a malformed percent-escape") }
                let value = high << 4 | low
                if value == UInt8(ascii: "/") || value == UInt8(ascii: "\\") || value == 0 {
                    throw SignetError(.pathAmbiguous, "the path encodes a slash, backslash or NUL")
                }
                if isUnreserved(value) {
                    decoded.append(value)
                } else {
                    escapesNonASCII = escapesNonASCII || value >= 0x80
                    decoded += [UInt8(ascii: "%"), hexDigit(high), hexDigit(low)]
                }
                index += 3
                continue
            case UInt8(ascii: "\\"), 0:
                throw SignetError(.pathAmbiguous, "the path has a backslash or NUL")
            case UInt8(ascii: ";"):
                throw SignetError(.pathAmbiguous, "the path has a ';' parameter, which servers read differently")
            default:
                guard isPathCharacter(byte) else {
                    throw SignetError(.pathAmbiguous, "the path has a byte RFC 3986 does not allow unencoded")
                }
                decoded.append(byte)
            }
            index += 1
        }
        if escapesNonASCII { try checkUTF8(bytes[..<queryStart]) }
        guard bytes[queryStart...].allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            throw SignetError(.pathAmbiguous, "the query has a byte that is not visible ASCII")
        }
        let path = try removeDotSegments(decoded)
        if path.count == queryStart, path[...] == bytes[..<queryStart] { return target }
        return String(decoding: path + bytes[queryStart...], as: UTF8.self)
    }

    /// The path with every escape decoded is UTF-8 as RFC 3629 defines it: Swift's validation
    /// refuses overlong forms, surrogates and code points above U+10FFFF. Escapes are known to be
    /// well formed here; literal bytes are ASCII, so a sequence split by one is refused too.
    private static func checkUTF8(_ path: ArraySlice<UInt8>) throws {
        var decoded: [UInt8] = []
        decoded.reserveCapacity(path.count)
        var index = path.startIndex
        while index < path.endIndex {
            if path[index] == UInt8(ascii: "%"), let high = FormURLEncoding.hexValue(path[index + 1]),
                let low = FormURLEncoding.hexValue(path[index + 2])
            {
                decoded.append(high << 4 | low)
                index += 3
            } else {
                decoded.append(path[index])
                index += 1
            }
        }
        guard String(validating: decoded, as: UTF8.self) != nil else {
            throw SignetError(.pathAmbiguous, "the path escapes bytes that are not UTF-8")
        }
    }

    /// RFC 3986 §5.2.4 over an absolute path, refusing empty segments other than a trailing one.
    private static func removeDotSegments(_ path: [UInt8]) throws -> [UInt8] {
        let segments = path.dropFirst().split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false)
        var output: [ArraySlice<UInt8>] = []
        var trailingSlash = false
        for (position, segment) in segments.enumerated() {
            let isLast = position == segments.count - 1
            trailingSlash = false
            switch segment.count {
            case 0 where !isLast:
                throw SignetError(.pathAmbiguous, "the path has an empty segment ('//')")
            case 0:
                trailingSlash = position > 0
            case 1 where segment.first == UInt8(ascii: "."):
                trailingSlash = true
            case 2 where segment.allSatisfy({ $0 == UInt8(ascii: ".") }):
                if !output.isEmpty { output.removeLast() }
                trailingSlash = true
            default:
                output.append(segment)
            }
        }
        var result: [UInt8] = [UInt8(ascii: "/")]
        for (position, segment) in output.enumerated() {
            if position > 0 { result.append(UInt8(ascii: "/")) }
            result += segment
        }
        if trailingSlash, !output.isEmpty { result.append(UInt8(ascii: "/")) }
        return result
    }

    /// A target ``normalize(_:)`` returns as it is, with nothing to refuse: an absolute path of
    /// `pchar`s and `/` with no escape, no `;`, no dot-segment and no empty segment but a trailing
    /// one, then nothing or a query of visible ASCII with no `#`. Anything else takes the full
    /// path through ``normalize(_:)``, which refuses or rewrites it.
    private static func isNormal(_ target: String.UTF8View) -> Bool {
        guard target.first == UInt8(ascii: "/") else { return false }
        var inQuery = false
        var segmentLength = 0
        var segmentIsDots = true
        for byte in target.dropFirst() {
            if inQuery {
                guard byte > 0x20, byte < 0x7F, byte != UInt8(ascii: "#") else { return false }
                continue
            }
            if byte == UInt8(ascii: "/") || byte == UInt8(ascii: "?") {
                // An empty segment is refused unless it ends the path; `.` and `..` are removed.
                if segmentLength == 0, byte == UInt8(ascii: "/") { return false }
                if segmentIsDots, segmentLength == 1 || segmentLength == 2 { return false }
                inQuery = byte == UInt8(ascii: "?")
                segmentLength = 0
                segmentIsDots = true
                continue
            }
            guard byte != UInt8(ascii: "%"), isPathCharacter(byte) else { return false }
            segmentLength += 1
            segmentIsDots = segmentIsDots && byte == UInt8(ascii: ".")
        }
        return inQuery || !segmentIsDots || (segmentLength != 1 && segmentLength != 2)
    }

    /// RFC 3986 `pchar` and `/`, less `%` (handled as an escape) and `;` (refused above).
    private static func isPathCharacter(_ byte: UInt8) -> Bool {
        isUnreserved(byte) || "/!$&'()*+,=:@".utf8.contains(byte)
    }

    private static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
            UInt8(ascii: "~"):
            true
        default: false
        }
    }

    private static func hexDigit(_ value: UInt8) -> UInt8 {
        value < 10 ? UInt8(ascii: "0") + value : UInt8(ascii: "A") + value - 10
    }
}
