// SPDX-License-Identifier: Apache-2.0
import SignetCore

extension FuzzTarget {
    /// HTTP/1.1 message text, as `signet sign` and `signet verify` read it.
    static let http1Message = FuzzTarget(
        "http1-message",
        property: "a decoded message encodes to text that decodes to the same message",
        seeds: { vectors in
            try vectors.rawMessages() + [
                Array("GET /a?b=c HTTP/1.1\nHost: example.com\nX: 1\n folded\n\n".utf8),
                Array("POST https://example.com/x HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc\n".utf8),
                Array("HTTP/1.1 204 No Content\r\nSignature: a=:AA==:\r\n\r\n".utf8),
            ]
        },
        check: { bytes in
            let codec = HTTP1MessageCodec()
            guard let message = try? codec.decode(bytes) else { return }
            let written = codec.encode(message)
            do {
                let again = try codec.decode(written)
                try expect(again == message, "\(String(decoding: written, as: UTF8.self).debugDescription) decodes to \(again), not \(message)")
            } catch let violation as PropertyViolation {
                throw violation
            } catch {
                throw PropertyViolation(description: "the encoding \(String(decoding: written, as: UTF8.self).debugDescription) does not decode: \(error)")
            }
        }
    )
}
