// SPDX-License-Identifier: Apache-2.0
import HTTPTypes
import Hummingbird
import NIOCore

/// Collects what a response body writes, to compute something over it before it is sent; keeps at
/// most `limit` bytes.
final class ResponseBodyCollector: ResponseBodyWriter {
    let limit: Int
    private var buffer = ByteBuffer()
    private(set) var overflowed = false

    init(limit: Int) {
        self.limit = limit
    }

    /// The whole body, or `nil` when it was larger than the limit.
    var collected: ByteBuffer? { overflowed ? nil : buffer }

    func write(_ buffer: ByteBuffer) async throws {
        guard !overflowed else { return }
        var buffer = buffer
        guard self.buffer.readableBytes + buffer.readableBytes <= limit else {
            overflowed = true
            self.buffer = ByteBuffer()
            return
        }
        self.buffer.writeBuffer(&buffer)
    }

    func finish(_ trailingHeaders: HTTPFields?) async throws {}
}
