// SPDX-License-Identifier: Apache-2.0
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// The small JSON answers of Signet's own endpoints: flat string objects, keys sorted, and
/// timestamps in RFC 3339 with fractions.
package enum JSONResponse {
    package static func make(_ object: [String: String], status: HTTPResponse.Status) throws -> Response {
        let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
        var headers = HTTPFields()
        headers[.contentType] = "application/json"
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }

    /// Any JSON object (nested values, numbers); keys sorted.
    package static func make(object: [String: Any], status: HTTPResponse.Status) throws -> Response {
        let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
        var headers = HTTPFields()
        headers[.contentType] = "application/json"
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }

    package static func rfc3339(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.string(from: date)
    }
}
