import Foundation
@testable import GarageLite
import Testing

/// Deletions reach the sync job: deleting an object a copy of which may be on the server
/// leaves a tombstone that only claims see.
@Suite("Tombstones")
struct TombstoneTests {
    /// Rows in the table, tombstones included.
    static func rawCount(_ garage: Garage) throws -> Int {
        try garage.store.allStoredRows().count
    }

    /// A garage where memos m0…m2 reached the server (claimed and completed) and m3 did not.
    static func syncedGarage() throws -> Garage {
        let garage = try TestEngine.garage()
        try garage.parkAll((0..<3).map { Memo(id: "m\($0)", text: "memo \($0)") })
        try garage.complete(try garage.claim(Memo.self, limit: 10))
        try garage.park(Memo(id: "m3", text: "local only"))
        return garage
    }

    @Test func aDeletedSyncedObjectDisappearsButItsJobSeesIt() throws {
        let garage = try Self.syncedGarage()
        try garage.delete(Memo(id: "m1", text: ""))
        #expect(try garage.retrieve(Memo.self, identifier: "m1") == nil)
        #expect(try garage.retrieveAll(Memo.self).map(\.id) == ["m0", "m2", "m3"])
        #expect(try garage.count(Memo.self) == 3)
        #expect(try garage.identifiers(of: Memo.self) == ["m0", "m2", "m3"])
        #expect(try garage.count(Memo.self, withStatus: .notSynced) == 1)
        #expect(try garage.metadata(Memo.self, identifier: "m1") == nil)
        var visited: [String] = []
        try garage.forEach(Memo.self) { visited.append($0.id) }
        #expect(visited == ["m0", "m2", "m3"])
        #expect(try garage.check().isOK)
        #expect(try garage.collectGarbage(dryRun: false).objects.isEmpty)
        #expect(try Self.rawCount(garage) == 4)

        let claim = try garage.claim(Memo.self, limit: 10)
        #expect(claim.identifiers == ["m3"])
        #expect(claim.deletions == ["m1"])
        #expect(!claim.isEmpty)
        let report = try garage.complete(claim)
        #expect(report.synced == ["m3"])
        #expect(report.deletionsUploaded == ["m1"])
        #expect(try Self.rawCount(garage) == 3)           // the tombstone is gone
        #expect(try garage.claim(Memo.self, limit: 10).isEmpty)
    }

    @Test func anObjectThatNeverLeftTheDeviceIsSimplyDeleted() throws {
        let garage = try Self.syncedGarage()
        #expect(try garage.delete(Memo.self, identifier: "m3"))
        #expect(try Self.rawCount(garage) == 3)
        #expect(try garage.claim(Memo.self, limit: 10).isEmpty)
        // Nor do the objects of types that are not synced leave anything.
        try garage.park(Counter(id: 1, value: 1))
        try garage.delete(Counter(id: 1, value: 1))
        #expect(try Self.rawCount(garage) == 3)
    }

    @Test func releaseKeepsTheDeletionForTheNextClaim() throws {
        let garage = try Self.syncedGarage()
        try garage.delete(Memo(id: "m0", text: ""))
        let failed = try garage.claim(Memo.self, limit: 10)
        #expect(failed.deletions == ["m0"])
        try garage.release(failed)
        let retry = try garage.claim(Memo.self, limit: 10)
        #expect(retry.deletions == ["m0"])
        // A stale claim is released too.
        #expect(try garage.releaseStaleClaims(olderThan: -1) == 2)
        #expect(try garage.claim(Memo.self, limit: 10).deletions == ["m0"])
    }

    /// A delete followed by a re-create of the same identifier must not sync only the delete.
    @Test func parkingOverATombstoneIsAnEdit() throws {
        let garage = try Self.syncedGarage()
        try garage.delete(Memo(id: "m2", text: ""))
        var memo = Memo(id: "m2", text: "back again")
        memo.syncStatus = .synced                         // even an object that says .synced
        try garage.park(memo)
        #expect(try garage.retrieve(Memo.self, identifier: "m2")?.text == "back again")
        #expect(try garage.syncStatus(for: memo) == .notSynced)
        let claim = try garage.claim(Memo.self, limit: 10)
        #expect(claim.identifiers.sorted() == ["m2", "m3"])
        #expect(claim.deletions.isEmpty)
    }

    /// Unsaved changes read as the store will be: a park over a committed tombstone is an
    /// edit to upload there too, even for an object that says .synced.
    @Test func anUnsavedParkOverATombstoneReadsAsAnEdit() throws {
        let garage = try Self.syncedGarage()
        try garage.delete(Memo(id: "m2", text: ""))
        garage.isAutosaveEnabled = false
        var memo = Memo(id: "m2", text: "back again")
        memo.syncStatus = .synced
        try garage.park(memo)
        #expect(try garage.syncStatus(for: memo) == .notSynced)
        try garage.save()
        #expect(try garage.syncStatus(for: memo) == .notSynced)
    }

    @Test func anObjectDeletedDuringItsUploadIsDeletedNextTime() throws {
        let garage = try TestEngine.garage()
        try garage.park(Memo(id: "m0", text: "draft"))
        let claim = try garage.claim(Memo.self, limit: 10)
        try garage.delete(Memo(id: "m0", text: ""))
        #expect(try garage.complete(claim).notSynced == ["m0"])
        let next = try garage.claim(Memo.self, limit: 10)
        #expect(next.deletions == ["m0"])
        #expect(next.objects.isEmpty)
    }

    @Test func deletionsComeInTheOrderTheyWereMade() throws {
        let garage = try Self.syncedGarage()
        for id in ["m2", "m0", "m1"] { try garage.delete(Memo.self, identifier: id) }
        #expect(try garage.claim(Memo.self, limit: 10).deletions == ["m2", "m0", "m1"])
    }

    @Test func deleteAllRecordsTombstonesAndDeleteAllObjectsIsALocalReset() throws {
        let garage = try Self.syncedGarage()
        #expect(try garage.deleteAll(Memo.self) == 4)
        #expect(try garage.count(Memo.self) == 0)
        #expect(try Self.rawCount(garage) == 3)            // m3 never left the device
        #expect(try garage.claim(Memo.self, limit: 10).deletions.sorted() == ["m0", "m1", "m2"])

        let other = try Self.syncedGarage()
        try other.delete(Memo(id: "m0", text: ""))
        #expect(try other.deleteAllObjects() == 3)
        #expect(try Self.rawCount(other) == 0)
        #expect(try other.claim(Memo.self, limit: 10).isEmpty)
    }

    @Test func unsavedDeletionsBecomeTombstonesWhenSaved() throws {
        let garage = try Self.syncedGarage()
        garage.isAutosaveEnabled = false
        try garage.delete(Memo(id: "m0", text: ""))
        #expect(try garage.retrieve(Memo.self, identifier: "m0") == nil)
        try garage.save()
        #expect(try garage.claim(Memo.self, limit: 10).deletions == ["m0"])
    }

    @Test func aReferenceToADeletedObjectDangles() throws {
        let garage = try TestEngine.garage()
        let author = Author(id: UUID(), name: "Sappho")
        try garage.park(Book(id: 1, title: "Fragments", author: author))
        try garage.complete(try garage.claim(Author.self, limit: 10))
        try garage.delete(author, rule: .rowOnly)
        let problems = try garage.check().problems
        #expect(problems.count == 1)
        #expect(problems.contains {
            if case .danglingReference(_, _, "Author", author.id.uuidString) = $0 { return true }
            return false
        })
    }

    @Test func downloadsMeetTombstones() throws {
        let garage = try Self.syncedGarage()
        try garage.delete(Memo(id: "m0", text: ""))
        try garage.delete(Memo(id: "m1", text: ""))
        // The server still sends m0: the local deletion it has not seen wins by default.
        let report = try garage.parkDownloaded([Memo(id: "m0", text: "server")])
        #expect(report.conflicts.map(\.resolution) == [.keptLocal])
        #expect(try garage.retrieve(Memo.self, identifier: "m0") == nil)
        // The server deleted m1 as well: nothing is left to upload.
        #expect(try garage.deleteDownloaded(Memo.self, identifiers: ["m1"]).deleted == ["m1"])
        #expect(try garage.claim(Memo.self, limit: 10).deletions == ["m0"])
    }

    @Test func observersSeeTheObjectGo() async throws {
        let garage = try Self.syncedGarage()
        var values = try garage.changes(to: Memo.self, identifier: "m0").makeAsyncIterator()
        try await garage.delete(Memo.self, identifier: "m0")
        let value = try #require(try await values.next())
        #expect(value == nil)
    }
}
