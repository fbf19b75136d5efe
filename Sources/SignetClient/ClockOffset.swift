// SPDX-License-Identifier: Apache-2.0
import Foundation

/// How far the gateway's clock is from this device's, learned from the `Date` of its answers.
///
/// Every signature is judged against the gateway's clock (`created`, the window): a phone whose
/// user set the time by hand, hours off, would fail every request. Each answer from a configured
/// origin (over the pinned connection) carries `Date`; the client keeps the difference and signs
/// at the device's time plus it. `Date` has whole seconds, so differences within ``tolerance``
/// are taken for a right clock (offset 0): a correct phone never signs with a guess.
enum ClockOffset {
    /// Differences up to this are rounding and latency, not a wrong clock.
    static let tolerance: TimeInterval = 3

    /// The offset `Date: value` implies for an exchange sent at `sent` and answered at `received`
    /// (device time); `nil` when the field is not an IMF-fixdate.
    static func estimate(date value: String, sent: Date, received: Date) -> TimeInterval? {
        guard let server = parseIMFFixdate(value) else { return nil }
        // The gateway wrote the date between the two, truncated to the second.
        let midpoint = sent.timeIntervalSince1970 + received.timeIntervalSince(sent) / 2
        let estimate = server.timeIntervalSince1970 + 0.5 - midpoint
        return abs(estimate) <= tolerance ? 0 : estimate.rounded()
    }

    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
    private static let weekdays = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]

    /// RFC 9110 §5.6.7's preferred format, `Sun, 06 Nov 1994 08:49:37 GMT` — what every current
    /// server sends; the obsolete formats are not worth guessing a clock from.
    static func parseIMFFixdate(_ value: String) -> Date? {
        let bytes = Array(value.utf8)
        guard bytes.count == 29, bytes[3] == UInt8(ascii: ","), bytes[4] == 0x20, bytes[7] == 0x20, bytes[11] == 0x20,
            bytes[16] == 0x20, bytes[19] == UInt8(ascii: ":"), bytes[22] == UInt8(ascii: ":"), bytes[25] == 0x20,
            String(decoding: bytes[26...], as: UTF8.self) == "GMT",
            let weekday = weekdays.firstIndex(of: String(decoding: bytes[0..<3], as: UTF8.self)),
            let month = months.firstIndex(of: String(decoding: bytes[8..<11], as: UTF8.self)),
            let day = number(bytes[5..<7]), let year = number(bytes[12..<16]),
            let hour = number(bytes[17..<19]), let minute = number(bytes[20..<22]), let second = number(bytes[23..<25]),
            (1...31).contains(day), hour < 24, minute < 60, second < 61
        else { return nil }
        let days = daysFromCivil(year: year, month: month + 1, day: day)
        // 1970-01-01 was a Thursday; a date whose weekday disagrees is not one.
        guard ((days % 7) + 11) % 7 == weekday else { return nil }
        return Date(timeIntervalSince1970: TimeInterval(days * 86_400 + hour * 3_600 + minute * 60 + second))
    }

    private static func number(_ digits: ArraySlice<UInt8>) -> Int? {
        var value = 0
        for digit in digits {
            guard (0x30...0x39).contains(digit) else { return nil }
            value = value * 10 + Int(digit - 0x30)
        }
        return value
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
    private static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}
