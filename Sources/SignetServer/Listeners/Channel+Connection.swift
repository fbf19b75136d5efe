// SPDX-License-Identifier: Apache-2.0
import NIOCore

extension Channel {
    /// Whether this channel is an HTTP/2 stream: its parent is a connection, whose own parent is
    /// the listening socket (an HTTP/1.1 connection's parent is the listening socket itself).
    var isHTTP2Stream: Bool { parent?.parent != nil }

    /// The connection a request came on — where its TLS and PROXY handlers are: this channel, or
    /// an HTTP/2 stream's parent.
    var connection: any Channel { isHTTP2Stream ? parent ?? self : self }
}
