// SPDX-License-Identifier: Apache-2.0
import Logging
import Synchronization

/// What a logger was given, for tests that assert on log lines: a `Logger` whose handler keeps
/// every event in memory.
public final class CapturedLogs: Sendable {
    public struct Line: Sendable {
        public var level: Logger.Level
        public var message: String
        public var metadata: [String: String]
    }

    private let lines = Mutex<[Line]>([])

    public init() {}

    public var all: [Line] { lines.withLock { $0 } }

    /// A logger at `level` writing here.
    public func logger(level: Logger.Level = .info) -> Logger {
        var logger = Logger(label: "signet.captured") { _ in Handler(logs: self) }
        logger.logLevel = level
        return logger
    }

    struct Handler: LogHandler {
        let logs: CapturedLogs
        var logLevel: Logger.Level = .trace
        var metadata: Logger.Metadata = [:]

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            let merged = metadata.merging(event.metadata ?? [:]) { $1 }.mapValues { "\($0)" }
            logs.lines.withLock { $0.append(Line(level: event.level, message: "\(event.message)", metadata: merged)) }
        }
    }
}
