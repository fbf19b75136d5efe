// SPDX-License-Identifier: Apache-2.0
import Foundation
import NIOCore
import NIOPosix

#if canImport(Glibc)
    import Glibc
#endif

/// nginx as a reverse proxy in front of an upstream: one worker, kept-alive upstream connections,
/// no access log — the peer `signet-bench gateway --compare nginx` measures the gateway against.
/// It inherits this process's CPU affinity, so under `taskset -c 0 signet-bench …` nginx's worker
/// runs on the gateway's core.
final class NginxReverseProxy {
    let port: Int
    private let process: Process
    private let folder: URL

    /// Starts nginx on a free loopback port, proxying to `upstream` (`http://host:port`).
    init(upstream: String, folder: URL) async throws {
        guard let url = URL(string: upstream), let host = url.host, let upstreamPort = url.port else {
            throw BenchError("the upstream for nginx is http://host:port, not \(upstream)")
        }
        self.folder = folder.appendingPathComponent("nginx")
        try FileManager.default.createDirectory(at: self.folder, withIntermediateDirectories: true)
        port = try await Self.freePort()
        let path = self.folder.path
        let configuration = """
            worker_processes 1;
            daemon off;
            master_process off;
            pid \(path)/nginx.pid;
            error_log \(path)/error.log warn;
            events { worker_connections 4096; }
            http {
              access_log off;
              client_body_temp_path \(path)/client;
              proxy_temp_path \(path)/proxy;
              fastcgi_temp_path \(path)/fastcgi;
              uwsgi_temp_path \(path)/uwsgi;
              scgi_temp_path \(path)/scgi;
              upstream backend { server \(host):\(upstreamPort); keepalive 64; }
              server {
                listen 127.0.0.1:\(port);
                location / {
                  proxy_pass http://backend;
                  proxy_http_version 1.1;
                  proxy_set_header Connection "";
                }
              }
            }
            """
        let file = self.folder.appendingPathComponent("nginx.conf")
        try Data(configuration.utf8).write(to: file)
        process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["nginx", "-p", path, "-c", file.path]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        do {
            try process.run()
        } catch {
            throw BenchError("cannot start nginx (apt-get install nginx-light): \(error)")
        }
        try await waitUntilListening()
    }

    /// Stops it with `SIGKILL`: it inherits the `SIGTERM` and `SIGINT` this process ignores (the
    /// gateway's graceful shutdown takes them over), and it holds nothing worth a graceful stop.
    func stop() {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    private func waitUntilListening() async throws {
        let deadline = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < deadline {
            guard process.isRunning else {
                let log = (try? String(contentsOf: folder.appendingPathComponent("error.log"), encoding: .utf8)) ?? ""
                throw BenchError("nginx exited at start: \(log)")
            }
            if let channel = try? await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .connect(host: "127.0.0.1", port: port).get()
            {
                try? await channel.close()
                return
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        stop()
        throw BenchError("nginx did not listen on 127.0.0.1:\(port) within 10 s")
    }

    /// A port nothing listens on now (the kernel's pick for a socket bound to port 0).
    private static func freePort() async throws -> Int {
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton).bind(host: "127.0.0.1", port: 0).get()
        let port = channel.localAddress?.port
        try? await channel.close()
        guard let port else { throw BenchError("no free port") }
        return port
    }
}

struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
