// SPDX-License-Identifier: Apache-2.0
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A `signet serve` process, the port it listens on and what it printed at start.
public final class ServeProcess: @unchecked Sendable {  // Process is not Sendable; used from one task at a time.
    public let process: Process
    public let port: Int
    /// Standard output up to (and including) `marker`.
    public let banner: String

    /// Starts `signet serve --config config` (with `environment` on top of this process's) and
    /// reads its output, on a thread of its own, until `marker` has been printed.
    public init(
        config: String?,
        folder: URL,
        until marker: String = "\n",
        environment: [String: String] = [:]
    ) async throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: SignetProcess.signetPath)
        process.arguments = ["serve"] + (config.map { ["--config", $0] } ?? []) + ["--log-level", "error"]
        process.currentDirectoryURL = folder
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let out = Pipe.closedOnExec()
        process.standardOutput = out
        process.standardInput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        let handle = out.fileHandleForReading
        let text = try await onOwnThread {
            var text = ""
            // Until the marker, and the gateway's own line whole.
            while !text.contains(marker) || !text.split(separator: "\n", omittingEmptySubsequences: false).dropLast().contains(where: { $0.contains("gateway listening on") }) {
                let chunk = handle.availableData
                guard !chunk.isEmpty else { throw ServeProcessError("signet serve exited before listening: \(text)") }
                text += String(decoding: chunk, as: UTF8.self)
            }
            return text
        }
        // The gateway's own line: an admin listener prints one of its own, maybe first.
        guard let line = text.split(separator: "\n").first(where: { $0.contains("gateway listening on") }),
            let range = line.range(of: "127.0.0.1:"),
            let port = Int(line[range.upperBound...].prefix { $0.isNumber })
        else { throw ServeProcessError("unexpected output: \(text)") }
        self.process = process
        self.port = port
        self.banner = text
    }

    public func kill() {
        Glibc.kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    public func terminate() {
        process.terminate()
        process.waitUntilExit()
    }
}

public struct ServeProcessError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}
