import Foundation
@testable import GarageLite
import Testing

/// Issue 24, item 3: a deletion downloaded from the server never leaves a local object that
/// references the deleted one unreadable; the referrer is not turned into an edit to upload.
@Suite("Downloaded deletions keep referrers readable")
struct DownloadedDeletionTests {
    struct DDShelf: Codable, Identifiable, Syncable, Sendable {
        var id: String
        var byName: [String: RNote]
        var favourites: Set<DDTagged>
        var pinned: RNote?
        var syncStatus: SyncStatus = .notSynced
    }

    struct DDTagged: Codable, Identifiable, Hashable, Sendable {
        var id: String
    }

    static func notebook() -> RNotebook {
        RNotebook(id: "nb1", title: "Shopping", notes: [RNote(id: "n1", text: "Milk"), RNote(id: "n2", text: "Eggs")])
    }

    @Test func aDownloadedDeletionLeavesTheParentReadable() throws {
        let garage = try Garage.inMemory()
        try garage.parkDownloaded([Self.notebook()])
        let report = try garage.deleteDownloaded(RNote.self, identifiers: ["n2"])
        #expect(report.deleted == ["n2"])
        let notebook = try #require(try garage.retrieve(RNotebook.self, identifier: "nb1"))
        #expect(notebook.notes.map(\.id) == ["n1"])
        #expect(try garage.retrieveAll(RNotebook.self).map(\.notes.count) == [1])
        // Nothing to upload: the server's notebook no longer lists the note either.
        #expect(try garage.metadata(RNotebook.self, identifier: "nb1")?.syncStatus == .synced)
        #expect(try garage.claim(RNotebook.self, limit: 10).objects.isEmpty)
    }

    @Test func aLocalEditOfTheParentIsKept() async throws {
        let garage = try Garage.inMemory()
        try await garage.parkDownloaded([NotebookModel(id: "nb1", title: "Shopping",
                                                       notes: [NoteModel(id: "n1", text: "Milk"), NoteModel(id: "n2", text: "Eggs")])])
        let local = try #require(try await garage.retrieve(NotebookModel.self, identifier: "nb1"))
        local.title = "Groceries"
        try await garage.park(local)
        try await garage.deleteDownloaded(NoteModel.self, identifiers: ["n2"])
        let notebook = try #require(try await garage.retrieve(NotebookModel.self, identifier: "nb1"))
        #expect(notebook.title == "Groceries")
        #expect(notebook.notes.map(\.id) == ["n1"])
        // Parked again, it is stored without the reference.
        try await garage.park(notebook)
        #expect(try await garage.referrers(of: NoteModel.self, identifier: "n1").map(\.identifier) == ["nb1"])
        #expect(try await garage.check().problems.isEmpty)
    }

    @Test func setsDictionariesAndOptionalsDropTheDeletedReferenceToo() throws {
        let garage = try Garage.inMemory()
        let shelf = DDShelf(id: "s", byName: ["milk": RNote(id: "n1", text: "Milk"), "eggs": RNote(id: "n2", text: "Eggs")],
                          favourites: [DDTagged(id: "t1"), DDTagged(id: "t2")], pinned: RNote(id: "n2", text: "Eggs"))
        try garage.parkDownloaded([shelf])
        try garage.deleteDownloaded(RNote.self, identifiers: ["n2"])
        try garage.deleteDownloaded(DDTagged.self, identifiers: ["t1"])
        let read = try #require(try garage.retrieve(DDShelf.self, identifier: "s"))
        #expect(read.byName.keys.sorted() == ["milk"])
        #expect(read.favourites.map(\.id) == ["t2"])
        #expect(read.pinned == nil)
    }
}
