// SPDX-License-Identifier: Apache-2.0
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// The published HTTP contract: `Contract/openapi.json` (OpenAPI 3.1), compiled into the binary and
/// served at `/signet/v1/openapi.json`. The docs' endpoint table is generated from it, and CI runs
/// schemathesis against a live gateway with it.
enum OpenAPIDocument {
    static let bytes: [UInt8] = PackageResources.openapi_json

    static func response() -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "application/json"
        headers[.cacheControl] = "max-age=300"
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
    }
}
