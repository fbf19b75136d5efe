// SPDX-License-Identifier: Apache-2.0
import HTTPTypes
import Hummingbird
import NIOCore

/// Collects what a response body writes, to compute something over it before it is sent.
final class ResponseBodyCollector: ResponseBodyWriter {
    let limit: Int
    private(set) var buffer = ByteBuffer()
    private(set) var overflowed = false

    init(limit: Int) {
        self.limit = limit
    }

    /// The whole body, or `nil` when it was larger than the limit (``buffer`` still holds all of it).
    var collected: ByteBuffer? { overflowed ? nil : buffer }

    func write(_ buffer: ByteBuffer) async throws {
        var buffer = buffer
        self.buffer.writeBuffer(&buffer)
        if self.buffer.readableBytes > limit { overflowed = true }
    }

    func finish(_ trailingHeaders: HTTPFields?) async throws {}
}
