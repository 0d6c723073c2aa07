import Foundation
import Testing
@testable import GarageLite

@Suite("Sync status")
struct SyncStatusTests {
    @Test func syncStatusRawValuesAreGarageStorages() {
        #expect(SyncStatus.allCases.map(\.rawValue) == [0, 1, 2, 3])
        #expect(SyncStatus.allCases == [.undetermined, .notSynced, .syncing, .synced])
    }

    @Test func parkingStoresTheStatusOfEverySyncableObjectInTheGraph() throws {
        let garage = try TestEngine.garage()
        let author = Author(id: UUID(), name: "Morrison", syncStatus: .synced)
        try garage.park(Book(id: 1, title: "Beloved", author: author, syncStatus: .notSynced))
        #expect(try garage.syncStatus(for: author) == .synced)
        #expect(try garage.syncStatus(for: Book(id: 1, title: "", author: author)) == .notSynced)
    }

    @Test func retrievingSetsTheStatusFromTheRowAtEveryDepth() throws {
        let garage = try TestEngine.garage()
        let author = Author(id: UUID(), name: "Achebe", syncStatus: .notSynced)
        let book = Book(id: 1, title: "Things Fall Apart", author: author, coAuthors: [author])
        try garage.park(book)
        try garage.setSyncStatus(.syncing, for: author)
        try garage.setSyncStatus(.synced, for: book)
        let retrieved = try #require(try garage.retrieve(Book.self, identifier: 1))
        #expect(retrieved.syncStatus == .synced)
        #expect(retrieved.author.syncStatus == .syncing)
        #expect(retrieved.coAuthors.first?.syncStatus == .syncing)
    }

    @Test func statusIsKeptOutOfTheStoredJSON() throws {
        let garage = try TestEngine.garage()
        var book = Book(id: 1, title: "Emma", author: Author(id: UUID(), name: "Austen"), syncStatus: .notSynced)
        try garage.park(book)
        book.syncStatus = .synced
        try garage.park(book)
        let row = try #require(try garage.store.storedRow(ObjectKey(typeName: "Book", identifier: "1")))
        // Only the status changed: same content, same revision, status in the row.
        #expect(row.revision == 1)
        #expect(row.syncStatus == .synced)
    }

    @Test func nonSyncableObjectsAreUndeterminedAndKeepAStatusSetOnThem() throws {
        let garage = try TestEngine.garage()
        try garage.park(Counter(id: 1, value: 1))
        let status = try garage.store.storedRow(ObjectKey(typeName: "Counter", identifier: "1"))?.syncStatus
        #expect(status == .undetermined)
    }

    @Test func setSyncStatusOnUnparkedObjectsThrowsAndTheArrayFormChangesNothing() throws {
        let garage = try TestEngine.garage()
        let parked = Author(id: UUID(), name: "parked", syncStatus: .notSynced)
        let unparked = Author(id: UUID(), name: "unparked")
        try garage.park(parked)
        #expect(throws: GarageError.failedToRetrieveObject("Author", unparked.id.uuidString)) {
            try garage.setSyncStatus(.synced, for: unparked)
        }
        #expect(throws: GarageError.failedToRetrieveObject("Author", unparked.id.uuidString)) {
            try garage.setSyncStatus(.synced, for: [parked, unparked])
        }
        #expect(try garage.syncStatus(for: parked) == .notSynced)
        #expect(throws: GarageError.failedToRetrieveObject("Author", unparked.id.uuidString)) {
            try garage.syncStatus(for: unparked)
        }
        try garage.setSyncStatus(.synced, for: [parked])
        #expect(try garage.syncStatus(for: parked) == .synced)
    }

    @Test func retrieveAllWithStatusReadsOnlyTheRequestedType() throws {
        let garage = try TestEngine.garage()
        let authors = (0..<4).map { Author(id: UUID(), name: "A\($0)", syncStatus: .notSynced) }
        for author in authors {
            try garage.park(author)
        }
        // Another Syncable type in the same store, with the same status: must not be read as Author.
        try garage.park(Note(text: "n", tags: [], syncStatus: .notSynced))
        try garage.setSyncStatus(.synced, for: authors[1])

        let pending: [Author] = try garage.retrieveAll(withStatus: .notSynced)
        #expect(Set(pending.map(\.name)) == ["A0", "A2", "A3"])
        #expect(pending.allSatisfy { $0.syncStatus == .notSynced })
        #expect(try garage.retrieveAll(Author.self, withStatus: .synced).map(\.name) == ["A1"])
        #expect(try garage.retrieveAll(Note.self, withStatus: .notSynced).count == 1)
    }

    @Test func retrieveAllWithStatusSeesUnsavedChanges() throws {
        let garage = try TestEngine.garage()
        let author = Author(id: UUID(), name: "Eco", syncStatus: .notSynced)
        try garage.park(author)
        garage.isAutosaveEnabled = false
        try garage.setSyncStatus(.synced, for: author)
        #expect(try garage.retrieveAll(Author.self, withStatus: .notSynced).isEmpty)
        #expect(try garage.retrieveAll(Author.self, withStatus: .synced).map(\.name) == ["Eco"])
    }
}
