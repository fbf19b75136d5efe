// SPDX-License-Identifier: Apache-2.0
import Foundation
import SignetStore

/// Requests accepted and refused per minute, drawn as SVG paths on the server: no script, no
/// front-end build, nothing for the Content-Security-Policy to allow. One path per series keeps a
/// day (1,440 minutes) a few kilobytes.
struct ActivityChart: Sendable {
    let title: String
    let minutes: Int
    let width: Int
    let height = 120
    let acceptedPath: String
    let refusedPath: String
    let accepted: Int
    let refused: Int
    /// The busiest minute, the top of the scale.
    let peak: Int
    let summary: String

    /// - Parameters:
    ///   - counts: Counts of at least the last `minutes` minutes.
    ///   - minutes: How many minutes the chart spans, ending with `lastMinute`.
    init(title: String, counts: [ActivityCount], lastMinute: Int64, minutes: Int) {
        self.title = title
        self.minutes = minutes
        let first = lastMinute - Int64(minutes) + 1
        var acceptedPerMinute = [Int](repeating: 0, count: minutes)
        var refusedPerMinute = [Int](repeating: 0, count: minutes)
        for count in counts where count.minute >= first && count.minute <= lastMinute {
            let index = Int(count.minute - first)
            switch count.outcome {
            case "rejected": refusedPerMinute[index] += count.count
            case "accepted", "open", "registered", "attested", "pin_report": acceptedPerMinute[index] += count.count
            default: break
            }
        }
        // Eight pixels a minute for an hour, one for a day.
        let step = minutes <= 120 ? 8 : 1
        width = minutes * step
        let busiest = zip(acceptedPerMinute, refusedPerMinute).map { $0 + $1 }.max() ?? 0
        self.peak = busiest
        // The scale's top; at least 1 so an idle hour draws nothing rather than dividing by zero.
        let peak = max(1, busiest)
        acceptedPath = Self.bars(
            acceptedPerMinute,
            base: [Int](repeating: 0, count: minutes),
            peak: peak,
            step: step,
            height: height
        )
        refusedPath = Self.bars(refusedPerMinute, base: acceptedPerMinute, peak: peak, step: step, height: height)
        accepted = acceptedPerMinute.reduce(0, +)
        refused = refusedPerMinute.reduce(0, +)
        summary = "\(title): \(accepted) accepted, \(refused) refused; busiest minute \(busiest) requests"
    }

    /// One closed rectangle per minute with requests, stacked on `base`.
    private static func bars(_ values: [Int], base: [Int], peak: Int, step: Int, height: Int) -> String {
        let plot = Double(height - 4)
        let barWidth = max(1, step - (step > 2 ? 2 : 0))
        var path = ""
        for (index, value) in values.enumerated() where value > 0 {
            let bottom = Double(height) - Double(base[index]) / Double(peak) * plot
            let top = bottom - Double(value) / Double(peak) * plot
            path += "M\(index * step) \(format(bottom))V\(format(top))h\(barWidth)V\(format(bottom))z"
        }
        return path
    }

    private static func format(_ value: Double) -> String {
        String(format: "%.1f", value)
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

    init(counts: [ActivityCount], lastMinute: Int64) {
        var hour: [String: Int] = [:]
        var day: [String: Int] = [:]
        for count in counts where count.outcome == "rejected" && count.minute > lastMinute - 1_440 {
            day[count.reason, default: 0] += count.count
            if count.minute > lastMinute - 60 { hour[count.reason, default: 0] += count.count }
        }
        let most = max(1, day.values.max() ?? 1)
        rows = day.sorted { ($0.value, $1.key) > ($1.value, $0.key) }.map {
            Row(reason: $0.key, lastHour: hour[$0.key] ?? 0, lastDay: $0.value, barWidth: max(1, $0.value * 200 / most))
        }
    }
}
