import Foundation
@testable import GarageLite
import Testing

/// Issue 12: GarageStorage's Swift API, as its apps call it, with its meaning.
@Suite("GarageStorage's API")
struct GarageStorageAPITests {
    /// `Garage(named:)` with subfolders in the name creates them, as Core Data does. The
    /// application support directory is `$XDG_DATA_HOME` on Linux, read at each call (the tests
    /// that open a garage by name move it one at a time).
    @Test func aNameWithSubfoldersCreatesThem() throws {
        #if os(Linux)
        try withTemporaryApplicationSupportDirectory { directory in
            let garage = try Garage(named: "MyApp/People")
            #expect(garage.path == directory.path("MyApp/People.sqlite"))
            try garage.park(Counter(id: 1, value: 1))
            #expect(FileManager.default.fileExists(atPath: directory.path("MyApp/People.sqlite")))
            #expect(garage.description == "Garage(\(directory.path("MyApp/People.sqlite")))")
            #expect(throws: GarageError.cannotOpenStore(path: ".sqlite", reason: "the name \"\" names no file")) {
                try Garage(named: "")
            }
        }
        #endif
    }

    // MARK: - Errors bridged to NSError

    static let garageStorageCases: [(GarageError, Int, String)] = [
        (.failedToRetrieveObject("SwiftPerson", "Sam"), 0, "Failed to retrieve object of type: SwiftPerson with identifier: Sam"),
        (.storageDataIsNil("SwiftPerson"), 1, "CoreDataObject.gsData is nil for type: SwiftPerson"),
        (.missingConformance("SwiftPerson"), 2, "Missing Identifiable or Hashable conformance for type: SwiftPerson"),
        (.unsupportedIDConformance("OrderID"), 3, "Identifiable ID type 'OrderID' must be String, UUID, or LosslessStringConvertible"),
    ]

    @Test func everyErrorIsInGarageStoragesDomainWithItsDescription() {
        #expect(GarageError.errorDomain == "GarageStorage")
        #expect(Garage.errorDomain == GarageError.errorDomain)
        for (error, code, description) in Self.garageStorageCases {
            let bridged = error as NSError
            #expect(bridged.domain == "GarageStorage")
            #expect(bridged.code == code)
            #expect(error.errorUserInfo[NSLocalizedDescriptionKey] as? String == description)
            #expect(bridged.localizedDescription == description)
        }
        let ours = GarageError.staleObject(typeName: "Note", identifier: "n1", parkedRevision: 1, storedRevision: 2)
        #expect((ours as NSError).domain == "GarageStorage")
        #expect((ours as NSError).code == 117)
        #expect((ours as NSError).localizedDescription == ours.description)
        #expect((GarageError.failedToRetrieveObject("A", "1") as NSError).localizedRecoverySuggestion
            == "Park the object first, or check its type and identifier.")
    }

    @Test func aThrownErrorBridgesToo() throws {
        let garage = try TestEngine.garage()
        do {
            try garage.delete(Counter(id: 7, value: 0))
            Issue.record("expected an error")
        } catch {
            let bridged = error as NSError
            #expect(bridged.domain == Garage.errorDomain)
            #expect(bridged.localizedDescription == "Failed to retrieve object of type: Counter with identifier: 7")
        }
    }

    // MARK: - Hashable objects looked up by hashValue

    struct GSTag: Codable, Hashable, Sendable {
        var name: String
    }

    @Test func aHashValueIdentifierIsALoudMistake() throws {
        let garage = try TestEngine.garage()
        let red = GSTag(name: "red")
        try garage.park(red)
        let error = #expect(throws: GarageError.self) { try garage.retrieve(GSTag.self, identifier: red.hashValue) }
        #expect(error == .contentIdentifierExpected(typeName: "GSTag", identifier: String(red.hashValue)))
        #expect(error?.description.contains("garage.identifier(for: object)") == true)
        // A string is any record's identifier (`park(_:identifier:)`): a miss is nil.
        #expect(try garage.retrieve(GSTag.self, identifier: "\(red.hashValue)") == nil)
        // The content identifier finds it; one of another content is a miss, as for any type.
        #expect(try garage.retrieve(GSTag.self, identifier: garage.identifier(for: red)) == red)
        #expect(try garage.retrieve(GSTag.self, identifier: garage.identifier(for: GSTag(name: "blue"))) == nil)
        // Identifiable types are looked up by any identifier, a miss is nil.
        #expect(try garage.retrieve(Counter.self, identifier: 12345) == nil)
    }

    /// A row stored under a hashValue (imported from GarageStorage) is found by it.
    @Test func aRowStoredUnderAHashValueIsFound() throws {
        let directory = try TemporaryDirectory()
        let garage = try TestEngine.garage(path: directory.path("garage.sqlite"))
        // Written as an import from another program writes it: the record API.
        try garage.importRecords([ObjectRecord(key: ObjectKey(typeName: "GSTag", identifier: "-4242"), json: #"{"name":"old"}"#)])
        #expect(try garage.retrieve(GSTag.self, identifier: -4242)?.name == "old")
        #expect(try garage.retrieveAll(GSTag.self).map(\.name) == ["old"])
    }

    // MARK: - deleteAllObjects(completion:), migrateAll(from:to:)

    @Test func deleteAllObjectsCallsItsCompletionOnceDeleted() throws {
        let garage = try TestEngine.garage()
        try garage.park(Counter(id: 1, value: 1))
        var countInCompletion: Int?
        try garage.deleteAllObjects {
            countInCompletion = try? garage.count(Counter.self)
        }
        #expect(countInCompletion == 0)
    }

    final class LegacyCounter {}

    @Test func migrateAllFromAClassUsesItsObjectiveCName() async throws {
        let directory = try TemporaryDirectory()
        let garage = try TestEngine.garage(path: directory.path("garage.sqlite"))
        let oldName = Identity.className(LegacyCounter.self)
        // A row of the old name, written as an import from another program writes it: the record API.
        try await garage.importRecords([ObjectRecord(key: ObjectKey(typeName: oldName, identifier: "1"), json: #"{"id":1,"value":5}"#)])
        #expect(try await garage.migrateAll(from: LegacyCounter.self, to: Counter.self) == 1)
        #expect(try await garage.retrieve(Counter.self, identifier: 1)?.value == 5)
        #expect(try await garage.migrateAll(from: LegacyCounter.self, to: Counter.self) == 0)
    }

    // MARK: - Custom coding, as GarageStorage's container overloads were called

    /// A model whose `encode(to:)` and `init(from:)` call the container methods GarageStorage
    /// overloaded for references: under a garage, the standard methods park and resolve them.
    final class Member: Codable, Identifiable {
        var id: String
        var mentor: Member?
        var friends: [Member]

        init(id: String, mentor: Member? = nil, friends: [Member] = []) {
            self.id = id
            self.mentor = mentor
            self.friends = friends
        }

        enum CodingKeys: String, CodingKey { case id, mentor, friends }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(id, forKey: .id)
            try container.encodeIfPresent(mentor, forKey: .mentor)
            try container.encode(friends, forKey: .friends)
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            id = try container.decode(String.self, forKey: .id)
            mentor = try container.decodeIfPresent(Member.self, forKey: .mentor)
            friends = try container.decode([Member].self, forKey: .friends)
        }
    }

    @Test func customCodingCallsKeepGarageStoragesMeaning() throws {
        let garage = try TestEngine.garage()
        let ada = Member(id: "ada")
        try garage.park(Member(id: "bob", mentor: ada, friends: [ada, Member(id: "cy")]))
        #expect(try garage.identifiers(of: Member.self) == ["ada", "bob", "cy"])   // each its own row
        let bob = try #require(try garage.retrieve(Member.self, identifier: "bob"))
        #expect(bob.mentor?.id == "ada" && bob.friends.map(\.id) == ["ada", "cy"])
        #expect(bob.mentor === bob.friends[0])                                       // one instance per row
        // A missing optional reference is nil, a missing referenced row in an array an error.
        try garage.delete(Member.self, identifier: "ada", rule: .rowOnly)
        #expect(throws: DecodingError.self) { try garage.retrieve(Member.self, identifier: "bob") }
        // Without a garage, plain JSON, fully inline.
        let json = try JSONEncoder().encode(Member(id: "dee", mentor: Member(id: "eve")))
        #expect(try JSONDecoder().decode(Member.self, from: json).mentor?.id == "eve")
    }
}
