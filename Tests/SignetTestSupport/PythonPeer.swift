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
        let probe = try? SignetProcess.runBlocking(python, ["-c", "import \(modules)"])
        if probe?.status == 0 { return true }
        precondition(ProcessInfo.processInfo.environment["CI"] == nil, "CI must install \(modules) (SIGNET_PYTHON)")
        return false
    }

    /// pyauth's verdict on a request as it was sent (`wire`: method, url, headers as `[[name,
    /// value]]`, `body_b64`), with the public key `keyPEM` under `keyID`: `ok`, the covered
    /// `components`, `body_verified`, or `error`.
    public static func pyauthVerify(_ algorithm: String, keyPEM: String, keyID: String, wire: [String: Any]) async throws
        -> [String: Any]
    {
        let dir = try SignetProcess.temporaryDirectory()
        try Data(keyPEM.utf8).write(to: dir.appendingPathComponent("key.pem"))
        try JSONSerialization.data(withJSONObject: wire).write(to: dir.appendingPathComponent("m.json"))
        let output = try await run("pyauth_peer.py", ["verify", algorithm, "key.pem", keyID, "m.json"], in: dir)
        guard let verdict = try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any] else {
            throw PythonPeerError("pyauth_peer.py printed no verdict: \(output)")
        }
        return verdict
    }

    /// Runs a script; its standard output, or an error with its standard error.
    public static func run(_ name: String, _ arguments: [String], in directory: URL? = nil) async throws -> String {
        let result = try await SignetProcess.run(python, [script(name)] + arguments, in: directory)
        guard result.status == 0 else { throw PythonPeerError("\(name) failed: \(result.stderr)") }
        return result.stdout
    }
}

/// A Python peer that serves on loopback until stopped: it prints its port as its first line.
public final class PythonServer: @unchecked Sendable {  // Process is not Sendable; used from one task.
    public let process: Process
    public let port: Int

    /// Starts the peer and waits, on a thread of its own, for its port.
    public init(_ name: String, _ arguments: [String]) async throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: PythonPeer.python.hasPrefix("/") ? PythonPeer.python : "/usr/bin/env")
        process.arguments = (PythonPeer.python.hasPrefix("/") ? [] : [PythonPeer.python]) + [PythonPeer.script(name)] + arguments
        let out = Pipe.closedOnExec()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        let handle = out.fileHandleForReading
        let text = try await onOwnThread {
            var text = ""
            while !text.contains("\n") {
                let chunk = handle.availableData
                guard !chunk.isEmpty else { throw PythonPeerError("\(name) exited before it listened") }
                text += String(decoding: chunk, as: UTF8.self)
            }
            return text
        }
        guard let port = Int(text.prefix { $0 != "\n" }) else { throw PythonPeerError("\(name) printed \(text)") }
        self.process = process
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
