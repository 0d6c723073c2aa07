import Foundation
import Testing
@testable import GarageLite

// Another SQLite connection holds the store's write lock: what the garage does while it waits
// for SQLite's lock, or gives up. Moved from the behaviour suite (issue 25): each is an
// extension of the suite it belongs to.

extension ClaimsTests {
    @Test(.ownThreads) func aBusyStoreSaysWhichOperationGaveUp() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("busy.sqlite")
        let garage = try Garage(path: path, busyTimeout: 0.2)
        // Another connection holds the write lock.
        try SQLiteFile(path).holdingWriteLock { () throws in
            #expect(throws: GarageError.storeBusy(operation: "park Memo(m)", path: path)) {
                try garage.park(Memo(id: "m", text: ""))
            }
            #expect(throws: GarageError.storeBusy(operation: "claim Memo", path: path)) {
                try garage.claim(Memo.self, limit: 1)
            }
            // Readers don't wait for the writer.
            #expect(try garage.count(Memo.self) == 0)
        }
        try garage.park(Memo(id: "m", text: ""))
        #expect(try garage.count(Memo.self) == 1)
    }

    @Test func aWriterWaitsForAnotherUnderOrdinaryContention() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("wait.sqlite")
        let garage = try Garage(path: path)
        let other = try SQLiteFile(path)
        let locked = DispatchSemaphore(value: 0)
        let holder = Thread {
            try? other.holdingWriteLock {
                locked.signal()
                usleep(200_000)       // a long transaction elsewhere
            }
        }
        holder.start()
        locked.wait()
        try garage.park(Memo(id: "m", text: "waited"))   // waits for the lock, then writes
        #expect(try garage.retrieve(Memo.self, identifier: "m")?.text == "waited")
    }
}

extension IntegrityTests {
    @Test func theRealRunTakesTheWriteLockFirstAndTheDryRunTakesNone() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("locked.sqlite")
        let garage = try Garage(path: path, busyTimeout: 0.05)
        let orphan = author("orphan")
        try garage.park(Book(id: 1, title: "", author: orphan))
        try garage.park(Book(id: 1, title: "", author: author("kept")))
        try garage.collectGarbage(dryRun: false)
        // Nothing left to delete: only a transaction that takes the lock up front can wait for it.
        try SQLiteFile(path).holdingWriteLock { () throws in
            #expect(throws: GarageError.storeBusy(operation: "collect garbage", path: path)) {
                try garage.collectGarbage(dryRun: false)
            }
            #expect(try garage.collectGarbage().objects.isEmpty)
            #expect(try garage.check().isOK)
        }
    }
}
