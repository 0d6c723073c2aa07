import Foundation
import Testing
@testable import GarageLite

/// Dates through the default, numeric and ISO 8601 strategies, scoped and per garage, and the
/// date strings the default decoder reads.
///
/// End to end through `park` and `retrieve`, the stored JSON read through the internal store.
@Suite("Coding: dates")
struct DateCodingTests {
    @Test func dateWithDefaultStrategyRoundTripsExactly() throws {
        let garage = try TestEngine.garage()
        let date = Date(timeIntervalSinceReferenceDate: 1234.56789012345)
        let other = Date(timeIntervalSinceReferenceDate: -987654321.125)
        let event = CodingEvent(id: "e1", when: date, history: [other, date], maybe: other)
        try garage.park(event)

        let stored = try codingStoredValue(garage, CodingEvent.self, "e1")
        guard case .object(let members) = stored else {
            Issue.record("stored JSON is not an object: \(stored)")
            return
        }
        #expect(members["when"] == .number("1234.56789012345"))
        #expect(members["maybe"] == .number("-987654321.125"))

        let retrieved = try #require(try garage.retrieve(CodingEvent.self, identifier: "e1"))
        #expect(retrieved.when == date)
        #expect(retrieved.when.timeIntervalSinceReferenceDate == 1234.56789012345)
        #expect(retrieved == event)
    }

    @Test func dateSecondsSince1970Strategy() throws {
        let garage = try TestEngine.garage()
        let date = Date(timeIntervalSince1970: 1_600_000_000.5)
        try garage.withDateEncodingStrategy(.secondsSince1970) {
            try garage.park(CodingEvent(id: "s", when: date))
        }
        let json = try codingStoredJSON(garage, CodingEvent.self, "s")
        #expect(json.contains(#""when":1600000000.5"#))

        let retrieved = try garage.withDateDecodingStrategy(.secondsSince1970) {
            try garage.retrieve(CodingEvent.self, identifier: "s")
        }
        #expect(retrieved?.when == date)

        // Outside the scope, the default strategies apply again.
        try garage.park(CodingEvent(id: "d", when: date))
        #expect(try codingStoredJSON(garage, CodingEvent.self, "d")
            .contains(#""when":\#(date.timeIntervalSinceReferenceDate)"#))
        #expect(try garage.retrieve(CodingEvent.self, identifier: "d")?.when == date)
    }

    @Test func dateMillisecondsSince1970Strategy() throws {
        let garage = try TestEngine.garage()
        let date = Date(timeIntervalSince1970: 1_600_000_000.5)
        try garage.withDateEncodingStrategy(.millisecondsSince1970) {
            try garage.park(CodingEvent(id: "m", when: date, history: [date]))
        }
        let stored = try codingStoredValue(garage, CodingEvent.self, "m")
        guard case .object(let members) = stored, case .number(let text) = members["when"] else {
            Issue.record("no number for when in \(stored)")
            return
        }
        #expect(Double(text) == 1_600_000_000_500)

        let retrieved = try garage.withDateDecodingStrategy(.millisecondsSince1970) {
            try garage.retrieve(CodingEvent.self, identifier: "m")
        }
        #expect(retrieved?.when == date)
        #expect(retrieved?.history == [date])
    }

    @Test func dateISO8601Strategy() throws {
        let garage = try TestEngine.garage()
        let date = Date(timeIntervalSince1970: 1_600_000_000)
        try garage.withDateEncodingStrategy(.iso8601) {
            try garage.park(CodingEvent(id: "i", when: date, maybe: date))
        }
        let json = try codingStoredJSON(garage, CodingEvent.self, "i")
        #expect(json.contains(#""when":"2020-09-13T12:26:40Z""#))
        #expect(json.contains(#""maybe":"2020-09-13T12:26:40Z""#))

        let retrieved = try garage.withDateDecodingStrategy(.iso8601) {
            try garage.retrieve(CodingEvent.self, identifier: "i")
        }
        #expect(retrieved?.when == date)
        #expect(retrieved?.maybe == date)
        // The default decoding strategy reads ISO 8601 too.
        #expect(try garage.retrieve(CodingEvent.self, identifier: "i")?.when == date)

        // A number is not an ISO 8601 date.
        try garage.park(CodingEvent(id: "n", when: date))
        let error = try #require(throws: DecodingError.self) {
            try garage.withDateDecodingStrategy(.iso8601) {
                try garage.retrieve(CodingEvent.self, identifier: "n")
            }
        }
        guard case .typeMismatch = error else {
            Issue.record("expected typeMismatch, got \(error)")
            return
        }
    }

    @Test func dateStrategyPropertiesApplyToEveryCall() throws {
        let garage = try TestEngine.garage()
        let date = Date(timeIntervalSince1970: 1_000)
        garage.dateEncodingStrategy = .secondsSince1970
        garage.dateDecodingStrategy = .secondsSince1970
        try garage.park(CodingEvent(id: "p", when: date))
        #expect(try codingStoredJSON(garage, CodingEvent.self, "p").contains(#""when":1000.0"#))
        #expect(try garage.retrieve(CodingEvent.self, identifier: "p")?.when == date)
        // A scope overrides the property.
        let scoped = try garage.withDateDecodingStrategy(.deferredToDate) {
            try garage.retrieve(CodingEvent.self, identifier: "p")
        }
        #expect(scoped?.when == Date(timeIntervalSinceReferenceDate: 1_000))
    }

    @Test func defaultDecoderReadsGarageStorageDateStrings() throws {
        let garage = try TestEngine.garage()
        let strategy = JSONEncoder.DateEncodingStrategy.custom { _, encoder in
            var container = encoder.singleValueContainer()
            try container.encode("2019-10-03T12:34:56-07:00")
        }
        try garage.withDateEncodingStrategy(strategy) {
            try garage.park(CodingEvent(id: "gs", when: Date(), history: [Date()]))
        }
        #expect(try codingStoredJSON(garage, CodingEvent.self, "gs").contains(#""when":"2019-10-03T12:34:56-07:00""#))

        let retrieved = try #require(try garage.retrieve(CodingEvent.self, identifier: "gs"))
        let expected = Date(timeIntervalSince1970: 1_570_131_296)   // 2019-10-03T19:34:56Z
        #expect(retrieved.when == expected)
        #expect(retrieved.history == [expected])
    }

    @Test func defaultDecoderReadsFractionalISO8601Strings() throws {
        let garage = try TestEngine.garage()
        let strategy = JSONEncoder.DateEncodingStrategy.custom { _, encoder in
            var container = encoder.singleValueContainer()
            try container.encode("2019-10-03T19:34:56.250Z")
        }
        try garage.withDateEncodingStrategy(strategy) {
            try garage.park(CodingEvent(id: "f", when: Date()))
        }
        let retrieved = try #require(try garage.retrieve(CodingEvent.self, identifier: "f"))
        #expect(abs(retrieved.when.timeIntervalSince1970 - 1_570_131_296.25) < 0.0001)
    }

    @Test func unparseableDateStringThrowsDataCorrupted() throws {
        let garage = try TestEngine.garage()
        let strategy = JSONEncoder.DateEncodingStrategy.custom { _, encoder in
            var container = encoder.singleValueContainer()
            try container.encode("not a date")
        }
        try garage.withDateEncodingStrategy(strategy) {
            try garage.park(CodingEvent(id: "bad", when: Date()))
        }
        #expect(try garage.count(CodingEvent.self) == 1)

        let error = try #require(throws: DecodingError.self) {
            try garage.retrieve(CodingEvent.self, identifier: "bad")
        }
        guard case .dataCorrupted(let context) = error else {
            Issue.record("expected dataCorrupted, got \(error)")
            return
        }
        #expect(codingKeyNames(context.codingPath) == ["when"])
    }
}
