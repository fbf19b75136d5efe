// SPDX-License-Identifier: Apache-2.0
import NIOCore
import NIOPosix

/// A loopback TCP port nothing listens on now, for a process of another project (nginx, Caddy)
/// that must be told its port before it starts: the kernel picks it (bound to port 0, then
/// closed). A port drawn at random from 43000–48000 lies in Linux's ephemeral range, where an
/// outgoing connection of another test may hold it — nginx then fails to bind and its test waits
/// on whatever answers there.
public enum FreePort {
    public static func loopback() async throws -> Int {
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .bind(host: "127.0.0.1", port: 0).get()
        let port = channel.localAddress?.port ?? 0
        try await channel.close()
        return port
    }
}
