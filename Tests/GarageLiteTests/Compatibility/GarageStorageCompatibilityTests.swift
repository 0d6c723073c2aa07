import Foundation
@testable import GarageLite
import Testing

/// Issue 24: `Garage.Compatibility.garageStorage`, the one line that gives an app that changed
/// only its import GarageStorage's rules where its own code relies on them: an object parked
/// saying `.syncing` stays `.syncing` (its old job queries `.syncing`), and deleting a
/// referenced object leaves the reference dangling.
@Suite("GarageStorage's rules under Compatibility.garageStorage")
struct GarageStorageCompatibilityTests {
    /// How a change is written: at once, at `save()`, or when a `transaction { }` ends.
    enum Route: String, CaseIterable {
        case autosave, save, transaction
    }

    static func status(_ garage: Garage, _ identifier: Int) throws -> SyncStatus? {
        try garage.metadata(Book.self, identifier: identifier)?.syncStatus
    }

    /// GarageStorage's sync job, as its apps wrote it: what is `.notSynced` is parked saying
    /// `.syncing`, uploaded, then parked saying `.synced`; a job that stopped finds its work
    /// again with `retrieveAll(withStatus: .syncing)`.
    @Test(arguments: Route.allCases)
    func anObjectParkedSayingSyncingStaysSyncing(route: Route) throws {
        let garage = try TestEngine.garage()
        garage.compatibility = .garageStorage
        let author = Author(id: UUID(), name: "Woolf")
        try garage.park(Book(id: 1, title: "Orlando", author: author, syncStatus: .notSynced))

        var book = try #require(try garage.retrieveAll(Book.self, withStatus: .notSynced).first)
        book.syncStatus = .syncing
        func parkBoth() throws {
            try garage.park(book)                                                          // a row no claim holds
            try garage.park(Book(id: 2, title: "Flush", author: author, syncStatus: .syncing))    // a new row
            #expect(try garage.retrieveAll(Book.self, withStatus: .syncing).map(\.id).sorted() == [1, 2])
        }
        switch route {
        case .autosave:
            try parkBoth()
        case .save:
            garage.isAutosaveEnabled = false
            try parkBoth()
            try garage.save()
            garage.isAutosaveEnabled = true
        case .transaction:
            try garage.transaction { try parkBoth() }
        }
        #expect(try Self.status(garage, 1) == .syncing && Self.status(garage, 2) == .syncing)
        #expect(try garage.count(Book.self, withStatus: .syncing) == 2)
        #expect(try garage.retrieve(Book.self, identifier: 1)?.syncStatus == .syncing)

        // Uploaded: parked saying .synced, its content unchanged.
        book.syncStatus = .synced
        try garage.park(book)
        #expect(try Self.status(garage, 1) == .synced)

        // GarageLite's rule, for comparison: no claim holds the row, so the edit is to upload.
        garage.compatibility = .garageLite
        try garage.park(Book(id: 3, title: "Flush", author: author, syncStatus: .syncing))
        #expect(try Self.status(garage, 3) == .notSynced)
    }

    /// The same with the `async` entry points, a class model and `parkAll`'s streaming path.
    @Test func anObjectParkedSayingSyncingStaysSyncingAsync() async throws {
        let garage = try TestEngine.garage()
        garage.compatibility = .garageStorage
        let anne = Sailor(name: "Anne", rank: "captain")
        anne.syncStatus = .syncing
        try await garage.park(anne)
        #expect(try await garage.syncStatus(for: anne) == .syncing)
        anne.rank = "commodore"
        try await garage.park(anne)
        #expect(try await garage.syncStatus(for: anne) == .syncing)
        let crew = (0..<Garage.streamingThreshold).map { index in
            let sailor = Sailor(name: "s\(index)", rank: "able")
            sailor.syncStatus = .syncing
            return sailor
        }
        try await garage.parkAll(crew)
        #expect(try await garage.count(Sailor.self, withStatus: .syncing) == crew.count + 1)
        #expect(try await garage.retrieveAll(Sailor.self, withStatus: .syncing).count == crew.count + 1)
    }

    /// GarageStorage's delete: the row goes, the references to it stay, and a referrer reads
    /// an optional reference as `nil`. The app's own `deleteRule` still wins, set before or after.
    @Test func deletingAReferencedObjectLeavesTheReferenceDangling() throws {
        let garage = try TestEngine.garage()
        #expect(garage.compatibility == .garageLite && garage.deleteRule.description == "deny")
        #expect(Garage.Compatibility.garageStorage.description == "garageStorage")
        #expect(Garage.Compatibility(keepsParkedSyncingStatus: true, leavesReferencesDangling: false).description
            == "Compatibility(keepsParkedSyncingStatus: true, leavesReferencesDangling: false)")
        let anne = Sailor(name: "Anne", rank: "captain")
        anne.shipmate = Sailor(name: "Mary", rank: "mate")
        try garage.park(anne)
        #expect(throws: GarageError.self) { try garage.delete(Sailor.self, identifier: "Mary") }   // GarageLite's .deny

        garage.compatibility = .garageStorage
        #expect(garage.deleteRule.description == "rowOnly")
        #expect(try garage.delete(Sailor.self, identifier: "Mary"))
        #expect(try garage.retrieve(Sailor.self, identifier: "Anne")?.shipmate == nil)
        #expect(try garage.check().problems.count == 1, "the reference dangles, as in GarageStorage")

        garage.deleteRule = .deny
        anne.shipmate = Sailor(name: "Kit", rank: "mate")
        try garage.park(anne)
        #expect(throws: GarageError.self) { try garage.delete(Sailor.self, identifier: "Kit") }
        garage.compatibility = .garageLite
        garage.compatibility = .garageStorage
        #expect(garage.deleteRule.description == "deny", "a rule the app set stays")
    }

    @Test func deletingAReferencedObjectLeavesTheReferenceDanglingAsync() async throws {
        let garage = try TestEngine.garage()
        garage.compatibility = .garageStorage
        let author = Author(id: UUID(), name: "Woolf")
        try await garage.park(Book(id: 1, title: "Orlando", author: author))
        try await garage.delete(author)
        #expect(try await garage.count(Author.self) == 0)
        // The book no longer reads (its author is not optional), as in GarageStorage.
        await #expect(throws: DecodingError.self) { try await garage.retrieve(Book.self, identifier: 1) }
        #expect(try await garage.retrieveAllLossy(Book.self).failures.map(\.identifier) == ["1"])
    }
}
