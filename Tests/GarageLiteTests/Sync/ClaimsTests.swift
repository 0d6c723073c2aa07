import Foundation
import Testing
@testable import GarageLite

@Suite("Sync jobs: claims")
struct ClaimsTests {
    func notes(_ garage: Garage, count: Int) throws -> [Memo] {
        let memos = (0..<count).map { Memo(id: "m\($0)", text: "memo \($0)") }
        for memo in memos {
            try garage.park(memo)   // one by one: modification dates in this order
        }
        return memos
    }

    @Test func claimTakesTheOldestAndMovesThemToSyncing() throws {
        let garage = try TestEngine.garage()
        _ = try notes(garage, count: 5)
        try garage.park(Memo(id: "m0", text: "edited last"))     // now the newest
        let claim = try garage.claim(Memo.self, limit: 3)
        #expect(claim.identifiers == ["m1", "m2", "m3"])
        #expect(claim.objects.map(\.id) == claim.identifiers)
        #expect(claim.objects.allSatisfy { $0.syncStatus == .syncing })
        #expect(try garage.identifiers(of: Memo.self, withStatus: .syncing) == ["m1", "m2", "m3"])
        #expect(try garage.count(Memo.self, withStatus: .notSynced) == 2)
        let claimDate = try #require(try garage.metadata(Memo.self, identifier: "m1")?.claimDate)
        #expect(abs(claimDate.timeIntervalSince(claim.date)) < 0.001)
        // The rest is left for another job; nothing is claimed twice.
        let second = try garage.claim(Memo.self, limit: 10)
        #expect(Set(second.identifiers) == ["m4", "m0"])
        #expect(try garage.claim(Memo.self, limit: 10).isEmpty)
    }

    @Test func completeMarksUnchangedRowsSyncedAndEditedRowsNotSynced() throws {
        let garage = try TestEngine.garage()
        _ = try notes(garage, count: 4)
        let claim = try garage.claim(Memo.self, limit: 4)
        // While the job uploads, the app edits m1, re-parks m2 unchanged, and deletes m3.
        try garage.park(Memo(id: "m1", text: "edited during upload"))
        try garage.park(Memo(id: "m2", text: "memo 2"))
        try garage.delete(Memo(id: "m3", text: ""))
        // An edited row can't be claimed by another job while the first holds it.
        #expect(try garage.claim(Memo.self, limit: 10).isEmpty)

        let report = try garage.complete(claim)
        #expect(report.synced == ["m0", "m2"])
        // m3 was uploaded, then deleted: its deletion is uploaded next, like m1's edit.
        #expect(report.notSynced == ["m1", "m3"])
        #expect(report.deleted.isEmpty)
        #expect(report.lost.isEmpty)
        #expect(try garage.syncStatus(for: Memo(id: "m0", text: "")) == .synced)
        #expect(try garage.syncStatus(for: Memo(id: "m1", text: "")) == .notSynced)
        // The edit and the deletion are uploaded by the next claim.
        let next = try garage.claim(Memo.self, limit: 10)
        #expect(next.objects.map(\.text) == ["edited during upload"])
        #expect(next.deletions == ["m3"])
        #expect(try garage.metadata(Memo.self, identifier: "m0")?.claimDate == nil)
    }

    @Test func releaseReturnsRowsToNotSyncedUnlessTheAppChangedTheirStatus() throws {
        let garage = try TestEngine.garage()
        _ = try notes(garage, count: 3)
        let claim = try garage.claim(Memo.self, limit: 3)
        try garage.setSyncStatus(.synced, for: Memo(id: "m2", text: ""))
        let report = try garage.release(claim)
        #expect(report.notSynced == ["m0", "m1"])
        #expect(report.keptByApp == ["m2"])
        #expect(try garage.count(Memo.self, withStatus: .notSynced) == 2)
        #expect(try garage.count(Memo.self, withStatus: .synced) == 1)
        #expect(try garage.claim(Memo.self, limit: 10).identifiers == ["m0", "m1"])
    }

    @Test func staleClaimsAreReleasedAndTheirJobFindsThemLost() throws {
        let garage = try TestEngine.garage()
        _ = try notes(garage, count: 3)
        let crashed = try garage.claim(Memo.self, limit: 2)
        #expect(try garage.releaseStaleClaims(olderThan: 3600) == 0)   // not stale yet
        #expect(try garage.releaseStaleClaims(olderThan: -1) == 2)     // everything claimed before now + 1 s
        #expect(try garage.count(Memo.self, withStatus: .syncing) == 0)
        #expect(try garage.count(Memo.self, withStatus: .notSynced) == 3)
        let next = try garage.claim(Memo.self, limit: 10)
        #expect(next.count == 3)
        let report = try garage.complete(crashed)
        #expect(report.lost == ["m0", "m1"])
        #expect(report.synced.isEmpty)
        // The new claim still holds its rows.
        #expect(try garage.complete(next).synced == ["m0", "m1", "m2"])
    }

    @Test func claimsCanTakeOtherStatusesAndOnlyTheirType() throws {
        let garage = try TestEngine.garage()
        try garage.park(Memo(id: "a", text: "", syncStatus: .undetermined))
        try garage.park(Note(text: "other type", tags: [], syncStatus: .notSynced))
        #expect(try garage.claim(Memo.self, limit: 5).isEmpty)
        let claim = try garage.claim(Memo.self, limit: 5, status: .undetermined)
        #expect(claim.identifiers == ["a"])
        #expect(try garage.claim(Memo.self, limit: 0).isEmpty)
    }

    @Test func claimsSurviveReopeningTheStore() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("jobs.sqlite")
        let claim: Claim<Memo>
        do {
            let garage = try TestEngine.garage(path: path)
            _ = try notes(garage, count: 2)
            claim = try garage.claim(Memo.self, limit: 2)
        }
        let reopened = try TestEngine.garage(path: path)
        #expect(try reopened.claim(Memo.self, limit: 5).isEmpty)
        #expect(try reopened.complete(claim).synced == ["m0", "m1"])
    }

    @Test func metadataReportsDatesRevisionAndStatus() throws {
        let garage = try TestEngine.garage()
        let memo = Memo(id: "m", text: "one")
        try garage.park(memo)
        let first = try garage.metadata(for: memo)
        #expect(first.revision == 1)
        #expect(first.syncStatus == .notSynced)
        #expect(first.isRoot)
        #expect(first.creationDate == first.modificationDate)
        try garage.park(Memo(id: "m", text: "two"))
        let second = try garage.metadata(for: memo)
        #expect(second.revision == 2)
        #expect(second.creationDate == first.creationDate)
        #expect(second.modificationDate >= first.modificationDate)
        #expect(try garage.metadata(Memo.self, identifier: "none") == nil)
        #expect(throws: GarageError.failedToRetrieveObject("Memo", "x")) {
            try garage.metadata(for: Memo(id: "x", text: ""))
        }
    }

    @Test func asyncClaimCompleteAndRelease() async throws {
        let garage = try TestEngine.garage()
        for index in 0..<4 {
            try await garage.park(Memo(id: "m\(index)", text: "\(index)"))
        }
        let first = try await garage.claim(Memo.self, limit: 2)
        let second = try await garage.claim(Memo.self, limit: 2)
        #expect(Set(first.identifiers).isDisjoint(with: second.identifiers))
        #expect(try await garage.complete(first).synced.count == 2)
        #expect(try await garage.release(second).notSynced.count == 2)
        #expect(try await garage.count(Memo.self, withStatus: .notSynced) == 2)
    }

}
