import Foundation
import Testing
@testable import GarageLite

// Tests of the garage's reference-aware Codable encoder and decoder, end to end through
// `park` and `retrieve`, with the stored JSON inspected through the internal store.
// The models are in Support/Coding*Models.swift, the helpers in Support/StoredJSON.swift.

@Suite struct CodingTests {
    // MARK: Containers

    @Test func nestedKeyedUnkeyedAndSingleValueContainersRoundTrip() throws {
        let garage = try Garage.inMemory()
        let nested = CodingNested.sample
        try garage.park(nested)

        // Members are stored in the order encode(to:) gave them; compare the parsed JSON.
        #expect(try codingStoredValue(garage, CodingNested.self, "n1") == JSONReader.parse(
            #"{"corner":[7,8],"entries":[{"name":"a","score":10},{"name":"b","score":20}],"#
            + #""id":"n1","label":"hello","matrix":[[1,2],[],[3]],"#
            + #""position":{"meta":{"friends":["p1"],"unit":"cm"},"x":3,"y":-4},"#
            + #""tags":["t1","t2"],"temperature":21.5}"#))
        // The Identifiable deep in nested containers is a row of its own.
        #expect(try garage.count(CodingPerson.self) == 1)
        #expect(try codingStoredJSON(garage, CodingPerson.self, "p1") == #"{"id":"p1","name":"Sam"}"#)

        let retrieved = try #require(try garage.retrieve(CodingNested.self, identifier: "n1"))
        #expect(retrieved == nested)
    }

    @Test func singleValueRootObjectsRoundTrip() throws {
        let garage = try Garage.inMemory()
        try garage.park(CodingColor.green)
        let colorID = try garage.identifier(for: CodingColor.green)
        #expect(try codingStoredJSON(garage, CodingColor.self, colorID) == #""green""#)
        #expect(try garage.retrieve(CodingColor.self, identifier: colorID) == .green)

        let list = CodingTagList(["a", "b", "c"])
        try garage.park(list)
        let listID = try garage.identifier(for: list)
        #expect(try codingStoredJSON(garage, CodingTagList.self, listID) == #"["a","b","c"]"#)
        #expect(try garage.retrieve(CodingTagList.self, identifier: listID) == list)
        #expect(listID != colorID)
    }

    // MARK: Class hierarchy

    @Test func subclassRoundTripsThroughSuperEncoder() throws {
        let garage = try Garage.inMemory()
        let owner = CodingPerson(id: "p1", name: "Ann")
        let car = CodingCar(id: "c1", wheels: 4, owner: owner, brand: "Saab")
        try garage.park(car)

        let stored = try codingStoredValue(garage, CodingCar.self, "c1")
        #expect(stored == .object([
            "brand": .string("Saab"),
            "super": .object(["id": .string("c1"), "wheels": .number("4"), "owner": .string("p1")]),
        ]))
        // The owner, referenced from the superclass's part, is parked as its own row.
        #expect(try garage.count(CodingPerson.self) == 1)
        #expect(try garage.count(CodingVehicle.self) == 0)

        let retrieved = try #require(try garage.retrieve(CodingCar.self, identifier: "c1"))
        #expect(retrieved.brand == "Saab")
        #expect(retrieved.id == "c1")
        #expect(retrieved.wheels == 4)
        #expect(retrieved.owner == owner)
    }

    @Test func subclassRoundTripsThroughSuperEncoderForKey() throws {
        let garage = try Garage.inMemory()
        let truck = CodingTruck(id: "t1", wheels: 18, owner: nil, payload: 12.25)
        try garage.park(truck)

        let stored = try codingStoredValue(garage, CodingTruck.self, "t1")
        #expect(stored == .object([
            "payload": .number("12.25"),
            "vehicle": .object(["id": .string("t1"), "wheels": .number("18")]),
        ]))

        let retrieved = try #require(try garage.retrieve(CodingTruck.self, identifier: "t1"))
        #expect(retrieved.payload == 12.25)
        #expect(retrieved.id == "t1")
        #expect(retrieved.wheels == 18)
        #expect(retrieved.owner == nil)
    }

    @Test func superEncoderLayoutMatchesFoundation() throws {
        let garage = try Garage.inMemory()
        let car = CodingCar(id: "c2", wheels: 3, owner: nil, brand: "Reliant")
        let truck = CodingTruck(id: "t2", wheels: 6, owner: nil, payload: 2.5)
        try garage.park(car)
        try garage.park(truck)

        let encoder = JSONEncoder()
        #expect(try codingStoredValue(garage, CodingCar.self, "c2") == JSONReader.parse(try encoder.encode(car)))
        #expect(try codingStoredValue(garage, CodingTruck.self, "t2") == JSONReader.parse(try encoder.encode(truck)))

        // And Foundation reads what the garage wrote.
        let fromGarage = try JSONDecoder().decode(
            CodingCar.self, from: Data(try codingStoredJSON(garage, CodingCar.self, "c2").utf8))
        #expect(fromGarage.brand == "Reliant")
        #expect(fromGarage.id == "c2")
        #expect(fromGarage.wheels == 3)
    }

    @Test
    func superEncoderThatEncodesNothingWritesAnEmptyObject() throws {
        let value = CodingSilentSuper(id: "s", list: ["a", "b"])

        // Foundation round-trips it, writing {} for each super encoder.
        let foundationData = try JSONEncoder().encode(value)
        #expect(try JSONReader.parse(foundationData) == .object([
            "id": .string("s"), "super": .object([:]), "list": .array([.string("a"), .string("b"), .object([:])]),
        ]))
        #expect(try JSONDecoder().decode(CodingSilentSuper.self, from: foundationData) == value)

        let garage = try Garage.inMemory()
        try garage.park(value)
        #expect(try codingStoredValue(garage, CodingSilentSuper.self, "s") == JSONReader.parse(foundationData))
        #expect(try garage.retrieve(CodingSilentSuper.self, identifier: "s") == value)
    }

    @Test func unkeyedSuperEncoderRoundTrips() throws {
        let garage = try Garage.inMemory()
        let value = CodingUnkeyedSuper(id: "u1", base: CodingPerson(id: "p9", name: "Base"))
        try garage.park(value)
        #expect(try codingStoredJSON(garage, CodingUnkeyedSuper.self, "u1") == #"["u1",{"id":"p9","name":"Base"}]"#)
        #expect(try garage.retrieve(CodingUnkeyedSuper.self, identifier: "u1") == value)
    }

    // MARK: Optional and absent keys

    @Test func optionalAndAbsentKeysBehaveAsWithFoundation() throws {
        let garage = try Garage.inMemory()
        try garage.park(CodingPresence(id: "o1", present: 5))

        let stored = try codingStoredValue(garage, CodingPresence.self, "o1")
        #expect(stored == .object([
            "id": .string("o1"), "present": .number("5"), "nothing": .null,
            "list": .array([.number("1"), .null, .number("3")]),
        ]))

        let retrieved = try #require(try garage.retrieve(CodingPresence.self, identifier: "o1"))
        let report = retrieved.report

        // What Foundation's JSONDecoder says about the same JSON.
        let foundation = try JSONDecoder().decode(
            CodingPresence.self, from: JSONEncoder().encode(CodingPresence(id: "o1", present: 5)))
        #expect(report == foundation.report)

        // And what that is, spelled out.
        #expect(report.allKeys == ["id", "present", "nothing", "list"])
        #expect(report.containsPresent)
        #expect(report.containsNothing)
        #expect(!report.containsMissing)
        #expect(report.ifPresentPresent == 5)
        #expect(report.ifPresentNothing == nil)
        #expect(report.ifPresentMissing == nil)
        #expect(report.ifPresentNothingAsString == nil)
        #expect(!report.decodeNilPresent)
        #expect(report.decodeNilNothing)
        #expect(report.decodeNilMissing == "keyNotFound")
        #expect(report.decodeMissing == "keyNotFound")
        #expect(report.decodeNothing == "valueNotFound")
        #expect(report.decodeOptionalNothing == nil)
        #expect(report.decodeOptionalMissing == "keyNotFound")
        #expect(report.listCount == 3)
        #expect(!report.listDecodeNilOnValue)
        #expect(report.listIndexAfterDecodeNilOnValue == 0)
        #expect(report.listFirst == 1)
        #expect(report.listDecodeNilOnNull)
        #expect(report.listIfPresentAfterNull == 3)
        #expect(report.listIsAtEnd)
        #expect(report.listIfPresentAtEnd == nil)
        #expect(report.listDecodeNilAtEnd == "valueNotFound")
    }

    // MARK: Dates

    @Test func dateWithDefaultStrategyRoundTripsExactly() throws {
        let garage = try Garage.inMemory()
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
        let garage = try Garage.inMemory()
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
        let garage = try Garage.inMemory()
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
        let garage = try Garage.inMemory()
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
        let garage = try Garage.inMemory()
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
        let garage = try Garage.inMemory()
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
        let garage = try Garage.inMemory()
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
        let garage = try Garage.inMemory()
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

    // MARK: Foundation scalars

    @Test func dataURLDecimalAndUUIDRoundTrip() throws {
        let garage = try Garage.inMemory()
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
        let garage = try Garage.inMemory()
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
        let garage = try Garage.inMemory()
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
        let garage = try Garage.inMemory()
        let value = CodingContainerIntegers(id: "c", keyed: .max, unkeyed: .min, single: CodingBigCount(.max))
        try garage.park(value)
        let json = try codingStoredJSON(garage, CodingContainerIntegers.self, "c")
        #expect(json.contains(#""keyed":18446744073709551615"#))
        #expect(json.contains(#""single":18446744073709551615"#))
        #expect(json.contains(#""unkeyed":[-9223372036854775808]"#))
        #expect(try garage.retrieve(CodingContainerIntegers.self, identifier: "c") == value)
    }

    @Test func integerOverflowOnRetrieveThrows() throws {
        let garage = try Garage.inMemory()
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
        let garage = try Garage.inMemory()
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
        let garage = try Garage.inMemory()
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
        let garage = try Garage.inMemory()
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
        let garage = try Garage.inMemory()
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

    // MARK: Enums and collections

    @Test func enumsWithAssociatedValuesRoundTrip() throws {
        let garage = try Garage.inMemory()
        let artist = CodingPerson(id: "a1", name: "Artist")
        let drawing = CodingDrawing(
            id: "d1",
            primary: .circle(radius: 1.5),
            shapes: [
                .rectangle(2, 3),
                .polygon(points: [[0, 0], [1, 0.5], [0, 1]], name: nil),
                .polygon(points: [], name: "none"),
                .empty,
                .drawnBy(artist),
            ],
            color: .red)
        try garage.park(drawing)

        let stored = try codingStoredValue(garage, CodingDrawing.self, "d1")
        guard case .object(let members) = stored, case .array(let shapes) = members["shapes"] else {
            Issue.record("unexpected JSON \(stored)")
            return
        }
        #expect(members["primary"] == .object(["circle": .object(["radius": .number("1.5")])]))
        #expect(members["color"] == .string("red"))
        #expect(shapes.count == 5)
        #expect(shapes.first == .object(["rectangle": .object(["_0": .number("2.0"), "_1": .number("3.0")])]))
        #expect(shapes.dropFirst(3).first == .object(["empty": .object([:])]))
        // The person in the enum's payload is a reference, and a row of its own.
        #expect(shapes.last == .object(["drawnBy": .object(["_0": .string("a1")])]))
        #expect(try garage.retrieve(CodingPerson.self, identifier: "a1") == artist)

        #expect(try garage.retrieve(CodingDrawing.self, identifier: "d1") == drawing)
    }

    @Test func nestedArraysAndDictionariesRoundTrip() throws {
        let garage = try Garage.inMemory()
        let value = CodingCollections(
            id: "c",
            grid: [[1, 2, 3], [], [4]],
            cube: [[["a"], []], [], [["b", "c"], ["d"]]],
            ragged: [[0.5], [-1.25, 1e100]],
            byName: ["one": 1, "two": 2, "": 0, "with \"quotes\"\n": -3],
            byNumber: [1: "one", -7: "minus seven", 0: "zero"],
            nestedMaps: ["outer": [2: ["x", "y"], 3: []], "empty": [:]],
            optionals: [1, nil, 3, nil],
            set: ["a", "b", "c"],
            emptyMap: [:],
            emptyGrid: [],
            peopleByNumber: [1: CodingPerson(id: "p1", name: "One"), 2: CodingPerson(id: "p2", name: "Two")])
        try garage.park(value)

        let stored = try codingStoredValue(garage, CodingCollections.self, "c")
        guard case .object(let members) = stored else {
            Issue.record("unexpected JSON \(stored)")
            return
        }
        // Int-keyed dictionaries are JSON objects with string keys, as with JSONEncoder.
        #expect(members["byNumber"] == .object(["1": .string("one"), "-7": .string("minus seven"), "0": .string("zero")]))
        #expect(members["grid"] == .array([
            .array([.number("1"), .number("2"), .number("3")]), .array([]), .array([.number("4")]),
        ]))
        #expect(members["optionals"] == .array([.number("1"), .null, .number("3"), .null]))
        #expect(members["peopleByNumber"] == .object(["1": .string("p1"), "2": .string("p2")]))
        #expect(try garage.count(CodingPerson.self) == 2)

        let retrieved = try #require(try garage.retrieve(CodingCollections.self, identifier: "c"))
        #expect(retrieved == value)
    }

    // MARK: Type mismatch

    @Test func typeMismatchOnRetrieveThrowsDecodingError() throws {
        let garage = try Garage.inMemory()
        try garage.park(CodingOld(id: "x", value: "hello", extra: ["a"]))
        let moved = try garage.migrateAll(fromOldClassName: Identity.typeName(CodingOld.self), to: CodingNew.self)
        #expect(moved == 1)
        #expect(try garage.count(CodingOld.self) == 0)
        #expect(try garage.count(CodingNew.self) == 1)

        let error = try #require(throws: DecodingError.self) {
            try garage.retrieve(CodingNew.self, identifier: "x")
        }
        guard case .typeMismatch(let type, let context) = error else {
            Issue.record("expected typeMismatch, got \(error)")
            return
        }
        #expect(ObjectIdentifier(type) == ObjectIdentifier(Int.self))
        #expect(codingKeyNames(context.codingPath) == ["value"])

        #expect(throws: DecodingError.self) { try garage.retrieveAll(CodingNew.self) }

        // A mismatch inside an array element reports the element's path.
        try garage.migrateAll(fromOldClassName: Identity.typeName(CodingNew.self), to: CodingNewer.self)
        let nestedError = try #require(throws: DecodingError.self) {
            try garage.retrieve(CodingNewer.self, identifier: "x")
        }
        guard case .typeMismatch(_, let nestedContext) = nestedError else {
            Issue.record("expected typeMismatch, got \(nestedError)")
            return
        }
        #expect(codingKeyNames(nestedContext.codingPath) == ["extra", "Index 0"])
        #expect(nestedContext.codingPath.last?.intValue == 0)

        // The row is still there and readable as what it really is.
        try garage.migrateAll(fromOldClassName: Identity.typeName(CodingNewer.self), to: CodingOld.self)
        #expect(try garage.retrieve(CodingOld.self, identifier: "x")?.value == "hello")
    }

    @Test func containerKindMismatchThrowsDecodingError() throws {
        let garage = try Garage.inMemory()
        // A row holding a JSON string, read as a type that wants a keyed container.
        try garage.park(CodingColor.red)
        let identifier = try garage.identifier(for: CodingColor.red)
        try garage.migrateAll(fromOldClassName: Identity.typeName(CodingColor.self), to: CodingTagList.self)
        let error = try #require(throws: DecodingError.self) {
            try garage.retrieve(CodingTagList.self, identifier: identifier)
        }
        guard case .typeMismatch = error else {
            Issue.record("expected typeMismatch, got \(error)")
            return
        }
    }

    // MARK: Foundation interop

    @Test func foundationCodersEncodeModelsInline() throws {
        let pet = CodingPerson(id: "p1", name: "Rex")
        let owner = CodingOwner(id: "o1", pet: pet, friends: [CodingPerson(id: "p2", name: "Max")], best: pet)

        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let data = try encoder.encode(owner)
        #expect(try JSONReader.parse(data) == .object([
            "id": .string("o1"),
            "pet": .object(["id": .string("p1"), "name": .string("Rex")]),
            "friends": .array([.object(["id": .string("p2"), "name": .string("Max")])]),
            "best": .object(["id": .string("p1"), "name": .string("Rex")]),
        ]))
        #expect(try JSONDecoder().decode(CodingOwner.self, from: data) == owner)

        // The same model in a garage: nested Identifiable values become references.
        let garage = try Garage.inMemory()
        try garage.park(owner)
        #expect(try codingStoredValue(garage, CodingOwner.self, "o1") == .object([
            "id": .string("o1"), "pet": .string("p1"), "friends": .array([.string("p2")]), "best": .string("p1"),
        ]))
        #expect(try garage.retrieve(CodingOwner.self, identifier: "o1") == owner)

        // Using the garage leaves Foundation's coders untouched.
        #expect(try JSONReader.parse(try encoder.encode(owner)) == JSONReader.parse(data))

        // Foundation also handles the other models of this file inline.
        let nested = CodingNested.sample
        let nestedData = try JSONEncoder().encode(nested)
        guard case .object(let members) = try JSONReader.parse(nestedData),
              case .object(let position) = members["position"],
              case .object(let meta) = position["meta"] else {
            Issue.record("unexpected Foundation JSON")
            return
        }
        #expect(meta["friends"] == .array([.object(["id": .string("p1"), "name": .string("Sam")])]))
        #expect(try JSONDecoder().decode(CodingNested.self, from: nestedData) == nested)

        let collections = CodingCollections(
            id: "c", grid: [[1]], cube: [], ragged: [], byName: [:], byNumber: [3: "three"], nestedMaps: [:],
            optionals: [nil], set: [], emptyMap: [:], emptyGrid: [[]],
            peopleByNumber: [5: CodingPerson(id: "p5", name: "Five")])
        let collectionsData = try JSONEncoder().encode(collections)
        guard case .object(let collectionMembers) = try JSONReader.parse(collectionsData) else {
            Issue.record("unexpected Foundation JSON")
            return
        }
        #expect(collectionMembers["peopleByNumber"] == .object(["5": .object(["id": .string("p5"), "name": .string("Five")])]))
        #expect(try JSONDecoder().decode(CodingCollections.self, from: collectionsData) == collections)
    }

    @Test func garageJSONMatchesFoundationForReferenceFreeModels() throws {
        // Models without nested Identifiable values or dates: the garage writes what JSONEncoder writes.
        let garage = try Garage.inMemory()
        let presence = CodingPresence(id: "o", present: 1)
        let point = CodingUnkeyedSuper(id: "u", base: CodingPerson(id: "b", name: "B"))
        let integers = CodingContainerIntegers(id: "i", keyed: .max, unkeyed: .min, single: CodingBigCount(7))
        try garage.park(presence)
        try garage.park(point)
        try garage.park(integers)

        let encoder = JSONEncoder()
        #expect(try codingStoredValue(garage, CodingPresence.self, "o") == JSONReader.parse(try encoder.encode(presence)))
        #expect(try codingStoredValue(garage, CodingUnkeyedSuper.self, "u") == JSONReader.parse(try encoder.encode(point)))
        #expect(try codingStoredValue(garage, CodingContainerIntegers.self, "i")
            == JSONReader.parse(try encoder.encode(integers)))
    }
}

