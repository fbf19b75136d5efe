// SPDX-License-Identifier: Apache-2.0
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A process left running while the test goes on — `signet serve` whose log lines it waits for, an
/// `openssl s_client` connection it holds open — with its output read as it comes, on a thread of
/// its own, and its standard input open for the test to write.
public final class RunningProcess: @unchecked Sendable {  // `output` is behind its lock; the thread only appends.
    public let process: Process
    /// The process's standard input.
    public let input: FileHandle
    private let output = Mutex("")

    /// Starts `executable` (a path, or a name looked up in `PATH`); `mergingErrors` reads standard
    /// error with standard output, as a container's log does.
    public init(_ executable: String, _ arguments: [String], in directory: URL? = nil, mergingErrors: Bool = false) throws {
        process = Process()
        process.executableURL = URL(fileURLWithPath: executable.hasPrefix("/") ? executable : "/usr/bin/env")
        process.arguments = executable.hasPrefix("/") ? arguments : [executable] + arguments
        if let directory { process.currentDirectoryURL = directory }
        let stdin = Pipe.closedOnExec()
        let stdout = Pipe.closedOnExec()
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = mergingErrors ? stdout : FileHandle.nullDevice
        try process.run()
        input = stdin.fileHandleForWriting
        let handle = stdout.fileHandleForReading
        Thread.detachNewThread { [self] in
            while true {
                let chunk = handle.availableData
                if chunk.isEmpty { return }
                output.withLock { $0 += String(decoding: chunk, as: UTF8.self) }
            }
        }
    }

    /// What it wrote so far, by line.
    public var lines: [String] { output.withLock { $0 }.split(separator: "\n").map(String.init) }

    /// Whether `done` holds of its lines within `timeout`.
    public func wait(for done: ([String]) -> Bool, timeout: Duration = .seconds(10)) async throws -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if done(lines) { return true }
            try await Task.sleep(for: .milliseconds(25))
        }
        return done(lines)
    }

    /// Whether a line containing `text` was written within `timeout`.
    public func wait(for text: String, timeout: Duration = .seconds(10)) async throws -> Bool {
        try await wait(for: { $0.contains { $0.contains(text) } }, timeout: timeout)
    }

    /// Kills it (`SIGKILL`: no clean-up of its own) and waits for its end.
    public func kill() {
        Glibc.kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    /// Sends it `signal` and waits for its end without holding a thread of Swift's pool (a server's
    /// clean shutdown can take a while, and a blocked pool stalls every other test): `SIGKILL` after
    /// `grace`. A server whose workers outlive their master (nginx) needs `SIGTERM`.
    public func stop(_ signal: Int32, grace: Duration = .seconds(10)) async {
        Glibc.kill(process.processIdentifier, signal)
        let deadline = ContinuousClock.now + grace
        while process.isRunning, ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(20))
        }
        if process.isRunning { Glibc.kill(process.processIdentifier, SIGKILL) }
        while process.isRunning { try? await Task.sleep(for: .milliseconds(20)) }
    }
}
