// SPDX-License-Identifier: Apache-2.0
import Foundation
import SignetStore

/// Requests accepted and refused over a span, drawn as SVG on the server — no script, no front-end
/// build, nothing for the Content-Security-Policy to allow — and read as Grafana's panels are: a
/// y axis in requests with round ticks and its unit, a time axis in UTC with round ticks, stacked
/// bars per bucket (a minute over the last hour, a quarter of an hour over the last day, so a
/// day's 96 bars stay readable at any width).
struct ActivityChart: Sendable {
    struct Tick: Sendable {
        /// Where the tick sits along its axis, in the chart's coordinates.
        let position: Double
        let label: String
    }

    let title: String
    /// The y axis's unit: `requests / min`, `requests / 15 min`.
    let unit: String
    let acceptedPath: String
    let refusedPath: String
    let accepted: Int
    let refused: Int
    /// The busiest bar's requests.
    let peak: Int
    let yTicks: [Tick]
    let xTicks: [Tick]
    let summary: String

    /// The chart's coordinates: a fixed box scaled as a whole (text keeps its shape), the plot
    /// inside margins for the axes' labels.
    static let width = 720
    static let height = 200
    static let left = 48.0
    static let right = 8.0
    static let top = 10.0
    static let bottom = 26.0
    static var plotWidth: Double { Double(width) - left - right }
    static var plotHeight: Double { Double(height) - top - bottom }

    /// - Parameters:
    ///   - counts: Counts of at least the last `minutes` minutes.
    ///   - minutes: How many minutes the chart spans, ending with `lastMinute` (a multiple of
    ///     `bucketMinutes`).
    ///   - bucketMinutes: Minutes per bar.
    ///   - tickMinutes: Minutes between the time axis's labels, on the clock's round values.
    init(title: String, counts: [ActivityCount], lastMinute: Int64, minutes: Int, bucketMinutes: Int, tickMinutes: Int) {
        self.title = title
        unit = bucketMinutes == 1 ? "requests / min" : "requests / \(bucketMinutes) min"
        let buckets = minutes / bucketMinutes
        // Bars end on the current bucket's boundary, so a bucket is always whole minutes of the clock.
        let lastBucket = Self.floor(lastMinute, bucketMinutes)
        let first = lastBucket - Int64((buckets - 1) * bucketMinutes)
        var acceptedPerBucket = [Int](repeating: 0, count: buckets)
        var refusedPerBucket = [Int](repeating: 0, count: buckets)
        for count in counts where count.minute >= first && count.minute < lastBucket + Int64(bucketMinutes) {
            let index = Int((count.minute - first) / Int64(bucketMinutes))
            switch count.outcome {
            case "rejected": refusedPerBucket[index] += count.count
            case "accepted", "open", "registered", "attested", "pin_report": acceptedPerBucket[index] += count.count
            default: break
            }
        }
        let busiest = zip(acceptedPerBucket, refusedPerBucket).map { $0 + $1 }.max() ?? 0
        peak = busiest
        let (scaleTop, step) = Self.scale(for: busiest)
        yTicks = stride(from: 0, through: scaleTop, by: step).map {
            Tick(position: Self.y(Double($0), top: scaleTop), label: Self.count($0))
        }
        let slot = Self.plotWidth / Double(buckets)
        acceptedPath = Self.bars(acceptedPerBucket, base: [Int](repeating: 0, count: buckets), top: scaleTop, slot: slot)
        refusedPath = Self.bars(refusedPerBucket, base: acceptedPerBucket, top: scaleTop, slot: slot)
        var xTicks: [Tick] = []
        let span = Int64(buckets * bucketMinutes)
        var minute = Self.floor(first + Int64(tickMinutes) - 1, tickMinutes)
        while minute <= first + span {
            let offset = Double(minute - first) / Double(span)
            xTicks.append(Tick(position: Self.left + offset * Self.plotWidth, label: Self.clock(minute)))
            minute += Int64(tickMinutes)
        }
        self.xTicks = xTicks
        accepted = acceptedPerBucket.reduce(0, +)
        refused = refusedPerBucket.reduce(0, +)
        summary = "\(title): \(accepted) accepted, \(refused) refused; busiest bar \(busiest) \(unit), "
            + "from \(Self.clock(first)) to \(Self.clock(first + span)) UTC"
    }

    /// The axis's top and its step: 1, 2 or 5 times a power of ten, four or five steps to the top.
    static func scale(for peak: Int) -> (top: Int, step: Int) {
        guard peak > 4 else { return (max(peak, 1), 1) }
        var magnitude = 1
        while magnitude * 10 <= peak / 4 { magnitude *= 10 }
        let step = [1, 2, 5, 10].map { $0 * magnitude }.first { $0 * 5 >= peak } ?? magnitude * 10
        return ((peak + step - 1) / step * step, step)
    }

    static func y(_ value: Double, top: Int) -> Double {
        Self.top + plotHeight - value / Double(top) * plotHeight
    }

    /// One closed rectangle per bar with requests, stacked on `base`.
    private static func bars(_ values: [Int], base: [Int], top: Int, slot: Double) -> String {
        let gap = slot >= 4 ? 1.0 : 0
        var path = ""
        for (index, value) in values.enumerated() where value > 0 {
            let bottom = y(Double(base[index]), top: top)
            let upper = y(Double(base[index] + value), top: top)
            path += "M\(format(left + Double(index) * slot + gap / 2)) \(format(bottom))"
                + "V\(format(upper))h\(format(slot - gap))V\(format(bottom))z"
        }
        return path
    }

    /// `1,250` as `1.3k`, so labels stay inside the margin.
    static func count(_ value: Int) -> String {
        switch value {
        case ..<10_000: return "\(value)"
        case ..<1_000_000: return "\(format(Double(value) / 1_000))k"
        default: return "\(format(Double(value) / 1_000_000))M"
        }
    }

    /// A minute since 1970 as `HH:MM` in UTC.
    static func clock(_ minute: Int64) -> String {
        let inDay = ((minute % 1_440) + 1_440) % 1_440
        return String(format: "%02d:%02d", inDay / 60, inDay % 60)
    }

    static func floor(_ minute: Int64, _ multiple: Int) -> Int64 {
        let multiple = Int64(multiple)
        return (minute >= 0 ? minute : minute - multiple + 1) / multiple * multiple
    }

    /// A coordinate to a tenth of a pixel, without a trailing `.0`.
    static func format(_ value: Double) -> String {
        let text = String(format: "%.1f", value)
        return text.hasSuffix(".0") ? String(text.dropLast(2)) : text
    }
}

/// Refusals by reason code over a span, most frequent first, with a bar width for each.
struct RefusalBreakdown: Sendable {
    struct Row: Sendable {
        let reason: String
        let lastHour: Int
        let lastDay: Int
        /// Of 200 pixels, relative to the most frequent reason over the day.
        let barWidth: Int
    }

    let rows: [Row]

    /// - Parameters:
    ///   - counts: The activity counts of the last day.
    ///   - lastMinute: The current minute.
    ///   - outcome: `rejected`, or `monitored`: what `monitor` routes forwarded that enforcing
    ///     would have refused.
    init(counts: [ActivityCount], lastMinute: Int64, outcome: String = "rejected") {
        var hour: [String: Int] = [:]
        var day: [String: Int] = [:]
        for count in counts where count.outcome == outcome && count.minute > lastMinute - 1_440 {
            day[count.reason, default: 0] += count.count
            if count.minute > lastMinute - 60 { hour[count.reason, default: 0] += count.count }
        }
        let most = max(1, day.values.max() ?? 1)
        rows = day.sorted { ($0.value, $1.key) > ($1.value, $0.key) }.map {
            Row(reason: $0.key, lastHour: hour[$0.key] ?? 0, lastDay: $0.value, barWidth: max(1, $0.value * 200 / most))
        }
    }
}
