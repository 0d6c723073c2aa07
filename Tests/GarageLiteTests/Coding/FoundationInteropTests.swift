import Foundation
import Testing
@testable import GarageLite

/// The same models through Foundation's `JSONEncoder` and `JSONDecoder`: inline there,
/// references in the garage, and the very same JSON when a model holds no reference.
@Suite("Coding: Foundation's coders")
struct FoundationInteropTests {
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
        let garage = try TestEngine.garage()
        try garage.park(owner)
        #expect(try codingStoredValue(garage, CodingOwner.self, "o1") == .object([
            "id": .string("o1"), "pet": .string("p1"), "friends": .array([.string("p2")]), "best": .string("p1"),
        ]))
        #expect(try garage.retrieve(CodingOwner.self, identifier: "o1") == owner)

        // Using the garage leaves Foundation's coders untouched.
        #expect(try JSONReader.parse(try encoder.encode(owner)) == JSONReader.parse(data))

        // Foundation also handles the other coding models inline.
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
        let garage = try TestEngine.garage()
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
