// SPDX-License-Identifier: Apache-2.0
import Foundation

/// Runs the built `signet` binary (and other programs) as a user would, capturing their output:
/// the one process runner every test target uses.
public enum SignetProcess {
    public struct Result: Sendable {
        public var status: Int32
        public var stdout: String
        public var stderr: String
        public var lines: [String] { stdout.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) }

        public init(status: Int32, stdout: String, stderr: String) {
            self.status = status
            self.stdout = stdout
            self.stderr = stderr
        }
    }

    /// The repository root (this file is `Tests/SignetTestSupport/SignetProcess.swift`).
    public static let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    /// The known-answer vectors the repository keeps (`Tests/Vectors`).
    public static let vectors = repositoryRoot.appendingPathComponent("Tests/Vectors")

    /// The `signet` executable next to the test bundle (SwiftPM's products directory).
    public static let signetPath: String = {
        let bundle = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        var directory = bundle.deletingLastPathComponent()
        for _ in 0..<4 {
            let candidate = directory.appendingPathComponent("signet").path
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
            directory = directory.deletingLastPathComponent()
        }
        return repositoryRoot.appendingPathComponent(".build/debug/signet").path
    }()

    public static func signet(_ arguments: [String], stdin: [UInt8]? = nil, in directory: URL? = nil) async throws -> Result {
        try await run(signetPath, arguments, stdin: stdin, in: directory)
    }

    /// Runs `executable` (a path, or a name looked up in `PATH`) to its end, waiting on a thread of
    /// its own: a test that blocked a task-pool thread instead (two of them on two cores) could starve
    /// the in-process server the child talks to, and every other test with it.
    public static func run(
        _ executable: String,
        _ arguments: [String],
        stdin: [UInt8]? = nil,
        in directory: URL? = nil
    ) async throws -> Result {
        try await onOwnThread { try runBlocking(executable, arguments, stdin: stdin, in: directory) }
    }

    /// ``run(_:_:stdin:in:)`` on the calling thread, for the few callers that are not async (a
    /// trait's condition); never from a test's body.
    public static func runBlocking(
        _ executable: String,
        _ arguments: [String],
        stdin: [UInt8]? = nil,
        in directory: URL? = nil
    ) throws -> Result {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable.hasPrefix("/") ? executable : "/usr/bin/env")
        process.arguments = executable.hasPrefix("/") ? arguments : [executable] + arguments
        if let directory { process.currentDirectoryURL = directory }
        let out = Pipe.closedOnExec()
        let err = Pipe.closedOnExec()
        process.standardOutput = out
        process.standardError = err
        // No pipe where nothing is written: a child reading stdin sees its end at once.
        let input = stdin.map { _ in Pipe.closedOnExec() }
        process.standardInput = input ?? FileHandle.nullDevice
        try process.run()
        // Standard error is drained on its own thread while standard output is read here, so a child
        // that fills either pipe can never block the other (or this test).
        let stderrData = Drained(err.fileHandleForReading)
        if let stdin, let input {
            input.fileHandleForWriting.write(Data(stdin))
            try input.fileHandleForWriting.close()
        }
        let stdoutData = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Result(
            status: process.terminationStatus,
            stdout: String(decoding: stdoutData, as: UTF8.self),
            stderr: String(decoding: stderrData.wait(), as: UTF8.self)
        )
    }

    /// A fresh temporary directory for one test.
    public static func temporaryDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("signet-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }
}

/// A pipe read to its end on a thread of its own.
private final class Drained: @unchecked Sendable {  // `data` is written once, before `done` is signalled.
    private var data = Data()
    private let done = DispatchSemaphore(value: 0)

    init(_ handle: FileHandle) {
        Thread.detachNewThread { [self] in
            data = handle.readDataToEndOfFile()
            done.signal()
        }
    }

    func wait() -> Data {
        done.wait()
        return data
    }
}
