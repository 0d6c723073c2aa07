import Foundation
import GarageLite
import Testing

/// A crew member as the README writes its models: a class, neither `Sendable` nor meant to be.
final class Sailor: Mappable, Syncable {
    var id: String { name }
    var name: String
    var rank: String
    var shipmate: Sailor?
    var syncStatus: SyncStatus = .notSynced

    init(name: String, rank: String) {
        self.name = name
        self.rank = rank
    }
}

/// A struct that is not `Sendable` either: it holds a class.
struct Ship: Codable, Identifiable {
    var id: String
    var captain: Sailor
    var crew: [Sailor]
}

@available(*, unavailable)
extension Ship: Sendable {}

// The golden files' `FixtureV1.Sailor` and `FixtureV1.Ship` are stored as "Sailor" and "Ship":
// in one process, these need names of their own.
extension Sailor: StoredTypeNamed {
    static let storedTypeName = "AsyncModels.Sailor"
}

extension Ship: StoredTypeNamed {
    static let storedTypeName = "AsyncModels.Ship"
}

/// Non-`Sendable` models work from `async` code, on the main actor, in an actor, and in
/// `async` transactions, with every `async` call.
@Suite("Async API with non-Sendable models")
struct AsyncModelTests {
    @Test func classAndStructModelsRoundTripFromAsyncCode() async throws {
        let directory = try TemporaryDirectory()
        let garage = try TestEngine.garage(path: directory.path("crew.sqlite"))
        let anne = Sailor(name: "Anne", rank: "captain")
        let mary = Sailor(name: "Mary", rank: "gunner")
        anne.shipmate = mary
        try await garage.park(Ship(id: "Revenge", captain: anne, crew: [anne, mary]))

        let ship = try #require(try await garage.retrieve(Ship.self, identifier: "Revenge"))
        #expect(ship.captain.shipmate?.name == "Mary")
        #expect(ship.crew.map(\.name) == ["Anne", "Mary"])
        // One instance per object in a retrieved graph.
        #expect(ship.captain === ship.crew[0])

        let sailors = try await garage.retrieveAll(Sailor.self)
        #expect(sailors.map(\.name) == ["Anne", "Mary"])
        #expect(try await garage.retrieveAllLossy(Sailor.self).objects.count == 2)
        #expect(try await garage.retrieveAll(Sailor.self, withStatus: .notSynced).count == 2)
        let pending: [Sailor] = try await garage.retrieveAll(withStatus: .notSynced)
        #expect(pending.count == 2)
        #expect(try await garage.count(Sailor.self) == 2)
        #expect(try await garage.count(Sailor.self, withStatus: .notSynced) == 2)
        #expect(try await garage.identifiers(of: Sailor.self) == ["Anne", "Mary"])
        #expect(try await garage.syncStatusCounts()["AsyncModels.Sailor"] == [.notSynced: 2])
        #expect(try await garage.metadata(Sailor.self, identifier: "Anne")?.revision == 1)
        #expect(try await garage.metadata(for: mary).syncStatus == .notSynced)

        let claim = try await garage.claim(Sailor.self, limit: 10)
        #expect(claim.objects.map(\.name).sorted() == ["Anne", "Mary"])
        #expect(try await garage.complete(claim).synced.sorted() == ["Anne", "Mary"])
        #expect(try await garage.syncStatus(for: anne) == .synced)
        try await garage.setSyncStatus(.notSynced, for: anne)
        #expect(try await garage.syncStatus(for: anne) == .notSynced)

        var visited: [String] = []
        try await garage.forEach(Sailor.self, batchSize: 1) { sailor in
            await Task.yield()
            visited.append(sailor.name)
        }
        #expect(visited == ["Anne", "Mary"])

        #expect(try await garage.deleteAll(Ship.self) == 1)
        #expect(try await garage.count(Ship.self) == 0)
    }

    @MainActor
    @Test func mainActorCodeParksAndRetrievesItsOwnObjects() async throws {
        let garage = try TestEngine.garage()
        let sailor = Sailor(name: "Jack", rank: "cook")
        try await garage.park(sailor)
        sailor.rank = "bosun"             // still this actor's object after parking it
        try await garage.park(sailor)
        let again = try #require(try await garage.retrieve(Sailor.self, identifier: "Jack"))
        again.rank += "!"                 // and the retrieved one is this actor's too
        #expect(again.rank == "bosun!")
    }

    @MainActor
    @Test func mainActorCodeObservesANonSendableObject() async throws {
        let garage = try TestEngine.garage()
        let jack = Sailor(name: "Jack", rank: "cook")
        try await garage.park(jack)
        var values = try garage.changes(to: Sailor.self, identifier: "Jack").makeAsyncIterator()
        jack.rank = "bosun"
        try await garage.park(jack)
        let changed = try #require(try await values.next())
        #expect(changed?.rank == "bosun")
        try await garage.delete(jack)
        let deleted = try #require(try await values.next())
        #expect(deleted == nil)
    }

    actor Quartermaster {
        let garage: Garage
        var roster: [Sailor] = []

        init(garage: Garage) {
            self.garage = garage
        }

        func enlist(_ name: String) async throws -> Int {
            try await garage.park(Sailor(name: name, rank: "hand"))
            roster = try await garage.retrieveAll(Sailor.self)
            return roster.count
        }
    }

    @Test func anActorKeepsTheObjectsItRetrieves() async throws {
        let quartermaster = Quartermaster(garage: try TestEngine.garage())
        #expect(try await quartermaster.enlist("Billy") == 1)
        #expect(try await quartermaster.enlist("Israel") == 2)
    }

    @Test func asyncTransactionCommitsAllOrNothing() async throws {
        let garage = try TestEngine.garage()
        try await garage.transaction {
            try await garage.park(Sailor(name: "Anne", rank: "captain"))
            // Inside, this task reads the transaction's changes.
            #expect(try await garage.count(Sailor.self) == 1)
            try await garage.park(Sailor(name: "Mary", rank: "gunner"))
        }
        #expect(try await garage.count(Sailor.self) == 2)

        struct Mutiny: Error {}
        await #expect(throws: Mutiny.self) {
            try await garage.transaction {
                try await garage.delete(Sailor(name: "Anne", rank: "captain"))
                #expect(try await garage.count(Sailor.self) == 1)
                throw Mutiny()
            }
        }
        #expect(try await garage.identifiers(of: Sailor.self) == ["Anne", "Mary"])
    }

    @Test func asyncAutosaveScopeKeepsChangesUnsaved() async throws {
        let garage = try TestEngine.garage()
        try await garage.withAutosaveDisabled {
            try await garage.park(Sailor(name: "Anne", rank: "captain"))
        }
        #expect(garage.hasUnsavedChanges)
        try await garage.save()
        #expect(!garage.hasUnsavedChanges)
        #expect(try await garage.count(Sailor.self) == 1)
    }

    @Test func asyncDateScopesApplyToTheCallsInside() async throws {
        struct Voyage: Codable, Identifiable, Equatable {
            var id: String
            var departure: Date
        }
        let garage = try TestEngine.garage()
        let voyage = Voyage(id: "v1", departure: Date(timeIntervalSince1970: 1_000_000))
        try await garage.withDateEncodingStrategy(.iso8601) {
            try await garage.park(voyage)
        }
        // Written as a string, which the default strategy also reads.
        #expect(try await garage.retrieve(Voyage.self, identifier: "v1") == voyage)
        let read = try await garage.withDateDecodingStrategy(.iso8601) {
            try await garage.retrieve(Voyage.self, identifier: "v1")
        }
        #expect(read == voyage)
    }

    /// The async `parkAll` streams large arrays as the synchronous one does: an `encode(to:)`
    /// that parks meanwhile would wait for the writer that waits for it, so it is refused.
    @Test func asyncParkAllStreams() async throws {
        struct ParksWhileEncoded: Codable, Identifiable {
            var id: Int
            func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: CodingKeys.self)
                try container.encode(id, forKey: .id)
                if id == 1_500 { try AsyncModelTests.garage.park(Counter(id: 1, value: 1)) }
            }
        }
        let garage = Self.garage
        try await garage.deleteAllObjects()
        await #expect {
            try await garage.parkAll((0..<2_000).map { ParksWhileEncoded(id: $0) })
        } throws: { error in
            guard case GarageError.reentrantCall = error else { return false }
            return true
        }
        // Nothing of the failed call was written.
        #expect(try await garage.count(ParksWhileEncoded.self) == 0)
        try await garage.parkAll((0..<1_999).map { ParksWhileEncoded(id: 2_000 + $0) })
        #expect(try await garage.count(ParksWhileEncoded.self) == 1_999)
    }

    /// The garage of ``asyncParkAllStreams()``, which its model's `encode(to:)` reaches.
    static let garage: Garage = {
        do { return try TestEngine.garage() } catch { fatalError("an in-memory garage: \(error)") }
    }()
}
