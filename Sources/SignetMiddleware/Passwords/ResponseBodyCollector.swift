// SPDX-License-Identifier: Apache-2.0
import HTTPTypes
import Hummingbird
import NIOCore

/// Collects what a response body writes, to compute something over it before it is sent; keeps at
/// most `limit` bytes.
package final class ResponseBodyCollector: ResponseBodyWriter {
    package let limit: Int
    private var buffer = ByteBuffer()
    package private(set) var overflowed = false

    package init(limit: Int) {
        self.limit = limit
    }

    /// The whole body, or `nil` when it was larger than the limit.
    package var collected: ByteBuffer? { overflowed ? nil : buffer }

    package func write(_ buffer: ByteBuffer) async throws {
        guard !overflowed else { return }
        var buffer = buffer
        guard self.buffer.readableBytes + buffer.readableBytes <= limit else {
            overflowed = true
            self.buffer = ByteBuffer()
            return
        }
        self.buffer.writeBuffer(&buffer)
    }

    package func finish(_ trailingHeaders: HTTPFields?) async throws {}
}
