import Foundation

/// How a garage decodes dates: its own default, recognised as such so that it can take a
/// fast path, or any of Foundation's strategies.
package enum DateDecoding: Sendable {
    case garageDefault
    case strategy(JSONDecoder.DateDecodingStrategy)

    package var strategy: JSONDecoder.DateDecodingStrategy {
        switch self {
        case .garageDefault: return DateCoding.defaultDecodingStrategy
        case .strategy(let strategy): return strategy
        }
    }
}

/// The garage's default date strategies, and the date formats GarageStorage wrote.
package enum DateCoding {
    /// Dates are written as their `timeIntervalSinceReferenceDate`, in the shortest text that
    /// reads back as the same `Double`: a date round-trips exactly.
    package static let defaultEncodingStrategy: JSONEncoder.DateEncodingStrategy = .deferredToDate

    /// Reads the default format, and also ISO 8601 strings, such as the
    /// `yyyy-MM-dd'T'HH:mm:ssZZZZZ` strings GarageStorage wrote.
    package static let defaultDecodingStrategy: JSONDecoder.DateDecodingStrategy = .custom(decodeDefault)

    @Sendable
    package static func decodeDefault(_ decoder: any Decoder) throws -> Date {
        let container = try decoder.singleValueContainer()
        if let seconds = try? container.decode(Double.self) {
            return Date(timeIntervalSinceReferenceDate: seconds)
        }
        return try decodeDefault(string: try container.decode(String.self), codingPath: container.codingPath)
    }

    /// The default strategy for a date written as a string.
    package static func decodeDefault(string text: String, codingPath: @autoclosure () -> [any CodingKey]) throws -> Date {
        if let date = parseISO8601(text) {
            return date
        }
        throw DecodingError.dataCorrupted(.init(
            codingPath: codingPath(),
            debugDescription: "Expected a date, as seconds since 2001-01-01 or an ISO 8601 string "
                + "such as 2019-10-03T12:34:56Z, but found \"\(text)\"."))
    }

    package static func parseISO8601(_ text: String) -> Date? {
        if let date = ISO8601Text.date(from: text) { return date }
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.date(from: text)
    }

    /// Encodes a date with Foundation's `JSONEncoder`, for strategies the garage's encoder
    /// does not implement itself.
    package static func encodeWithFoundation(_ date: Date, strategy: JSONEncoder.DateEncodingStrategy,
                                     codingPath: [any CodingKey]) throws -> JSONValue {
        if case .iso8601 = strategy { return .string(ISO8601Text.string(from: date)) }
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = strategy
        guard case .array(let values) = try JSONReader.parse(try encoder.encode([date])), let value = values.first else {
            throw EncodingError.invalidValue(date, .init(
                codingPath: codingPath, debugDescription: "The date encoding strategy produced no value."))
        }
        return value
    }

    /// Decodes a date with Foundation's `JSONDecoder`, for strategies the garage's decoder
    /// does not implement itself.
    package static func decodeWithFoundation(_ value: JSONValue, strategy: JSONDecoder.DateDecodingStrategy,
                                     codingPath: [any CodingKey]) throws -> Date {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = strategy
        do {
            return try decoder.decode([Date].self, from: Data(JSONWriter.bytes(from: .array([value])))).first
                ?? Date(timeIntervalSinceReferenceDate: 0)
        } catch DecodingError.dataCorrupted(let context) {
            throw DecodingError.dataCorrupted(.init(
                codingPath: codingPath, debugDescription: context.debugDescription, underlyingError: context.underlyingError))
        }
    }
}

/// Dates as ISO 8601 text (`2019-10-03T12:34:56Z`), written and read without Foundation's
/// formatters for the dates apps store, and exactly as `ISO8601DateFormatter` (its default
/// options) writes and reads them: a formatter costs about as much as a whole object's row.
///
/// The arithmetic covers the Gregorian calendar from 1600 to 9999 in UTC, whole seconds, and
/// the offsets `Z`, `+hh:mm` and `+hhmm`; every other date or text goes to the formatter, which
/// knows the Julian calendar before 1582, five-digit years and its own leniencies (a 30 February
/// becomes 2 March there, and stays so). `ISO8601TextTests` holds this to the formatter.
package enum ISO8601Text {
    /// 1600-01-01T00:00:00Z and 9999-12-31T23:59:59Z, in seconds since 1970.
    private static let firstSecond: Int64 = -11_676_096_000
    private static let lastSecond: Int64 = 253_402_300_799

    /// The date in UTC, to the second, as `ISO8601DateFormatter().string(from:)` writes it: the
    /// date rounded to the millisecond, then its second.
    package static func string(from date: Date) -> String {
        let milliseconds = (date.timeIntervalSince1970 * 1000).rounded()
        guard milliseconds.isFinite, milliseconds >= Double(firstSecond) * 1000,
              milliseconds < Double(lastSecond + 1) * 1000 else {
            return ISO8601DateFormatter().string(from: date)
        }
        let seconds = Int64((milliseconds / 1000).rounded(.down))
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let time = Int(seconds - days * 86_400)
        let (year, month, day) = civil(days: days)
        return String(unsafeUninitializedCapacity: 20) { buffer in
            func put(_ value: Int, digits: Int, at index: Int) {
                var value = value
                for position in stride(from: index + digits - 1, through: index, by: -1) {
                    buffer[position] = UInt8(ascii: "0") + UInt8(value % 10)
                    value /= 10
                }
            }
            put(year, digits: 4, at: 0)
            buffer[4] = UInt8(ascii: "-")
            put(month, digits: 2, at: 5)
            buffer[7] = UInt8(ascii: "-")
            put(day, digits: 2, at: 8)
            buffer[10] = UInt8(ascii: "T")
            put(time / 3600, digits: 2, at: 11)
            buffer[13] = UInt8(ascii: ":")
            put(time / 60 % 60, digits: 2, at: 14)
            buffer[16] = UInt8(ascii: ":")
            put(time % 60, digits: 2, at: 17)
            buffer[19] = UInt8(ascii: "Z")
            return 20
        }
    }

    /// The date `text` names, as `ISO8601DateFormatter().date(from:)` reads it: `nil` when the
    /// formatter reads nothing.
    package static func date(from text: String) -> Date? {
        if let seconds = seconds(text) { return Date(timeIntervalSince1970: Double(seconds)) }
        return ISO8601DateFormatter().date(from: text)
    }

    /// The seconds since 1970 of a text in the forms the arithmetic covers; `nil` for any other.
    private static func seconds(_ text: String) -> Int64? {
        var text = text
        return text.withUTF8 { bytes -> Int64? in
            guard bytes.count == 20 || bytes.count == 24 || bytes.count == 25 else { return nil }
            func number(_ index: Int, _ digits: Int) -> Int? {
                var value = 0
                for position in index..<index + digits {
                    let digit = Int(bytes[position]) &- 48
                    guard digit >= 0, digit <= 9 else { return nil }
                    value = value * 10 + digit
                }
                return value
            }
            guard bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"), bytes[10] == UInt8(ascii: "T"),
                  bytes[13] == UInt8(ascii: ":"), bytes[16] == UInt8(ascii: ":"),
                  let year = number(0, 4), let month = number(5, 2), let day = number(8, 2),
                  let hour = number(11, 2), let minute = number(14, 2), let second = number(17, 2),
                  year >= 1600, (1...12).contains(month), day >= 1, day <= daysIn(month: month, year: year),
                  hour <= 23, minute <= 59, second <= 59
            else { return nil }
            var offset = 0
            switch bytes.count {
            case 20:
                guard bytes[19] == UInt8(ascii: "Z") else { return nil }
            default:
                let sign = bytes[19]
                guard sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-"), let hours = number(20, 2) else { return nil }
                let minutesAt = bytes.count == 25 ? 23 : 22
                guard bytes.count == 24 || bytes[22] == UInt8(ascii: ":"), let minutes = number(minutesAt, 2),
                      hours <= 23, minutes <= 59
                else { return nil }
                offset = (hours * 60 + minutes) * 60 * (sign == UInt8(ascii: "-") ? -1 : 1)
            }
            let seconds = days(year: year, month: month, day: day) * 86_400
                + Int64(hour * 3600 + minute * 60 + second - offset)
            guard seconds >= firstSecond, seconds <= lastSecond else { return nil }
            return seconds
        }
    }

    private static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: return year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// Days since 1970-01-01 of a Gregorian date (Howard Hinnant's `days_from_civil`).
    private static func days(year: Int, month: Int, day: Int) -> Int64 {
        let y = Int64(month <= 2 ? year - 1 : year)
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = Int64((153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1)
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The Gregorian date of a day since 1970-01-01 (Howard Hinnant's `civil_from_days`).
    private static func civil(days: Int64) -> (year: Int, month: Int, day: Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shiftedMonth = (5 * dayOfYear + 2) / 153
        let day = Int(dayOfYear - (153 * shiftedMonth + 2) / 5 + 1)
        let month = Int(shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9)
        let year = Int(yearOfEra + era * 400) + (month <= 2 ? 1 : 0)
        return (year, month, day)
    }
}
