import Foundation
import Testing
@testable import GarageLite

/// Class hierarchies and other values written through super encoders (keyed, for a key,
/// unkeyed, and one nothing is written into), in the layout Foundation's coders use.
///
/// End to end through `park` and `retrieve`, the stored JSON read through the internal store.
@Suite("Coding: class hierarchies and super encoders")
struct SuperEncoderTests {
    @Test func subclassRoundTripsThroughSuperEncoder() throws {
        let garage = try TestEngine.garage()
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
        let garage = try TestEngine.garage()
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
        let garage = try TestEngine.garage()
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

        let garage = try TestEngine.garage()
        try garage.park(value)
        #expect(try codingStoredValue(garage, CodingSilentSuper.self, "s") == JSONReader.parse(foundationData))
        #expect(try garage.retrieve(CodingSilentSuper.self, identifier: "s") == value)
    }

    @Test func unkeyedSuperEncoderRoundTrips() throws {
        let garage = try TestEngine.garage()
        let value = CodingUnkeyedSuper(id: "u1", base: CodingPerson(id: "p9", name: "Base"))
        try garage.park(value)
        #expect(try codingStoredJSON(garage, CodingUnkeyedSuper.self, "u1") == #"["u1",{"id":"p9","name":"Base"}]"#)
        #expect(try garage.retrieve(CodingUnkeyedSuper.self, identifier: "u1") == value)
    }
}
