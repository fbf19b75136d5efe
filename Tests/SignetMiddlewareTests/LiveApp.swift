// SPDX-License-Identifier: Apache-2.0
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import SignetCore

/// A plain Hummingbird app over real HTTP on loopback (HummingbirdTesting's live framework), as an app
/// that embeds the middleware runs it: no gateway, no database.
struct LiveAnswer {
    var status: Int
    var headers: HTTPFields
    var body: [UInt8]
    var text: String { String(decoding: body, as: UTF8.self) }
    var json: [String: Any] { (try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any]) ?? [:] }
    var reason: String? { json["reason"] as? String }
}

extension TestClientProtocol {
    /// Sends a SignetCore message: its path and query, its fields and body.
    func send(_ message: HTTPMessage) async throws -> LiveAnswer {
        let target = message.target!
        var headers = HTTPFields()
        for line in message.fields.lines where !["host", "content-length"].contains(line.name.lowercased()) {
            headers.append(HTTPField(name: HTTPField.Name(line.name)!, value: line.value))
        }
        return try await send(
            message.method!,
            target.pathValue + (target.query.map { "?" + $0 } ?? ""),
            headers: headers,
            body: message.body
        )
    }

    func send(
        _ method: String,
        _ path: String,
        headers: HTTPFields = [:],
        body: [UInt8]? = nil
    ) async throws -> LiveAnswer {
        let response = try await execute(
            uri: path,
            method: HTTPRequest.Method(method)!,
            headers: headers,
            body: body.map { ByteBuffer(bytes: $0) }
        )
        return LiveAnswer(status: Int(response.status.code), headers: response.headers, body: Array(buffer: response.body))
    }

    func sendJSON(_ method: String, _ path: String, _ object: [String: Any], headers: HTTPFields = [:]) async throws
        -> LiveAnswer
    {
        var headers = headers
        headers[.contentType] = "application/json"
        return try await send(method, path, headers: headers, body: Array(try JSONSerialization.data(withJSONObject: object)))
    }
}
