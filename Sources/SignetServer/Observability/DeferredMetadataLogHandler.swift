// SPDX-License-Identifier: Apache-2.0
import Logging

/// A log handler that keeps the metadata set on a logger to itself until a line is written, then
/// hands it to `base`.
///
/// swift-log's `StreamLogHandler` renders its metadata as text every time a key is set, and
/// Hummingbird sets a request id on every request's logger: the text was built on every request,
/// whether or not a line was ever written — 1–2 % of a proxied request's CPU in issue 39's profile.
/// Lines come out exactly as `base` writes them.
public struct DeferredMetadataLogHandler: LogHandler {
    private var base: any LogHandler
    public var metadata: Logger.Metadata

    public init(_ base: any LogHandler) {
        self.base = base
        metadata = base.metadata
        self.base.metadata = [:]
    }

    public var logLevel: Logger.Level {
        get { base.logLevel }
        set { base.logLevel = newValue }
    }

    public var metadataProvider: Logger.MetadataProvider? {
        get { base.metadataProvider }
        set { base.metadataProvider = newValue }
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var base = self.base
        if !metadata.isEmpty { base.metadata = metadata }
        base.log(event: event)
    }

    /// What `signet serve` writes text lines with: swift-log's own format, on standard error.
    public static func standardError(label: String) -> DeferredMetadataLogHandler {
        DeferredMetadataLogHandler(StreamLogHandler.standardError(label: label))
    }
}
