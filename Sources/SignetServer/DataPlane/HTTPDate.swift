// SPDX-License-Identifier: Apache-2.0
import Foundation
import Synchronization

/// The `Date` field's value (RFC 9110 §5.6.7, IMF-fixdate), made once a second: the data plane
/// writes it on every answer, as Hummingbird's application does from its own cache.
enum HTTPDate {
    private static let cache = Mutex<(second: Int, text: String)>((-1, ""))

    static var now: String {
        let second = Int(Date().timeIntervalSince1970)
        return cache.withLock { cached in
            if cached.second == second { return cached.text }
            cached = (second, format(second))
            return cached.text
        }
    }

    /// `second` since 1970 as IMF-fixdate, e.g. `Sun, 06 Nov 1994 08:49:37 GMT`.
    static func format(_ second: Int) -> String {
        let days = second.floorDivided(by: 86_400)
        let inDay = second - days * 86_400
        // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm), which was a Thursday.
        let shifted = days + 719_468
        let era = shifted.floorDivided(by: 146_097)
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        let weekdays = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"]
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(weekdays[days - days.floorDivided(by: 7) * 7]), \(two(day)) \(months[month - 1]) \(year) "
            + "\(two(inDay / 3600)):\(two(inDay / 60 % 60)):\(two(inDay % 60)) GMT"
    }
}

extension Int {
    fileprivate func floorDivided(by divisor: Int) -> Int {
        let quotient = self / divisor
        return (self % divisor != 0 && (self < 0) != (divisor < 0)) ? quotient - 1 : quotient
    }
}
