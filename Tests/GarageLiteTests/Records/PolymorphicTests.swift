import Foundation
@testable import GarageLite
import Testing

protocol PPet: Codable, Sendable {
    var name: String { get }
}

struct PDog: PPet, Equatable {
    var name: String
    var breed: String
}

struct PCat: PPet, Equatable {
    var name: String
    var indoor: Bool
}

/// A pet that is an object of its own: parked as its own row, referenced from the household.
struct PParrot: PPet, Identifiable, Equatable {
    var id: String
    var name: String
    var words: [String]
}

struct PHousehold: Codable, Identifiable {
    var id: String
    @Polymorphic var pets: [any PPet]
    @Polymorphic var favorite: (any PPet)?
    @Polymorphic var byRoom: [String: any PPet]
}

/// Issue 13: protocol-typed values, stored with their type names.
@Suite("Polymorphic values")
struct PolymorphicTests {
    private func household() -> PHousehold {
        PHousehold(id: "h1",
                   pets: [PDog(name: "Rex", breed: "collie"), PCat(name: "Tom", indoor: true),
                          PParrot(id: "p1", name: "Polly", words: ["hello"])],
                   favorite: PCat(name: "Tom", indoor: true),
                   byRoom: ["kitchen": PDog(name: "Rex", breed: "collie"), "hall": PParrot(id: "p1", name: "Polly", words: ["hello"])])
    }

    @Test func protocolTypedValuesRoundTripInlineAndBehindReferences() async throws {
        let garage = try TestEngine.garage()
        try garage.register(PDog.self, PCat.self, PParrot.self)
        try await garage.park(household())
        let read = try #require(try await garage.retrieve(PHousehold.self, identifier: "h1"))
        #expect(read.pets.count == 3)
        #expect(read.pets[0] as? PDog == PDog(name: "Rex", breed: "collie"))
        #expect(read.pets[1] as? PCat == PCat(name: "Tom", indoor: true))
        #expect(read.pets[2] as? PParrot == PParrot(id: "p1", name: "Polly", words: ["hello"]))
        #expect(read.favorite as? PCat == PCat(name: "Tom", indoor: true))
        #expect(read.byRoom["kitchen"] is PDog && read.byRoom["hall"] is PParrot)
        // The parrot is an object of its own, referenced by its identifier.
        #expect(try await garage.retrieve(PParrot.self, identifier: "p1")?.words == ["hello"])
        let json = try codingStoredJSON(garage, PHousehold.self, "h1")
        #expect(json.contains(#"{"@type":"PParrot","@value":"p1"}"#))
        #expect(try await garage.check().isOK)

        var none = household()
        none.id = "h2"
        none.favorite = nil
        none.pets = []
        try await garage.park(none)
        let readNone = try #require(try await garage.retrieve(PHousehold.self, identifier: "h2"))
        #expect(readNone.favorite == nil && readNone.pets.isEmpty)
    }

    @Test func anUnregisteredTypeIsNamedWhenParkedAndWhenRetrieved() throws {
        let garage = try TestEngine.garage()
        try garage.register(PDog.self, PParrot.self)
        #expect {
            try garage.park(household())
        } throws: { error in
            guard case GarageError.unregisteredType(let type, _) = error else { return false }
            return type.hasSuffix("PCat")
        }
        #expect(try garage.count() == 0)

        // Stored by a garage that knew the cat, read by one that doesn't.
        let directory = try TemporaryDirectory()
        let knowing = try TestEngine.garage(path: directory.path("pets.sqlite"))
        try knowing.register(PDog.self, PCat.self, PParrot.self)
        try knowing.park(household())
        let forgetful = try TestEngine.garage(path: directory.path("pets.sqlite"))
        try forgetful.register(PDog.self, PParrot.self)
        #expect {
            _ = try forgetful.retrieve(PHousehold.self, identifier: "h1")
        } throws: { error in
            "\(error)".contains("PCat") && "\(error)".contains("garage.register(PCat.self)")
                && "\(error)".contains("PHousehold(h1)")
        }
    }

    @Test func polymorphicPropertiesAddedLaterReadEmptyOrNil() throws {
        let garage = try TestEngine.garage()
        try garage.register(PDog.self, PCat.self, PParrot.self)
        try garage.park(PHouseholdV0(id: "h0"))
        let read = try #require(try garage.retrieve(PHousehold.self, identifier: "h0"))
        #expect(read.pets.isEmpty && read.favorite == nil && read.byRoom.isEmpty)
    }

    @Test func aPlainJSONDecoderCannotDecodeThemAndSaysWhy() throws {
        let bytes = try JSONEncoder().encode(household())
        #expect {
            _ = try JSONDecoder().decode(PHousehold.self, from: bytes)
        } throws: { error in
            "\(error)".contains("decodes only in a Garage")
        }
    }
}


/// A household as first stored, before it had pets.
struct PHouseholdV0: Codable, Identifiable, StoredTypeNamed {
    static let storedTypeName = "PHousehold"
    static let sharesStoredTypeName = true
    var id: String
}
