import Foundation
import Testing
@testable import GarageLite

private func change(_ identifier: String?, _ kind: GarageChange.Kind) -> GarageChange {
    GarageChange(typeName: "Memo", identifier: identifier, kind: kind)
}

@Suite("Observing changes")
struct ObservationTests {
    @Test func changesOfATypeArriveAfterEachCommit() async throws {
        let garage = try TestEngine.garage()
        var changes = garage.changes(of: Memo.self).makeAsyncIterator()
        try await garage.park(Memo(id: "a", text: "1"))
        try await garage.park(Counter(id: 1, value: 1))               // another type: not delivered
        try await garage.parkAll([Memo(id: "b", text: ""), Memo(id: "c", text: "")])
        try await garage.setSyncStatus(.synced, for: Memo(id: "a", text: ""))
        try await garage.delete(Memo(id: "b", text: ""))
        try await garage.deleteAll(Memo.self)

        #expect(await changes.next() == [GarageChange(typeName: "Memo", identifier: "a", kind: .parked)])
        #expect(Set(await changes.next() ?? []) == [
            GarageChange(typeName: "Memo", identifier: "b", kind: .parked),
            GarageChange(typeName: "Memo", identifier: "c", kind: .parked),
        ])
        #expect(await changes.next() == [GarageChange(typeName: "Memo", identifier: "a", kind: .syncStatusChanged)])
        #expect(await changes.next() == [GarageChange(typeName: "Memo", identifier: "b", kind: .deleted)])
        #expect(await changes.next() == [GarageChange(typeName: "Memo", identifier: nil, kind: .deleted)])
    }

    @Test func unsavedChangesArriveWhenSavedAndTransactionsWhenCommitted() async throws {
        let garage = try TestEngine.garage()
        var changes = garage.changes(of: Memo.self).makeAsyncIterator()
        garage.isAutosaveEnabled = false
        try await garage.park(Memo(id: "a", text: ""))
        try await garage.park(Memo(id: "b", text: ""))
        try await garage.save()
        garage.isAutosaveEnabled = true
        #expect(Set((await changes.next() ?? []).map(\.identifier)) == ["a", "b"])

        try garage.transaction {
            try garage.park(Memo(id: "c", text: ""))
        }
        struct Abort: Error {}
        try? garage.transaction {
            try garage.park(Memo(id: "rolled back", text: ""))
            throw Abort()
        }
        try await garage.park(Memo(id: "d", text: ""))
        #expect(await changes.next()?.map(\.identifier) == ["c"])
        #expect(await changes.next()?.map(\.identifier) == ["d"])
    }

    @Test func syncJobsStatusChangesAreObserved() async throws {
        let garage = try TestEngine.garage()
        try await garage.parkAll([Memo(id: "a", text: ""), Memo(id: "b", text: "")])
        var changes = garage.changes(of: Memo.self).makeAsyncIterator()
        let claim = try await garage.claim(Memo.self, limit: 5)
        try await garage.complete(claim)
        let claimed = await changes.next() ?? []
        let completed = await changes.next() ?? []
        #expect(claimed.count == 2 && claimed.allSatisfy { $0.kind == .syncStatusChanged })
        #expect(completed.count == 2 && completed.allSatisfy { $0.kind == .syncStatusChanged })
    }

    @Test func migratingATypeIsObservedOnBothSides() async throws {
        let garage = try TestEngine.garage()
        try await garage.park(Counter(id: 1, value: 1))
        var old = garage.changes(of: Counter.self).makeAsyncIterator()
        var new = garage.changes(of: RenamedCounter.self).makeAsyncIterator()
        try await garage.migrateAll(fromOldClassName: "Counter", to: RenamedCounter.self)
        #expect(await old.next() == [GarageChange(typeName: "Counter", identifier: nil, kind: .deleted)])
        #expect(await new.next() == [GarageChange(typeName: "RenamedCounter", identifier: nil, kind: .parked)])
    }

    @Test func oneObjectIsObservedAsItsNewValue() async throws {
        let garage = try TestEngine.garage()
        let values = try garage.changes(to: Memo.self, identifier: "a")
        var iterator = values.makeAsyncIterator()
        try await garage.park(Memo(id: "other", text: ""))        // not this object
        try await garage.park(Memo(id: "a", text: "first"))
        #expect(try await iterator.next()??.text == "first")
        try await garage.park(Memo(id: "a", text: "second"))
        #expect(try await iterator.next()??.text == "second")
        try await garage.delete(Memo(id: "a", text: ""))
        let deleted = try await iterator.next()
        #expect(deleted != nil && deleted! == nil)
    }

    /// Observation reports changes only: a park of an object as it is stored, or a status set
    /// to what it was, commits nothing to tell.
    @Test func writesThatChangeNothingAreNotReported() async throws {
        let garage = try TestEngine.garage()
        try await garage.park(Memo(id: "a", text: "1"))
        var changes = garage.changes(of: Memo.self).makeAsyncIterator()
        try await garage.park(Memo(id: "a", text: "1"))                       // as stored
        try await garage.parkAll([Memo(id: "a", text: "1"), Memo(id: "b", text: "")])
        try await garage.setSyncStatus(.notSynced, for: Memo(id: "a", text: ""))   // as it was
        try await garage.deleteAll(Counter.self)                              // nothing to delete
        try await garage.park(Memo(id: "a", text: "2"))
        #expect(await changes.next() == [change("b", .parked)])
        #expect(await changes.next() == [change("a", .parked)])
    }

    /// Each value of an observed object is yielded once: a burst of commits read late yields
    /// the latest value once, and a claim then a release of an object whose value does not hold
    /// its status yields nothing.
    @Test func eachValueIsYieldedOnce() async throws {
        let garage = try TestEngine.garage()
        var values = try garage.changes(to: Counter.self, identifier: 1).makeAsyncIterator()
        /// Parks `value` a moment from now, while the iterator waits: if a spent signal made it
        /// yield, it would yield the value before this one.
        func parkSoon(_ value: Int) -> Task<Void, any Error> {
            Task {
                try await Task.sleep(nanoseconds: 50_000_000)
                try await garage.park(Counter(id: 1, value: value))
            }
        }
        for value in 1...3 { try await garage.park(Counter(id: 1, value: value)) }
        #expect(try await values.next()??.value == 3)
        var soon = parkSoon(4)
        #expect(try await values.next()??.value == 4)         // the burst's other commits yield nothing
        try await soon.value

        let claim = try await garage.claim(Counter.self, limit: 10, status: .undetermined)
        #expect(claim.count == 1)
        try await garage.release(claim)
        soon = parkSoon(5)
        #expect(try await values.next()??.value == 5)         // nor do the claim and the release
        try await soon.value

        // A Syncable object's value holds its status: a claim changes it.
        try await garage.park(Memo(id: "m", text: ""))
        var memo = try garage.changes(to: Memo.self, identifier: "m").makeAsyncIterator()
        let memoClaim = try await garage.claim(Memo.self, limit: 10)
        #expect(try await memo.next()??.syncStatus == .syncing)
        try await garage.release(memoClaim)
        #expect(try await memo.next()??.syncStatus == .notSynced)
    }

    @Test func cancellingTheObserverEndsTheSequence() async throws {
        let garage = try TestEngine.garage()
        let changes = garage.changes(of: Memo.self)          // observing from here on
        let (received, reportReceived) = AsyncStream<Int>.makeStream()
        let task = Task {
            var count = 0
            for await _ in changes {
                count += 1
                reportReceived.yield(count)
            }
            return count
        }
        try await garage.park(Memo(id: "a", text: ""))
        try await garage.park(Memo(id: "b", text: ""))
        // Cancelled once it has read both commits, while it waits for a third.
        var progress = received.makeAsyncIterator()
        #expect(await progress.next() == 1)
        #expect(await progress.next() == 2)
        task.cancel()
        #expect(await task.value == 2)                      // the loop ended, after exactly the two commits
        #expect(!garage.observers.isListening)            // and the observer is gone
        try await garage.park(Memo(id: "c", text: ""))     // no observer left to block or crash
        #expect(try await garage.count(Memo.self) == 3)
    }
}

/// Garage calls from an actor, under strict concurrency.
actor Archive {
    let garage: Garage

    init(garage: Garage) {
        self.garage = garage
    }

    func store(_ memos: [Memo]) async throws {
        try await garage.parkAll(memos)
    }

    func memos() async throws -> [Memo] {
        try await garage.retrieveAll(Memo.self)
    }

    func memo(_ id: String) async throws -> Memo? {
        try await garage.retrieve(Memo.self, identifier: id)
    }

    func remove(_ memo: Memo) async throws {
        try await garage.delete(memo)
    }
}

@Suite("Async API")
struct AsyncAPITests {
    @Test func parkRetrieveAndDeleteFromAnActor() async throws {
        let directory = try TemporaryDirectory()
        let archive = Archive(garage: try TestEngine.garage(path: directory.path("archive.sqlite")))
        try await archive.store([Memo(id: "a", text: "A"), Memo(id: "b", text: "B")])
        #expect(try await archive.memos().map(\.text) == ["A", "B"])
        #expect(try await archive.memo("b")?.text == "B")
        try await archive.remove(Memo(id: "a", text: ""))
        #expect(try await archive.memos().map(\.id) == ["b"])
        #expect(try await archive.memo("a") == nil)
    }

    @Test func asyncCallsSeeUnsavedChangesAndTransactions() async throws {
        let garage = try TestEngine.garage()
        garage.isAutosaveEnabled = false
        try await garage.park(Memo(id: "a", text: ""))
        #expect(try await garage.retrieve(Memo.self, identifier: "a") != nil)
        #expect(garage.hasUnsavedChanges)
        try await garage.save()
        #expect(!garage.hasUnsavedChanges)
    }

    @Test func asyncErrorsAreTheSameAsSyncOnes() async throws {
        let garage = try TestEngine.garage()
        await #expect(throws: GarageError.failedToRetrieveObject("Memo", "none")) {
            try await garage.delete(Memo(id: "none", text: ""))
        }
        await #expect(throws: GarageError.unsupportedIDConformance("Coordinates")) {
            try await garage.park(Place(id: Coordinates(x: 0, y: 0), name: ""))
        }
    }
}
