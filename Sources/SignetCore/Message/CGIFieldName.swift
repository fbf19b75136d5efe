// SPDX-License-Identifier: Apache-2.0

/// A field name as a CGI-style server (PHP, WSGI, Rack) reads it: lowercased, `_` as `-`, so
/// `Signet_Key_Id` is `signet-key-id`. The verifier and the gateway's forwarding rules compare
/// names this way, so no spelling of a field slips past either.
package enum CGIFieldName {
    package static func folded(_ name: String) -> String {
        // Names from HTTPTypes are lowercased already and most have no `_`: no copy then.
        if !name.utf8.contains(where: { $0 == UInt8(ascii: "_") || ($0 >= 0x41 && $0 <= 0x5A) }) { return name }
        return String(decoding: name.utf8.map { $0 == UInt8(ascii: "_") ? UInt8(ascii: "-") : ($0 >= 0x41 && $0 <= 0x5A ? $0 | 0x20 : $0) }, as: UTF8.self)
    }
}
