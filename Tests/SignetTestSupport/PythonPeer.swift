// SPDX-License-Identifier: Apache-2.0
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The independent Python implementations the interop tests run as processes (`Tests/Interop/`),
/// with the interpreter `scripts/test.sh` prepares (`SIGNET_PYTHON`).
public enum PythonPeer {
    public static let python = ProcessInfo.processInfo.environment["SIGNET_PYTHON"] ?? "python3"

    /// The path of a script in `Tests/Interop/`.
    public static func script(_ name: String) -> String {
        SignetProcess.repositoryRoot.appendingPathComponent("Tests/Interop/\(name)").path
    }

    /// Whether the interpreter imports `modules`. In CI the peers must be there: a missing one stops
    /// the run rather than skipping its tests silently.
    public static func available(_ modules: String) -> Bool {
        let probe = try? SignetProcess.run(python, ["-c", "import \(modules)"])
        if probe?.status == 0 { return true }
        precondition(ProcessInfo.processInfo.environment["CI"] == nil, "CI must install \(modules) (SIGNET_PYTHON)")
        return false
    }

    /// Runs a script; its standard output, or an error with its standard error.
    public static func run(_ name: String, _ arguments: [String], in directory: URL? = nil) throws -> String {
        let result = try SignetProcess.run(python, [script(name)] + arguments, in: directory)
        guard result.status == 0 else { throw PythonPeerError("\(name) failed: \(result.stderr)") }
        return result.stdout
    }

    /// ``run(_:_:in:)`` off Swift's cooperative threads, for a peer that talks to a server in this
    /// process while the test waits.
    public static func runDetached(_ name: String, _ arguments: [String], in directory: URL? = nil) async throws -> String {
        try await detached { try run(name, arguments, in: directory) }
    }
}

/// A Python peer that serves on loopback until stopped: it prints its port as its first line.
public final class PythonServer: @unchecked Sendable {  // Process is not Sendable; used from one task.
    public let process: Process
    public let port: Int

    public init(_ name: String, _ arguments: [String]) throws {
        process = Process()
        process.executableURL = URL(fileURLWithPath: PythonPeer.python.hasPrefix("/") ? PythonPeer.python : "/usr/bin/env")
        process.arguments = (PythonPeer.python.hasPrefix("/") ? [] : [PythonPeer.python]) + [PythonPeer.script(name)] + arguments
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        var text = ""
        while !text.contains("\n") {
            let chunk = out.fileHandleForReading.availableData
            guard !chunk.isEmpty else { throw PythonPeerError("\(name) exited before it listened") }
            text += String(decoding: chunk, as: UTF8.self)
        }
        guard let port = Int(text.prefix { $0 != "\n" }) else { throw PythonPeerError("\(name) printed \(text)") }
        self.port = port
    }

    /// SIGKILL: children of Foundation's Process start with signals blocked, SIGTERM included.
    public func stop() {
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }
}

public struct PythonPeerError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}
