// SPDX-License-Identifier: Apache-2.0
import Foundation

/// The PostgreSQL server `scripts/test.sh` starts; CI must have one. Tests needing it are skipped
/// (never silently in CI) when it is absent.
public enum TestPostgres {
    public static let url: String? = {
        if let url = ProcessInfo.processInfo.environment["SIGNET_POSTGRES_URL"], !url.isEmpty { return url }
        precondition(ProcessInfo.processInfo.environment["CI"] == nil, "CI must provide SIGNET_POSTGRES_URL")
        return nil
    }()
}

extension TestPostgres {
    /// A PostgreSQL server of the test's own (`scripts/postgres.sh`), on a port of its own, that the
    /// test may stop and start again: an outage without touching the server other tests share.
    public final class Server: Sendable {
        public let url: String
        private let directory: String
        private let port: Int

        private init(url: String, directory: String, port: Int) {
            self.url = url
            self.directory = directory
            self.port = port
        }

        /// Initialises a cluster in a new temporary folder and starts it.
        public static func start() async throws -> Server {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("signet-pg-\(UUID().uuidString)").path
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            // The server's user (postgres, when the tests run as root) walks into it.
            try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: directory)
            // Below Linux's ephemeral ports (32768–60999): a port in that range can be some other
            // test's outgoing connection at that moment, and the server then fails to start.
            let port = Int.random(in: 21_000...29_000)
            let url = try await script(["start", directory + "/pg", String(port)]).trimmingCharacters(in: .whitespacesAndNewlines)
            return Server(url: url, directory: directory, port: port)
        }

        /// Stops the server (`pg_ctl stop -m fast`: connections are closed, new ones refused).
        public func stop() async throws {
            _ = try await Self.script(["stop", directory + "/pg"])
        }

        /// Starts it again on the same port and data.
        public func restart() async throws {
            _ = try await Self.script(["start", directory + "/pg", String(port)])
        }

        /// Stops it if it runs, and removes its folder.
        public func remove() async {
            try? await stop()
            try? FileManager.default.removeItem(atPath: directory)
        }

        private static func script(_ arguments: [String]) async throws -> String {
            let script = SignetProcess.repositoryRoot.appendingPathComponent("scripts/postgres.sh").path
            let result = try await SignetProcess.run("/bin/bash", [script] + arguments)
            guard result.status == 0 else {
                throw HarnessError("scripts/postgres.sh \(arguments.joined(separator: " ")): \(result.stderr)")
            }
            return result.stdout
        }
    }
}
