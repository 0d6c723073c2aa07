import Foundation
import Testing
import GarageLite
import GarageLiteCore

/// `ISO8601Text`, the garage's own ISO 8601 writer and reader, against the formatter it stands
/// in for (`ISO8601DateFormatter` with its default options): same text for every date, same
/// date for every text, and the formatter's answer wherever the arithmetic stops.
@Suite("Coding: ISO 8601 text")
struct ISO8601TextTests {
    /// 1600-01-01 and 9999-12-31T23:59:59Z, in seconds since 1970.
    private let first = -11_676_096_000.0
    private let last = 253_402_300_799.0

    @Test func writesWhatTheFormatterWritesForRandomDates() {
        var random = SplitMix64(state: 0x1508_601)
        let formatter = ISO8601DateFormatter()
        for _ in 0..<20_000 {
            let seconds = Double(Int64.random(in: Int64(first)...Int64(last), using: &random))
            // Whole seconds, fractions, and fractions a hair below the next second (the
            // formatter rounds to the millisecond first).
            let fractions: [Double] = [0, Double.random(in: 0..<1, using: &random),
                                       0.9995 + Double.random(in: 0..<0.0005, using: &random)]
            let fraction = fractions[Int.random(in: 0..<3, using: &random)]
            let date = Date(timeIntervalSince1970: seconds + fraction)
            #expect(ISO8601Text.string(from: date) == formatter.string(from: date), "\(date.timeIntervalSince1970)")
        }
    }

    @Test func writesWhatTheFormatterWritesAtTheEdges() {
        let formatter = ISO8601DateFormatter()
        let edges: [Double] = [
            0, -0.3, 0.7, -86_400.5, 59.9999999, 1_000_000_000.9999, 951_782_400, 951_868_800, // 2000-02-29 and 03-01
            first, first - 1, first - 0.0001, last, last + 0.4, last + 0.9996, last + 1,
            -62_135_596_800, // year 1, where the formatter's calendar is Julian
            -1e12, 1e12, .infinity, -.infinity, .nan,
        ]
        for seconds in edges {
            let date = Date(timeIntervalSince1970: seconds)
            #expect(ISO8601Text.string(from: date) == formatter.string(from: date), "\(seconds)")
        }
    }

    @Test func readsWhatTheFormatterReadsForRandomTexts() {
        var random = SplitMix64(state: 0x1508_602)
        let formatter = ISO8601DateFormatter()
        for _ in 0..<20_000 {
            let date = Date(timeIntervalSince1970: Double(Int64.random(in: Int64(first)...Int64(last), using: &random)))
            var text = formatter.string(from: date)
            // Rewrite the instant at an offset, in one of the three forms.
            let offsetMinutes = Int.random(in: -(14 * 60)...(14 * 60), using: &random)
            if offsetMinutes != 0, let zone = TimeZone(secondsFromGMT: offsetMinutes * 60) {
                let local = ISO8601DateFormatter()
                local.timeZone = zone
                text = local.string(from: date)
                if Bool.random(using: &random) { text.remove(at: text.index(text.endIndex, offsetBy: -3)) } // +hhmm
            }
            let expected = formatter.date(from: text)
            #expect(expected == date, "the formatter reads \(text) back")
            #expect(ISO8601Text.date(from: text) == expected, "\(text)")
        }
    }

    @Test func readsWhatTheFormatterReadsWhereTheArithmeticStops() {
        let formatter = ISO8601DateFormatter()
        let texts = [
            "2019-10-03T12:34:56Z", "2019-10-03T12:34:56+02:00", "2019-10-03T12:34:56+0200", "2019-10-03T12:34:56-07:30",
            "2019-02-30T12:34:56Z", "2019-02-29T00:00:00Z", "2020-02-29T00:00:00Z", "2019-10-03T24:00:00Z",
            "2019-10-03T12:60:00Z", "2019-10-03T12:34:60Z", "2019-13-03T12:34:56Z", "2019-00-10T12:34:56Z",
            "2019-10-00T12:34:56Z", "2019-10-03T12:34:56+25:00", "2019-10-03T12:34:56+02:60", "2019-10-03t12:34:56z",
            "2019-10-03 12:34:56Z", "2019-10-03T12:34:56", "2019-10-03T12:34:56.5Z", "12019-10-03T12:34:56Z",
            "1599-12-31T23:59:59Z", "1600-01-01T00:00:00Z", "0001-01-01T00:00:00Z", "9999-12-31T23:59:59Z",
            "9999-12-31T23:59:59-01:00", "1600-01-01T00:00:00+01:00", "2019-1a-03T12:34:56Z", "", "Z",
            "2019-10-03T12:34:56+02:0a", "2019-10-03T12:34:56*02:00", "２０１９-10-03T12:34:56Z",
        ]
        for text in texts {
            #expect(ISO8601Text.date(from: text) == formatter.date(from: text), "\(text)")
        }
    }

    @Test func aGarageWithTheISO8601StrategyStoresAndReadsWhatTheFormatterWould() throws {
        let garage = try TestEngine.garage()
        garage.dateEncodingStrategy = .iso8601
        garage.dateDecodingStrategy = .iso8601
        let formatter = ISO8601DateFormatter()
        let dates = [Date(timeIntervalSince1970: 1_570_106_096.9996), Date(timeIntervalSince1970: -62_135_596_800),
                     Date(timeIntervalSince1970: 300_000_000_000), Date(timeIntervalSince1970: 0)]
        for (index, date) in dates.enumerated() {
            try garage.park(CodingEvent(id: "iso\(index)", when: date))
            let json = try codingStoredJSON(garage, CodingEvent.self, "iso\(index)")
            let text = formatter.string(from: date)
            #expect(json.contains(#""when":"\#(text)""#), "\(json)")
            let retrieved = try #require(try garage.retrieve(CodingEvent.self, identifier: "iso\(index)"))
            #expect(retrieved.when == formatter.date(from: text))
        }
    }
}
