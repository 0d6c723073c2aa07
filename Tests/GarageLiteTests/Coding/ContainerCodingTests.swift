import Foundation
import Testing
@testable import GarageLite

/// Keyed, unkeyed and single-value containers, keys present, null or absent, enums with
/// associated values and nested collections, written and read by the garage's coders.
///
/// End to end through `park` and `retrieve`, the stored JSON read through the internal store.
@Suite("Coding: containers, absent keys, enums and collections")
struct ContainerCodingTests {
    // MARK: Containers

    @Test func nestedKeyedUnkeyedAndSingleValueContainersRoundTrip() throws {
        let garage = try TestEngine.garage()
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
        let garage = try TestEngine.garage()
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

    // MARK: Optional and absent keys

    @Test func optionalAndAbsentKeysBehaveAsWithFoundation() throws {
        let garage = try TestEngine.garage()
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

    // MARK: Enums and collections

    @Test func enumsWithAssociatedValuesRoundTrip() throws {
        let garage = try TestEngine.garage()
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
        let garage = try TestEngine.garage()
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
}
