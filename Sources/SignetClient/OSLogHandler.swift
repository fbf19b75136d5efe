// SPDX-License-Identifier: Apache-2.0
#if canImport(os) && canImport(Darwin)
import Logging
import os

/// The client's log on Apple platforms, in the unified log (Console, `log stream`, Xcode) where a
/// phone's standard error, swift-log's default, is read by nobody. ``SignetClientConfiguration``'s
/// `logger` uses it by default there, without a global `LoggingSystem.bootstrap`.
///
/// Levels map to the unified log's: trace and debug to `debug`, info to `info`, notice to
/// `default`, warning and error to `error`, critical to `fault`. Metadata is appended as
/// `key=value`. Messages are `private` (the unified log's default for dynamic text): Signet never
/// logs a field value, key, token or password, but paths may name users.
public struct OSLogHandler: LogHandler {
    public var logLevel: Logging.Logger.Level = .info
    public var metadata: Logging.Logger.Metadata = [:]
    public var metadataProvider: Logging.Logger.MetadataProvider?
    private let log: os.Logger

    /// - Parameters:
    ///   - subsystem: The unified log's subsystem (the app's bundle id is usual).
    ///   - category: Its category (the swift-log label).
    public init(subsystem: String, category: String) {
        log = os.Logger(subsystem: subsystem, category: category)
    }

    public subscript(metadataKey key: String) -> Logging.Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var merged = metadata
        if let provided = metadataProvider?.get() { merged.merge(provided) { $1 } }
        if let extra = event.metadata { merged.merge(extra) { $1 } }
        let suffix = merged.isEmpty ? "" : " " + merged.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        let text = "\(event.message)\(suffix)"
        switch event.level {
        case .trace, .debug: log.debug("\(text, privacy: .private)")
        case .info: log.info("\(text, privacy: .private)")
        case .notice: log.notice("\(text, privacy: .private)")
        case .warning, .error: log.error("\(text, privacy: .private)")
        case .critical: log.fault("\(text, privacy: .private)")
        }
    }
}
#endif
