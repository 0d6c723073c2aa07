import Foundation
import Testing
@testable import GarageLite

@Suite("Autosave, save, discard and transactions")
struct SavingTests {
    @Test func autosaveIsOnByDefaultAndCommitsEveryCall() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("garage.sqlite")
        let garage = try TestEngine.garage(path: path)
        #expect(garage.isAutosaveEnabled)
        try garage.park(Counter(id: 1, value: 1))
        let other = try TestEngine.garage(path: path)
        #expect(try other.retrieve(Counter.self, identifier: 1)?.value == 1)
    }

    @Test func withAutosaveOffChangesAreReadLocallyAndInvisibleElsewhereUntilSave() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("garage.sqlite")
        let garage = try TestEngine.garage(path: path)
        let other = try TestEngine.garage(path: path)
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
        let garage = try TestEngine.garage(path: path)
        let other = try TestEngine.garage(path: path)
        garage.isAutosaveEnabled = false
        try garage.park(Counter(id: 1, value: 1))
        // If unsaved changes held SQLite's write lock, this would wait and then fail as busy.
        try other.park(Counter(id: 2, value: 2))
        try garage.save()
        #expect(try other.identifiers(of: Counter.self) == ["1", "2"])
    }

    @Test func discardUnsavedChangesForgetsThem() throws {
        let garage = try TestEngine.garage()
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
        let garage = try TestEngine.garage(path: path)
        garage.isAutosaveEnabled = false
        try garage.parkAll((1...100).map { Counter(id: $0, value: $0) })
        try garage.deleteAll(Tree.self)
        try garage.save()
        let other = try TestEngine.garage(path: path)
        #expect(try other.count(Counter.self) == 100)
    }

    @Test func aCallWithAutosaveOnSavesEarlierUnsavedChangesToo() throws {
        let garage = try TestEngine.garage()
        garage.isAutosaveEnabled = false
        try garage.park(Counter(id: 1, value: 1))
        garage.isAutosaveEnabled = true
        try garage.park(Counter(id: 2, value: 2))
        #expect(!garage.hasUnsavedChanges)
        #expect(try garage.count(Counter.self) == 2)
    }

    @Test func unsavedBulkChangesReadCorrectly() throws {
        let garage = try TestEngine.garage()
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
        let garage = try TestEngine.garage(path: path)
        let other = try TestEngine.garage(path: path)
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
        let garage = try TestEngine.garage()
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
        let garage = try TestEngine.garage()
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
        let garage = try TestEngine.garage()
        try garage.transaction {
            try garage.park(Counter(id: 1, value: 1))
            #expect(onAnotherThread { try? garage.count(Counter.self) } == 0)
        }
        #expect(try garage.count(Counter.self) == 1)
    }

    /// Runs the same calls with autosave on, and with autosave off then save(): the store
    /// must end the same.
    @Test(arguments: [false, true])
    func unsavedRenamesDeletesAndParksEndAsIfEachWereSaved(autosave: Bool) throws {
        let garage = try TestEngine.garage()
        try garage.park(Counter(id: 1, value: 10))            // Counter/1
        try garage.park(RenamedCounter(id: 1, value: 99))     // RenamedCounter/1
        try garage.park(RenamedCounter(id: 2, value: 20))     // RenamedCounter/2
        garage.isAutosaveEnabled = autosave
        try garage.delete(Counter(id: 1, value: 10))
        try garage.park(RenamedCounter(id: 2, value: 21))
        try garage.park(Counter(id: 3, value: 30))
        try garage.migrateAll(fromOldClassName: "Counter", to: RenamedCounter.self)
        try garage.park(Counter(id: 4, value: 40))
        let seenBeforeSave = try garage.retrieveAll(RenamedCounter.self).map { "\($0.id):\($0.value)" }
        try garage.save()
        let stored = try garage.retrieveAll(RenamedCounter.self).map { "\($0.id):\($0.value)" }
        #expect(stored == ["1:99", "2:21", "3:30"])
        #expect(seenBeforeSave == stored)
        #expect(try garage.identifiers(of: Counter.self) == ["4"])
    }

    @Test func aChangeRecordedDuringASaveStaysUnsavedOnItsOwn() {
        let key = ObjectKey(typeName: "Counter", identifier: "1")
        let payload = RowPayload(data: "{}", isEncrypted: false, syncStatus: nil, references: "[]", isRoot: true)
        var unsaved = ChangeSet()
        unsaved.record(.park(payload), for: key)
        unsaved.seal()
        let saving = unsaved
        unsaved.record(.setSyncStatus(.synced), for: key)   // recorded while the save runs
        let remaining = unsaved.removing(saved: saving)
        #expect(remaining.segments.count == 1)
        guard case .setSyncStatus(.synced)? = remaining.segments.first?.rows[key] else {
            Issue.record("only the status change should stay unsaved, not the saved park")
            return
        }
    }

    @Test func aTaskStartedInATransactionWritesAfterItEnds() async throws {
        let garage = try TestEngine.garage()
        let (gate, open) = AsyncStream<Void>.makeStream()
        let task = try garage.transaction {
            try garage.park(Counter(id: 1, value: 1))
            return Task {
                for await _ in gate { break }
                try await garage.park(Counter(id: 2, value: 2))   // after the transaction ended
            }
        }
        open.yield()
        try await task.value
        #expect(try await garage.retrieveAll(Counter.self).map(\.id) == [1, 2])
        #expect(!garage.hasUnsavedChanges)
    }

    @Test func withAutosaveDisabledLeavesOtherThreadsAutosaving() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("garage.sqlite")
        let garage = try TestEngine.garage(path: path)
        let other = try TestEngine.garage(path: path)
        try garage.withAutosaveDisabled {
            try garage.park(Counter(id: 1, value: 1))
            let elsewhere = onAnotherThread { () -> Bool in
                (try? garage.park(Counter(id: 2, value: 2))) != nil && garage.isAutosaveEnabled
            }
            #expect(elsewhere)
            #expect(!garage.isAutosaveEnabled)
        }
        // The other thread's park committed, and with it everything unsaved.
        #expect(try other.identifiers(of: Counter.self) == ["1", "2"])
    }
}
