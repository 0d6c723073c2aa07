import Foundation
import Testing
@testable import GarageLite

@Suite("Autosave, save, discard and transactions")
struct SavingTests {
    @Test func autosaveIsOnByDefaultAndCommitsEveryCall() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("garage.sqlite")
        let garage = try Garage(path: path)
        #expect(garage.isAutosaveEnabled)
        try garage.park(Counter(id: 1, value: 1))
        let other = try Garage(path: path)
        #expect(try other.retrieve(Counter.self, identifier: 1)?.value == 1)
    }

    @Test func withAutosaveOffChangesAreReadLocallyAndInvisibleElsewhereUntilSave() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("garage.sqlite")
        let garage = try Garage(path: path)
        let other = try Garage(path: path)
        try garage.park(Counter(id: 1, value: 1))

        garage.isAutosaveEnabled = false
        try garage.park(Counter(id: 1, value: 100))
        try garage.park(Counter(id: 2, value: 2))
        try garage.delete(Counter(id: 1, value: 100))
        try garage.park(Counter(id: 3, value: 3))
        let author = Author(id: UUID(), name: "Woolf", syncStatus: .notSynced)
        try garage.park(author)
        try garage.setSyncStatus(.synced, for: author)

        // This garage reads its own unsaved changes...
        #expect(garage.hasUnsavedChanges)
        #expect(try garage.retrieve(Counter.self, identifier: 1) == nil)
        #expect(try garage.retrieveAll(Counter.self).map(\.id) == [2, 3])
        #expect(try garage.count(Counter.self) == 2)
        #expect(try garage.identifiers(of: Counter.self) == ["2", "3"])
        // ...other garages on the same file don't see them.
        #expect(try other.retrieveAll(Counter.self).map(\.value) == [1])

        try garage.save()
        #expect(!garage.hasUnsavedChanges)
        #expect(try other.retrieveAll(Counter.self).map(\.id) == [2, 3])
        #expect(try other.syncStatus(for: author) == .synced)
    }

    @Test func unsavedChangesHoldNoWriteLock() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("garage.sqlite")
        let garage = try Garage(path: path)
        let other = try Garage(path: path)
        garage.isAutosaveEnabled = false
        try garage.park(Counter(id: 1, value: 1))
        // If unsaved changes held SQLite's write lock, this would wait and then fail as busy.
        try other.park(Counter(id: 2, value: 2))
        try garage.save()
        #expect(try other.identifiers(of: Counter.self) == ["1", "2"])
    }

    @Test func discardUnsavedChangesForgetsThem() throws {
        let garage = try Garage.inMemory()
        try garage.park(Counter(id: 1, value: 1))
        try garage.withAutosaveDisabled {
            try garage.park(Counter(id: 1, value: 2))
            try garage.deleteAll(Counter.self)
            #expect(try garage.count(Counter.self) == 0)
            #expect(!garage.isAutosaveEnabled)
        }
        #expect(garage.isAutosaveEnabled)
        #expect(garage.hasUnsavedChanges)
        garage.discardUnsavedChanges()
        #expect(!garage.hasUnsavedChanges)
        #expect(try garage.retrieve(Counter.self, identifier: 1)?.value == 1)
    }

    @Test func saveCommitsEverythingInOneTransaction() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("garage.sqlite")
        let garage = try Garage(path: path)
        garage.isAutosaveEnabled = false
        try garage.parkAll((1...100).map { Counter(id: $0, value: $0) })
        try garage.deleteAll(Tree.self)
        try garage.save()
        let other = try Garage(path: path)
        #expect(try other.count(Counter.self) == 100)
    }

    @Test func aCallWithAutosaveOnSavesEarlierUnsavedChangesToo() throws {
        let garage = try Garage.inMemory()
        garage.isAutosaveEnabled = false
        try garage.park(Counter(id: 1, value: 1))
        garage.isAutosaveEnabled = true
        try garage.park(Counter(id: 2, value: 2))
        #expect(!garage.hasUnsavedChanges)
        #expect(try garage.count(Counter.self) == 2)
    }

    @Test func unsavedBulkChangesReadCorrectly() throws {
        let garage = try Garage.inMemory()
        try garage.parkAll([Counter(id: 1, value: 1), Counter(id: 2, value: 2)])
        try garage.park(Person(name: "Sam"))
        garage.isAutosaveEnabled = false
        #expect(try garage.migrateAll(fromOldClassName: "Counter", to: RenamedCounter.self) == 2)
        #expect(try garage.count(Counter.self) == 0)
        #expect(try garage.retrieveAll(RenamedCounter.self).map(\.value) == [1, 2])
        try garage.park(Counter(id: 9, value: 9))
        #expect(try garage.deleteAllObjects() == 4)
        #expect(try garage.count(RenamedCounter.self) == 0)
        try garage.park(Counter(id: 10, value: 10))
        try garage.save()
        #expect(try garage.identifiers(of: Counter.self) == ["10"])
        #expect(try garage.count(Person.self) == 0)
    }

    @Test func transactionCommitsTogether() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("garage.sqlite")
        let garage = try Garage(path: path)
        let other = try Garage(path: path)
        try garage.transaction {
            try garage.park(Counter(id: 1, value: 1))
            try garage.park(Counter(id: 2, value: 2))
            #expect(try garage.count(Counter.self) == 2)      // read inside the transaction
            #expect(try other.count(Counter.self) == 0)       // not committed yet
        }
        #expect(try other.count(Counter.self) == 2)
    }

    @Test func transactionRollsBackWhenItsClosureThrows() throws {
        struct Abort: Error {}
        let garage = try Garage.inMemory()
        try garage.park(Counter(id: 1, value: 1))
        #expect(throws: Abort.self) {
            try garage.transaction {
                try garage.park(Counter(id: 1, value: 100))
                try garage.park(Counter(id: 2, value: 2))
                try garage.delete(Counter(id: 1, value: 100))
                throw Abort()
            }
        }
        #expect(try garage.retrieveAll(Counter.self).map(\.value) == [1])
    }

    @Test func nestedTransactionFailureRollsBackOnlyTheInnerOne() throws {
        struct Abort: Error {}
        let garage = try Garage.inMemory()
        try garage.transaction {
            try garage.park(Counter(id: 1, value: 1))
            try? garage.transaction {
                try garage.park(Counter(id: 2, value: 2))
                throw Abort()
            }
            try garage.park(Counter(id: 3, value: 3))
        }
        #expect(try garage.identifiers(of: Counter.self) == ["1", "3"])
    }

    @Test func transactionIsInvisibleToOtherThreadsUntilCommitted() throws {
        let garage = try Garage.inMemory()
        try garage.transaction {
            try garage.park(Counter(id: 1, value: 1))
            #expect(onAnotherThread { try? garage.count(Counter.self) } == 0)
        }
        #expect(try garage.count(Counter.self) == 1)
    }
}

