// SPDX-License-Identifier: Apache-2.0
import Foundation
import HTTPTypes
import SignetCore

/// What ties a request's log line to the upstream's and to a trace: its `X-Request-Id` (the
/// client's or the balancer's when it sends a usable one, else one made here and added to the
/// request, so the upstream receives it) and, for the log line, the trace id of a W3C `traceparent`.
struct RequestCorrelation: Sendable {
    static let requestIDField = HTTPField.Name("X-Request-Id")!
    static let traceparentField = HTTPField.Name("traceparent")!

    let requestID: String
    /// The request had none: ``requestID`` was made here and is added to it.
    let isNew: Bool

    init(_ fields: HTTPFields) {
        let given = fields[values: Self.requestIDField]
        if given.count == 1, Self.isUsable(given[0]) {
            requestID = given[0]
            isNew = false
        } else {
            requestID = Self.newID()
            // A value that is not usable stays as sent (a signature may cover it); the log line
            // carries this one.
            isNew = given.isEmpty
        }
    }

    /// A random (version 4) UUID in lowercase, from the system's generator: Foundation's `UUID()`
    /// opens, reads and closes `/dev/urandom` on Linux each time — three system calls and a path
    /// lookup on every request that came without an id (issue 39's profile).
    static func newID() -> String {
        var generator = SystemRandomNumberGenerator()
        let high: UInt64 = generator.next()
        let low: UInt64 = generator.next()
        // Written straight into the string's storage: one allocation a request, where arrays of
        // the bytes, the digits and the text made four.
        return String(unsafeUninitializedCapacity: 36) { text in
            var written = 0
            for index in 0..<16 {
                var byte = UInt8(truncatingIfNeeded: (index < 8 ? high : low) >> (8 * UInt64(7 - index % 8)))
                if index == 6 { byte = byte & 0x0F | 0x40 }  // version 4
                if index == 8 { byte = byte & 0x3F | 0x80 }  // RFC 9562 variant
                if index == 4 || index == 6 || index == 8 || index == 10 {
                    text[written] = UInt8(ascii: "-")
                    written += 1
                }
                text[written] = Hex.digit(byte >> 4)
                text[written + 1] = Hex.digit(byte & 0x0F)
                written += 2
            }
            return written
        }
    }

    /// The trace id of the request's `traceparent`: read only when its line is written.
    static func traceID(_ fields: HTTPFields) -> String? {
        fields[values: traceparentField].first.flatMap(traceID(traceparent:))
    }

    /// 1 to 128 characters a log pipeline takes as they are: letters, digits, `-._:/+=`.
    static func isUsable(_ value: String) -> Bool {
        (1...128).contains(value.utf8.count)
            && value.utf8.allSatisfy { byte in
                (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                    || "-._:/+=".utf8.contains(byte)
            }
    }

    /// The trace id of `version-traceid-parentid-flags` (W3C Trace Context §3.2), when it is one:
    /// 32 lowercase hex digits, not all zero.
    static func traceID(traceparent: String) -> String? {
        let parts = traceparent.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count >= 4, parts[0].count == 2, parts[1].count == 32, parts[2].count == 16, parts[3].count == 2,
            parts[0] != "ff",
            parts.prefix(4).allSatisfy({ $0.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) } }),
            parts[1].contains(where: { $0 != "0" })
        else { return nil }
        return String(parts[1])
    }
}
