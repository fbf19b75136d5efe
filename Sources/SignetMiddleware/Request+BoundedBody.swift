// SPDX-License-Identifier: Apache-2.0
import Hummingbird
import NIOCore
import SignetCore

extension Request {
    /// The whole body, kept in the request for whoever reads it next; `body_too_large` (413) above
    /// `limit` bytes.
    ///
    /// - Parameter what: Names the body in the refusal ("a pin report", "the body").
    package mutating func collectBody(upTo limit: Int, refusing what: String) async throws -> ByteBuffer {
        do {
            return try await collectBody(upTo: limit)
        } catch let error as any HTTPResponseError where error.status == .contentTooLarge {
            throw SignetError(.bodyTooLarge, "\(what) is at most \(limit) bytes")
        }
    }
}
