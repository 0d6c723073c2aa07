import Foundation
@testable import GarageLite
import Testing

/// Edits are never marked synced by mistake: the status a parked row gets depends on the row
/// it replaces, the same way in the store and in unsaved changes.
@Suite("Status of edited objects")
struct EditStatusTests {
    /// A garage that writes at once, and one whose changes stay unsaved until the end: the
    /// store's statement and the in-memory overlay must agree.
    static let autosaves = [true, false]

    static func status(_ garage: Garage, _ identifier: Int) throws -> SyncStatus? {
        try garage.metadata(Book.self, identifier: identifier)?.syncStatus
    }

    @Test(arguments: autosaves)
    func aSyncedObjectEditedAndParkedIsNotSynced(autosave: Bool) throws {
        let garage = try TestEngine.garage()
        let author = Author(id: UUID(), name: "Austen")
        try garage.park(Book(id: 1, title: "Emma", author: author, syncStatus: .notSynced))
        try garage.complete(try garage.claim(Book.self, limit: 10))
        garage.isAutosaveEnabled = autosave

        var book = try #require(try garage.retrieve(Book.self, identifier: 1))
        #expect(book.syncStatus == .synced)
        book.title = "Emma (revised)"
        try garage.park(book)                               // still says .synced
        #expect(try Self.status(garage, 1) == .notSynced)
        try garage.save()
        #expect(try Self.status(garage, 1) == .notSynced)
        #expect(try garage.claim(Book.self, limit: 10).identifiers == ["1"])
    }

    /// A newcomer's view model kept the retrieved `.synced` struct and parked it after each
    /// edit: the second park stored `.synced`, and both edits were never uploaded.
    @Test(arguments: autosaves)
    func anObjectEditedAndParkedTwiceIsStillNotSynced(autosave: Bool) throws {
        let garage = try TestEngine.garage()
        try garage.park(Book(id: 1, title: "Emma", author: Author(id: UUID(), name: "Austen"), syncStatus: .notSynced))
        try garage.complete(try garage.claim(Book.self, limit: 10))
        garage.isAutosaveEnabled = autosave

        var book = try #require(try garage.retrieve(Book.self, identifier: 1))
        book.title = "Emma, first edit"
        try garage.park(book)                               // says .synced, over a .synced row
        book.title = "Emma, second edit"
        try garage.park(book)                               // says .synced, over a .notSynced row
        #expect(try Self.status(garage, 1) == .notSynced)
        try garage.save()
        #expect(try Self.status(garage, 1) == .notSynced)
        #expect(try garage.claim(Book.self, limit: 10).objects.map(\.title) == ["Emma, second edit"])
    }

    /// The same stale copy parked during an upload that then fails: releasing the claim must
    /// leave the edit to upload.
    @Test func anEditSayingSyncedDuringAFailedUploadIsUploadedNextTime() throws {
        let garage = try TestEngine.garage()
        try garage.park(Book(id: 1, title: "Emma", author: Author(id: UUID(), name: "Austen"), syncStatus: .notSynced))
        try garage.complete(try garage.claim(Book.self, limit: 10))
        var book = try #require(try garage.retrieve(Book.self, identifier: 1))
        book.title = "Emma (revised)"
        try garage.park(book)
        let claim = try garage.claim(Book.self, limit: 10)
        book.title = "Emma (revised twice)"
        try garage.park(book)                               // still says .synced
        let report = try garage.release(claim, retryAfter: 0, error: nil)
        #expect(report.synced.isEmpty)
        #expect(try Self.status(garage, 1) == .notSynced)
        #expect(try garage.claim(Book.self, limit: 10).objects.map(\.title) == ["Emma (revised twice)"])
    }

    @Test(arguments: autosaves)
    func aSyncedObjectParkedUnchangedStaysSynced(autosave: Bool) throws {
        let garage = try TestEngine.garage()
        var book = Book(id: 1, title: "Emma", author: Author(id: UUID(), name: "Austen"), syncStatus: .synced)
        try garage.park(book)                               // a new object may say .synced
        #expect(try Self.status(garage, 1) == .synced)
        garage.isAutosaveEnabled = autosave
        try garage.park(book)
        #expect(try Self.status(garage, 1) == .synced)
        // Unchanged content: no new revision, in the store or in the unsaved changes.
        #expect(try garage.metadata(Book.self, identifier: 1)?.revision == 1)
        // An object that says another status than the row's sets it, as in GarageStorage.
        book.syncStatus = .notSynced
        try garage.park(book)
        #expect(try Self.status(garage, 1) == .notSynced)
        book.syncStatus = .synced
        try garage.park(book)
        try garage.save()
        #expect(try Self.status(garage, 1) == .synced)
    }

    /// An independent probe retrieved an object during a claim (it reads `.syncing`), edited
    /// it and parked it after `complete`: the row stayed `.syncing` with no claim, and the edit
    /// was never uploaded.
    @Test(arguments: autosaves)
    func syncingWithoutAClaimIsNotSynced(autosave: Bool) throws {
        let garage = try TestEngine.garage()
        let author = Author(id: UUID(), name: "Woolf")
        try garage.park(Book(id: 1, title: "Orlando", author: author, syncStatus: .notSynced))
        let claim = try garage.claim(Book.self, limit: 10)
        var book = try #require(try garage.retrieve(Book.self, identifier: 1))
        #expect(book.syncStatus == .syncing)
        try garage.complete(claim)
        garage.isAutosaveEnabled = autosave

        book.title = "Orlando: A Biography"
        try garage.park(book)
        #expect(try Self.status(garage, 1) == .notSynced)
        // A new object that says .syncing is not under any claim either.
        try garage.park(Book(id: 2, title: "Flush", author: author, syncStatus: .syncing))
        #expect(try Self.status(garage, 2) == .notSynced)
        try garage.save()
        #expect(try Self.status(garage, 1) == .notSynced)
        #expect(try Self.status(garage, 2) == .notSynced)
        #expect(try garage.count(Book.self, withStatus: .syncing) == 0)
    }

    @Test func anEditParkedDuringAClaimStaysClaimedAndIsUploadedNextTime() throws {
        let garage = try TestEngine.garage()
        try garage.park(Book(id: 1, title: "Orlando", author: Author(id: UUID(), name: "Woolf"), syncStatus: .notSynced))
        let claim = try garage.claim(Book.self, limit: 10)
        var book = try #require(try garage.retrieve(Book.self, identifier: 1))
        book.title = "Orlando: A Biography"
        try garage.park(book)                               // says .syncing, and the claim holds the row
        #expect(try Self.status(garage, 1) == .syncing)
        #expect(try garage.complete(claim).notSynced == ["1"])
        #expect(try Self.status(garage, 1) == .notSynced)
    }

    @Test func aClassModelEditedAfterSyncIsNotSynced() async throws {
        let garage = try TestEngine.garage()
        try await garage.park(Sailor(name: "Anne", rank: "captain"))
        try await garage.complete(try await garage.claim(Sailor.self, limit: 10))
        let anne = try #require(try await garage.retrieve(Sailor.self, identifier: "Anne"))
        #expect(anne.syncStatus == .synced)
        anne.rank = "commodore"
        try await garage.park(anne)
        #expect(try await garage.syncStatus(for: anne) == .notSynced)
    }
}

@Suite("Deleting by identifier")
struct DeleteByIdentifierTests {
    @Test func deletesWithoutRetrievingAndSaysWhetherThereWasOne() throws {
        let garage = try TestEngine.garage()
        try garage.parkAll([Counter(id: 1, value: 1), Counter(id: 2, value: 2)])
        #expect(try garage.delete(Counter.self, identifier: 1))
        #expect(try garage.delete(Counter.self, identifier: 1) == false)
        #expect(try garage.count(Counter.self) == 1)
    }

    @Test func deletesWithoutBlockingTheCallingThread() async throws {
        let garage = try TestEngine.garage()
        try await garage.parkAll([Counter(id: 2, value: 2)])
        #expect(try await garage.delete(Counter.self, identifier: 2))
        #expect(try await garage.delete(Counter.self, identifier: 2) == false)
        #expect(try await garage.count(Counter.self) == 0)
    }

    @Test func deletesARowThatCantBeDecoded() throws {
        let garage = try TestEngine.garage()
        try garage.park(Counter(id: 1, value: 1))
        try garage.migrateAll(fromOldClassName: "Counter", to: Book.self)   // a Book that isn't one
        #expect(throws: DecodingError.self) { try garage.retrieve(Book.self, identifier: 1) }
        #expect(try garage.delete(Book.self, identifier: 1))
        #expect(try garage.count(Book.self) == 0)
    }

    @Test func joinsTransactionsAndUnsavedChanges() throws {
        let garage = try TestEngine.garage()
        try garage.parkAll([Counter(id: 1, value: 1), Counter(id: 2, value: 2)])
        try garage.transaction { () throws in
            #expect(try garage.delete(Counter.self, identifier: 1))
            #expect(try garage.count(Counter.self) == 1)
        }
        garage.isAutosaveEnabled = false
        #expect(try garage.delete(Counter.self, identifier: 2))
        #expect(try garage.delete(Counter.self, identifier: 2) == false)        // already gone, unsaved
        #expect(garage.hasUnsavedChanges)
        try garage.save()
        #expect(try garage.count(Counter.self) == 0)
    }
}

/// A type that is not `Syncable`, for the edit of a downloaded object.
private struct PlainDownloadedMemo: Codable, Identifiable {
    var id: String
    var text: String
}

/// Issue 26: an object that is not `Syncable`, downloaded then edited, is `.notSynced`: its
/// edit must reach the server (it stayed `.synced`, and was never uploaded).
@Suite("Edits of downloaded objects that are not Syncable")
struct PlainDownloadedEditTests {
    @Test func anEditOfADownloadedObjectIsToUpload() throws {
        let garage = try TestEngine.garage()
        try garage.parkDownloaded([PlainDownloadedMemo(id: "m1", text: "server")])
        #expect(try garage.metadata(PlainDownloadedMemo.self, identifier: "m1")?.syncStatus == .synced)
        try garage.park(PlainDownloadedMemo(id: "m1", text: "server"))          // unchanged: still synced
        #expect(try garage.metadata(PlainDownloadedMemo.self, identifier: "m1")?.syncStatus == .synced)
        try garage.park(PlainDownloadedMemo(id: "m1", text: "edited"))
        #expect(try garage.metadata(PlainDownloadedMemo.self, identifier: "m1")?.syncStatus == .notSynced)
        #expect(try garage.claim(PlainDownloadedMemo.self, limit: 10).identifiers == ["m1"])
    }
}
