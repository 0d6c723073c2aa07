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
        let garage = try TestEngine.garage()
        try garage.parkDownloaded([Self.notebook()])
        let report = try garage.deleteDownloaded(RNote.self, identifiers: ["n2"])
        #expect(report.deleted == ["n2"])
        let notebook = try #require(try garage.retrieve(RNotebook.self, identifier: "nb1"))
        #expect(notebook.notes.map(\.id) == ["n1"])
        #expect(try garage.retrieveAll(RNotebook.self).map(\.notes.count) == [1])
        // Nothing to upload: the server's notebook no longer lists the note either.
        #expect(try garage.metadata(RNotebook.self, identifier: "nb1")?.syncStatus == .synced)
        #expect(try garage.claim(RNotebook.self, limit: 10).objects.isEmpty)
        // A normal state, not a problem: the notebook reads.
        #expect(try garage.check().problems.isEmpty)
        // A copy retrieved before the deletion is refused, and the message says what to do.
        var stale = Self.notebook()
        stale.revision = 1
        stale.notes[0].revision = 1
        stale.notes[1].revision = 1
        do {
            try garage.park(stale, children: .keepStored)
            Issue.record("expected staleObject")
        } catch let error as GarageError {
            #expect(error.description.contains("was deleted since"))
            #expect(error.description.contains("retrieve the parent again"))
        }
    }

    @Test func aLocalEditOfTheParentIsKept() async throws {
        let garage = try TestEngine.garage()
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

    struct DDCard: Codable, Identifiable, Syncable, Sendable {
        var id: String
        var cover: RNote                      // required: can't do without it
        var syncStatus: SyncStatus = .notSynced
    }

    /// A property that is not optional reads the last version the server had, so that the
    /// object still retrieves until its own download comes; parking it back over the deletion
    /// is refused as stale (a `Revisioned` child).
    @Test func aRequiredReferenceReadsTheLastVersion() async throws {
        let garage = try TestEngine.garage()
        try await garage.parkDownloaded([DDCard(id: "c1", cover: RNote(id: "n1", text: "Milk"))])
        try await garage.deleteDownloaded(RNote.self, identifiers: ["n1"])
        #expect(try await garage.retrieve(RNote.self, identifier: "n1") == nil)
        let card = try #require(try await garage.retrieve(DDCard.self, identifier: "c1"))
        #expect(card.cover.text == "Milk")
        #expect(try await garage.retrieveAll(DDCard.self).count == 1)
        #expect(try await garage.check().problems.isEmpty)
        await #expect(throws: GarageError.self) { try await garage.park(card) }
        // The card's own download replaces it.
        try await garage.parkDownloaded([DDCard(id: "c1", cover: RNote(id: "n2", text: "Oat milk"))])
        #expect(try await garage.retrieve(DDCard.self, identifier: "c1")?.cover.id == "n2")
    }

    @Test func setsDictionariesAndOptionalsDropTheDeletedReferenceToo() throws {
        let garage = try TestEngine.garage()
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

/// Issue 24, item 5: a deletion against an edit is never decided silently.
@Suite("Deletions against edits go to the conflict resolution")
struct DeletionConflictTests {
    /// What the closure was asked, as text: "deleted(Milk)/edited(Milk, edited elsewhere)".
    static func describe(_ side: ConflictSide<RNote>) -> String {
        switch side {
        case .edited(let note): return "edited(\(note.text))"
        case .deleted(let note): return "deleted(\(note?.text ?? "nil"))"
        }
    }

    @Test func aLocalDeletionAgainstADownloadedEditAsksResolve() throws {
        let garage = try TestEngine.garage()
        try garage.parkDownloaded([RNote(id: "n1", text: "Milk")])
        try garage.delete(RNote.self, identifier: "n1")                         // a tombstone to upload
        let asked = Protected<[String]>([])
        let report = try garage.parkDownloaded([RNote(id: "n1", text: "Milk, edited elsewhere")],
                                               onConflict: .resolve { local, downloaded in
            asked.write { $0.append(Self.describe(local) + "/" + Self.describe(downloaded)) }
            return .takeDownloaded
        })
        #expect(asked.read { $0 } == ["deleted(Milk)/edited(Milk, edited elsewhere)"])
        #expect(report.conflicts.map(\.resolution) == [.tookDownloaded])
        #expect(report.conflicts.map(\.wasDeletedLocally) == [true])
        #expect(try garage.retrieve(RNote.self, identifier: "n1")?.text == "Milk, edited elsewhere")
        #expect(try garage.claim(RNote.self, limit: 10).isEmpty)               // the deletion is gone
    }

    /// `.merge` can't be given a deletion: the edit wins, and the report says so.
    @Test func underMergeTheDownloadedEditWinsOverALocalDeletion() async throws {
        let garage = try TestEngine.garage()
        try await garage.parkDownloaded([RNote(id: "n1", text: "Milk")])
        try await garage.delete(RNote.self, identifier: "n1")
        let report = try await garage.parkDownloaded([RNote(id: "n1", text: "Milk, edited elsewhere")],
                                                     onConflict: .merge { local, _ in local })
        #expect(report.conflicts.map(\.resolution) == [.tookDownloaded])
        #expect(try await garage.retrieve(RNote.self, identifier: "n1")?.text == "Milk, edited elsewhere")
    }

    @Test func aDownloadedDeletionAgainstALocalEditAsksResolve() async throws {
        let garage = try TestEngine.garage()
        try await garage.parkDownloaded([RNote(id: "n1", text: "Milk"), RNote(id: "n2", text: "Eggs")])
        for id in ["n1", "n2"] {
            var note = try #require(try await garage.retrieve(RNote.self, identifier: id))
            note.text += ", edited here"
            try await garage.park(&note)
        }
        let asked = Protected<[String]>([])
        let report = try await garage.deleteDownloaded(RNote.self, identifiers: ["n1", "n2"], onConflict: .resolve { local, downloaded in
            asked.write { $0.append(Self.describe(local) + "/" + Self.describe(downloaded)) }
            guard case .edited(var mine) = local else { return .keepLocal }
            if mine.id == "n1" { return .takeDownloaded }
            mine.text += " (restored)"
            return .merged(mine)
        })
        #expect(asked.read { $0 } == ["edited(Milk, edited here)/deleted(nil)", "edited(Eggs, edited here)/deleted(nil)"])
        #expect(report.conflicts.map(\.resolution) == [.tookDownloaded, .merged])
        #expect(try await garage.retrieve(RNote.self, identifier: "n1") == nil)
        #expect(try await garage.retrieve(RNote.self, identifier: "n2")?.text == "Eggs, edited here (restored)")
        #expect(try await garage.metadata(RNote.self, identifier: "n2")?.syncStatus == .notSynced)
    }

    /// A claim hands each deletion to its job with what it deleted.
    @Test func aClaimCarriesTheVersionEachDeletionDeleted() throws {
        let garage = try TestEngine.garage()
        try garage.parkDownloaded([RNote(id: "n1", text: "Milk")])
        var note = try #require(try garage.retrieve(RNote.self, identifier: "n1"))
        note.text = "Oat milk"
        try garage.park(&note)
        try garage.delete(note)
        let claim = try garage.claim(RNote.self, limit: 10)
        #expect(claim.deletions == ["n1"])
        let deleted = try #require(claim.deletedVersions.first)
        #expect(deleted.identifier == "n1")
        #expect(deleted.revision == 2)
        #expect(deleted.object?.text == "Oat milk")
        #expect(deleted.object?.revision == 2)
        try garage.complete(claim)
        #expect(try garage.claim(RNote.self, limit: 10).isEmpty)
    }
}
