// SPDX-License-Identifier: Apache-2.0
import Foundation
import Logging

/// swift-log as one JSON object per line (`signet serve --log-format json`), for log pipelines
/// that parse rather than read: `time` (RFC 3339, milliseconds, UTC), `level`, `label`,
/// `message`, then each metadata key as a field of its own (the access log's `route`, `status`, …).
///
/// Our own because none of the libraries that build here writes JSON lines; it is small, and the
/// fields are exactly the metadata given (nothing is added that could carry a secret).
public struct JSONLogHandler: LogHandler {
    public var logLevel: Logger.Level = .info
    public var metadata: Logger.Metadata = [:]
    public let label: String
    private let write: @Sendable (String) -> Void

    /// - Parameters:
    ///   - label: The logger's label, written as `label`.
    ///   - write: Where each line goes (standard error by default, as swift-log's own handler).
    public init(label: String, write: @escaping @Sendable (String) -> Void = JSONLogHandler.standardError) {
        self.label = label
        self.write = write
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var object: [String: Any] = [:]
        for (key, value) in metadata.merging(event.metadata ?? [:], uniquingKeysWith: { $1 }) {
            object[key] = Self.json(value)
        }
        object["time"] = Self.timestamp(Date())
        object["level"] = event.level.rawValue
        object["label"] = label
        object["message"] = "\(event.message)"
        // A value JSON cannot hold is written as its text rather than the line dropped.
        guard
            let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]))
                ?? (try? JSONSerialization.data(withJSONObject: object.mapValues { "\($0)" }, options: [.sortedKeys, .withoutEscapingSlashes]))
        else { return }
        write(String(decoding: data, as: UTF8.self) + "\n")
    }

    public static let standardError: @Sendable (String) -> Void = { line in
        FileHandle.standardError.write(Data(line.utf8))
    }

    static func json(_ value: Logger.Metadata.Value) -> Any {
        switch value {
        case .string(let text): text
        // Numbers and truth values as JSON's own: `"status":200`, not `"status":"200"`.
        case .stringConvertible(let number as any JSONLogNumber) where number.jsonNumber.isFinite: number.jsonNumber
        case .stringConvertible(let number as Int): number
        case .stringConvertible(let number as Double) where number.isFinite: number
        case .stringConvertible(let truth as Bool): truth
        case .stringConvertible(let convertible): "\(convertible)"
        case .array(let values): values.map(json)
        case .dictionary(let values): values.mapValues(json)
        }
    }

    static func timestamp(_ date: Date) -> String {
        date.formatted(.iso8601.year().month().day().timeZone(separator: .omitted).time(includingFractionalSeconds: true).timeSeparator(.colon).dateSeparator(.dash))
    }
}

/// A metadata value that `--log-format json` writes as a number (``Milliseconds``), whatever its text.
protocol JSONLogNumber {
    var jsonNumber: Double { get }
}
