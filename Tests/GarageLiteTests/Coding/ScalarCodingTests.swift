import Foundation
import Testing
@testable import GarageLite

/// Foundation scalars (`Data`, `URL`, `Decimal`, `UUID`), integers at their extremes and
/// non-finite numbers, which are refused before anything is written.
///
/// End to end through `park` and `retrieve`, the stored JSON read through the internal store.
@Suite("Coding: Foundation scalars and numbers")
struct ScalarCodingTests {
    // MARK: Foundation scalars

    @Test func dataURLDecimalAndUUIDRoundTrip() throws {
        let garage = try TestEngine.garage()
        let id = UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!
        let other = UUID(uuidString: "00000000-0000-0000-0000-0000000000FF")!
        let value = CodingScalars(
            id: id,
            data: Data([0, 1, 2, 255, 254]),
            emptyData: Data(),
            url: URL(string: "https://example.com/a%20b/c?q=1&r=two#frag")!,
            fileURL: URL(fileURLWithPath: "/tmp/some folder/file.txt"),
            decimal: Decimal(string: "12345678901234567890.123456789")!,
            negativeDecimal: Decimal(string: "-0.000000000000000000000001")!,
            decimals: [Decimal(1), Decimal(string: "3.14159265358979323846264338")!],
            uuid: other,
            optionalData: Data("hi".utf8),
            optionalURL: URL(string: "mailto:someone@example.com"),
            optionalDecimal: Decimal(string: "0.1")!,
            missingUUID: nil)
        try garage.park(value)

        let json = try codingStoredJSON(garage, CodingScalars.self, id.uuidString)
        #expect(json.contains(#""data":"AAEC//4=""#))
        #expect(json.contains(#""emptyData":"""#))
        #expect(json.contains(#""url":"https://example.com/a%20b/c?q=1&r=two#frag""#))
        #expect(json.contains(#""decimal":12345678901234567890.123456789"#))
        #expect(json.contains(#""uuid":"00000000-0000-0000-0000-0000000000FF""#))
        #expect(json.contains(#""optionalDecimal":0.1"#))

        let retrieved = try #require(try garage.retrieve(CodingScalars.self, identifier: id))
        #expect(retrieved.data == value.data)
        #expect(retrieved.emptyData.isEmpty)
        #expect(retrieved.url == value.url)
        #expect(retrieved.fileURL.absoluteString == value.fileURL.absoluteString)
        #expect(retrieved.fileURL.path == "/tmp/some folder/file.txt")
        #expect(retrieved.decimal == value.decimal)
        #expect(retrieved.decimal.description == "12345678901234567890.123456789")
        #expect(retrieved.negativeDecimal == value.negativeDecimal)
        #expect(retrieved.decimals == value.decimals)
        #expect(retrieved.uuid == other)
        #expect(retrieved.id == id)
        #expect(retrieved.optionalData == Data("hi".utf8))
        #expect(retrieved.optionalURL == value.optionalURL)
        #expect(retrieved.optionalDecimal == Decimal(string: "0.1"))
        #expect(retrieved.missingUUID == nil)
    }

    @Test func decimalNaNIsRefused() throws {
        let garage = try TestEngine.garage()
        let error = try #require(throws: EncodingError.self) {
            try garage.park(CodingDecimalBox(id: "x", value: Decimal.nan))
        }
        guard case .invalidValue(_, let context) = error else {
            Issue.record("expected invalidValue, got \(error)")
            return
        }
        #expect(codingKeyNames(context.codingPath) == ["value"])
        #expect(try garage.count(CodingDecimalBox.self) == 0)
    }

    // MARK: Integers

    @Test func integerExtremesRoundTripExactly() throws {
        let garage = try TestEngine.garage()
        let value = CodingExtremes(
            id: "x", int64Min: .min, int64Max: .max, uint64Max: .max, intMin: .min, int8Min: .min,
            uint8Max: .max, int32Min: .min, uint32Max: .max,
            list: [.max, 0, .max - 1], byName: ["low": .min, "high": .max])
        try garage.park(value)

        let json = try codingStoredJSON(garage, CodingExtremes.self, "x")
        #expect(json.contains(#""uint64Max":18446744073709551615"#))
        #expect(json.contains(#""int64Min":-9223372036854775808"#))
        #expect(json.contains(#""int64Max":9223372036854775807"#))
        #expect(json.contains("[18446744073709551615,0,18446744073709551614]"))

        let retrieved = try #require(try garage.retrieve(CodingExtremes.self, identifier: "x"))
        #expect(retrieved == value)
        #expect(retrieved.uint64Max == UInt64.max)
        #expect(retrieved.int64Min == Int64.min)
        #expect(retrieved.int64Max == Int64.max)
    }

    @Test func integerExtremesThroughEveryContainer() throws {
        let garage = try TestEngine.garage()
        let value = CodingContainerIntegers(id: "c", keyed: .max, unkeyed: .min, single: CodingBigCount(.max))
        try garage.park(value)
        let json = try codingStoredJSON(garage, CodingContainerIntegers.self, "c")
        #expect(json.contains(#""keyed":18446744073709551615"#))
        #expect(json.contains(#""single":18446744073709551615"#))
        #expect(json.contains(#""unkeyed":[-9223372036854775808]"#))
        #expect(try garage.retrieve(CodingContainerIntegers.self, identifier: "c") == value)
    }

    @Test func integerOverflowOnRetrieveThrows() throws {
        let garage = try TestEngine.garage()
        try garage.park(CodingBig(id: "b", value: .max))
        try garage.migrateAll(fromOldClassName: Identity.typeName(CodingBig.self), to: CodingSmall.self)
        let error = try #require(throws: DecodingError.self) {
            try garage.retrieve(CodingSmall.self, identifier: "b")
        }
        guard case .dataCorrupted(let context) = error else {
            Issue.record("expected dataCorrupted, got \(error)")
            return
        }
        #expect(codingKeyNames(context.codingPath) == ["value"])
    }

    // MARK: Non-finite numbers

    @Test(arguments: [Double.nan, .infinity, -.infinity])
    func nonFiniteDoubleIsRefused(_ number: Double) throws {
        let garage = try TestEngine.garage()
        let error = try #require(throws: EncodingError.self) {
            try garage.park(CodingMeasurement(id: "m", value: number))
        }
        guard case .invalidValue(let value, let context) = error else {
            Issue.record("expected invalidValue, got \(error)")
            return
        }
        #expect(codingKeyNames(context.codingPath) == ["value"])
        let refused = try #require(value as? Double)
        #expect(refused.isNaN == number.isNaN)
        #expect(try garage.count(CodingMeasurement.self) == 0)
    }

    @Test(arguments: [Float.nan, .infinity, -.infinity])
    func nonFiniteFloatIsRefused(_ number: Float) throws {
        let garage = try TestEngine.garage()
        let error = try #require(throws: EncodingError.self) {
            try garage.park(CodingFloatMeasurement(id: "f", value: number))
        }
        guard case .invalidValue = error else {
            Issue.record("expected invalidValue, got \(error)")
            return
        }
        #expect(try garage.count(CodingFloatMeasurement.self) == 0)
    }

    @Test func nonFiniteInUnkeyedAndSingleValueContainersIsRefused() throws {
        let garage = try TestEngine.garage()
        let arrayError = try #require(throws: EncodingError.self) {
            try garage.park(CodingSeries(id: "s", values: [1, 2, .infinity]))
        }
        guard case .invalidValue(_, let arrayContext) = arrayError else {
            Issue.record("expected invalidValue, got \(arrayError)")
            return
        }
        #expect(codingKeyNames(arrayContext.codingPath) == ["values", "Index 2"])
        #expect(arrayContext.codingPath.last?.intValue == 2)
        #expect(try garage.count(CodingSeries.self) == 0)

        #expect(throws: EncodingError.self) {
            try garage.park(CodingWrappedTemperature(id: "w", temperature: CodingCelsius(.nan)))
        }
        #expect(try garage.count(CodingWrappedTemperature.self) == 0)

        #expect(throws: EncodingError.self) {
            try garage.park(CodingEvent(id: "e", when: Date(timeIntervalSinceReferenceDate: .infinity)))
        }
        #expect(try garage.count(CodingEvent.self) == 0)
    }

    @Test func nonFiniteInReferencedObjectParksNothing() throws {
        let garage = try TestEngine.garage()
        let good = CodingReading(id: "r", sensor: CodingPerson(id: "s1", name: "Sensor"),
                                 measurement: CodingMeasurement(id: "m1", value: 1.5))
        try garage.park(good)

        // The whole graph is refused: neither the reading, nor the sensor, nor the measurement changes.
        let bad = CodingReading(id: "r", sensor: CodingPerson(id: "s1", name: "Renamed"),
                                measurement: CodingMeasurement(id: "m1", value: .nan))
        #expect(throws: EncodingError.self) { try garage.park(bad) }
        let fresh = CodingReading(id: "r2", sensor: CodingPerson(id: "s2", name: "New"),
                                  measurement: CodingMeasurement(id: "m2", value: -.infinity))
        #expect(throws: EncodingError.self) { try garage.parkAll([fresh]) }

        #expect(try garage.count(CodingReading.self) == 1)
        #expect(try garage.count(CodingPerson.self) == 1)
        #expect(try garage.count(CodingMeasurement.self) == 1)
        #expect(try garage.retrieve(CodingPerson.self, identifier: "s1")?.name == "Sensor")
        #expect(try garage.retrieve(CodingMeasurement.self, identifier: "m1")?.value == 1.5)
    }
}
