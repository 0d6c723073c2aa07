import Foundation
@testable import GarageLite
import Testing

/// Issue 24: changes held for a while (unsaved, in a transaction) are checked again in the
/// transaction that writes them, against what another garage committed meanwhile: a stale
/// edit refuses the save, a delete rule applies to the referrers as they are then, and no
/// `ChildParking` drops an edit without saying so.
@Suite("Changes are checked where they are written")
struct WriteTimeCheckTests {
    /// Two garages on one file: A, the app's screen (autosave off), and B, another writer.
    typealias Pair = GaragePair

    static func notebook() -> RNotebook {
        RNotebook(id: "nb1", title: "Shopping", notes: [RNote(id: "n1", text: "Milk"), RNote(id: "n2", text: "Eggs")])
    }

    /// The stale error `body` throws (its identifier, parked and stored revisions), or a failure.
    static func stale(_ body: () throws -> Void) -> (String, Int64, Int64)? {
        stale(Result(catching: body))
    }

    static func stale(_ body: () async throws -> Void) async -> (String, Int64, Int64)? {
        do {
            try await body()
            return stale(.success(()))
        } catch {
            return stale(.failure(error))
        }
    }

    private static func stale(_ outcome: Result<Void, any Error>) -> (String, Int64, Int64)? {
        switch outcome {
        case .success:
            Issue.record("expected GarageError.staleObject")
        case .failure(GarageError.staleObject(_, let identifier, let parked, let stored)):
            return (identifier, parked, stored)
        case .failure(let error):
            Issue.record("expected GarageError.staleObject, got \(error)")
        }
        return nil
    }

    // MARK: - 1. Saving unsaved changes

    @Test func aStaleUnsavedEditRefusesTheSave() throws {
        let pair = try Pair()
        try pair.a.park(Self.notebook())
        pair.a.isAutosaveEnabled = false
        var mine = try #require(try pair.a.retrieve(RNote.self, identifier: "n1"))
        mine.text = "Oat milk"
        try pair.a.park(&mine)
        try pair.a.park(RNote(id: "n9", text: "Bread"))             // an unrelated unsaved change

        var theirs = try #require(try pair.b.retrieve(RNote.self, identifier: "n1"))
        theirs.text = "Soy milk"
        try pair.b.park(&theirs)

        let error = Self.stale { try pair.a.save() }
        #expect(error?.0 == "n1")
        #expect(error?.1 == 1)
        #expect(error?.2 == 2)
        // Nothing of the save was written, and the changes stay unsaved.
        #expect(try pair.b.retrieve(RNote.self, identifier: "n1")?.text == "Soy milk")
        #expect(try pair.b.retrieve(RNote.self, identifier: "n9") == nil)
        #expect(pair.a.hasUnsavedChanges)

        // The way out the error describes keeps both edits.
        try pair.a.discardUnsavedChanges(of: RNote.self, identifier: "n1")
        var fresh = try #require(try pair.a.retrieve(RNote.self, identifier: "n1"))
        #expect(fresh.text == "Soy milk")
        fresh.text += " + oat milk"
        try pair.a.park(&fresh)
        try pair.a.save()
        #expect(try pair.b.retrieve(RNote.self, identifier: "n1")?.text == "Soy milk + oat milk")
        #expect(try pair.b.retrieve(RNote.self, identifier: "n9")?.text == "Bread")
    }

    @Test func aStaleUnsavedEditRefusesTheSaveAsync() async throws {
        let pair = try Pair()
        try await pair.a.park(NotebookModel(id: "nb1", title: "Shopping", notes: [NoteModel(id: "n1", text: "Milk")]))
        pair.a.isAutosaveEnabled = false
        let mine = try #require(try await pair.a.retrieve(NoteModel.self, identifier: "n1"))
        mine.text = "Oat milk"
        try await pair.a.park(mine)

        let theirs = try #require(try await pair.b.retrieve(NoteModel.self, identifier: "n1"))
        theirs.text = "Soy milk"
        try await pair.b.park(theirs)

        let error = await Self.stale { try await pair.a.save() }
        #expect(error?.0 == "n1")
        #expect(try await pair.b.retrieve(NoteModel.self, identifier: "n1")?.text == "Soy milk")
    }

    /// A's own later park of the same object builds on its first: still stale, since the
    /// first was based on the version B replaced.
    @Test func aSecondUnsavedParkStaysStale() throws {
        let pair = try Pair()
        try pair.a.park(Self.notebook())
        pair.a.isAutosaveEnabled = false
        var mine = try #require(try pair.a.retrieve(RNote.self, identifier: "n1"))
        mine.text = "Oat milk"
        try pair.a.park(&mine)
        var theirs = try #require(try pair.b.retrieve(RNote.self, identifier: "n1"))
        theirs.text = "Soy milk"
        try pair.b.park(&theirs)
        var again = try #require(try pair.a.retrieve(RNote.self, identifier: "n1"))   // A's own unsaved edit
        #expect(again.text == "Oat milk")
        again.text = "Oat milk, 2 l"
        try pair.a.park(&again)
        #expect(Self.stale { try pair.a.save() }?.0 == "n1")
        #expect(try pair.b.retrieve(RNote.self, identifier: "n1")?.text == "Soy milk")
    }

    /// Unsaved edits nobody else touched still save, in one transaction, as before.
    @Test func unsavedEditsOfUnchangedObjectsSave() throws {
        let pair = try Pair()
        try pair.a.park(Self.notebook())
        pair.a.isAutosaveEnabled = false
        var note = try #require(try pair.a.retrieve(RNote.self, identifier: "n1"))
        note.text = "Oat milk"
        try pair.a.park(&note)
        note.text = "Oat milk, 2 l"
        try pair.a.park(&note)
        var other = try #require(try pair.b.retrieve(RNote.self, identifier: "n2"))
        other.text = "Brown eggs"
        try pair.b.park(&other)
        try pair.a.save()
        #expect(try pair.b.retrieve(RNote.self, identifier: "n1")?.text == "Oat milk, 2 l")
        #expect(try pair.b.retrieve(RNote.self, identifier: "n2")?.text == "Brown eggs")
    }

    @Test func aStaleEditRefusesCommitTransaction() throws {
        let pair = try Pair()
        try pair.a.park(Self.notebook())
        try pair.a.beginTransaction()
        var mine = try #require(try pair.a.retrieve(RNote.self, identifier: "n1"))
        mine.text = "Oat milk"
        try pair.a.park(&mine)
        var theirs = try #require(try pair.b.retrieve(RNote.self, identifier: "n1"))
        theirs.text = "Soy milk"
        try pair.b.park(&theirs)
        #expect(Self.stale { try pair.a.commitTransaction() }?.0 == "n1")
        #expect(pair.a.isTransactionActive)                         // to fix, commit again or roll back
        #expect(try pair.b.retrieve(RNote.self, identifier: "n1")?.text == "Soy milk")
        try pair.a.rollbackTransaction()
    }

    @Test func aStaleEditRefusesCommitTransactionAsync() async throws {
        let pair = try Pair()
        try await pair.a.park(Self.notebook())
        try pair.a.beginTransaction()
        var mine = try #require(try await pair.a.retrieve(RNote.self, identifier: "n1"))
        mine.text = "Oat milk"
        try await pair.a.park(&mine)
        var theirs = try #require(try await pair.b.retrieve(RNote.self, identifier: "n1"))
        theirs.text = "Soy milk"
        try await pair.b.park(&theirs)
        #expect(await Self.stale { try await pair.a.commitTransaction() }?.0 == "n1")
        #expect(try await pair.b.retrieve(RNote.self, identifier: "n1")?.text == "Soy milk")
        try pair.a.rollbackTransaction()
    }

    @Test func aStaleEditRefusesTransactionClosure() throws {
        let pair = try Pair()
        try pair.a.park(NotebookModel(id: "nb1", title: "Shopping", notes: [NoteModel(id: "n1", text: "Milk")]))
        let error = Self.stale {
            try pair.a.transaction {
                let mine = try #require(try pair.a.retrieve(NoteModel.self, identifier: "n1"))
                mine.text = "Oat milk"
                try pair.a.park(mine)
                let theirs = try #require(try pair.b.retrieve(NoteModel.self, identifier: "n1"))
                theirs.text = "Soy milk"
                try pair.b.park(theirs)
            }
        }
        #expect(error?.0 == "n1")
        #expect(try pair.b.retrieve(NoteModel.self, identifier: "n1")?.text == "Soy milk")
    }

    // MARK: - 2. Delete rules where the delete is written

    @Test func denyIsCheckedWhenTheDeleteIsSaved() throws {
        let pair = try Pair()
        try pair.a.park(RNote(id: "n3", text: "Butter"))
        pair.a.isAutosaveEnabled = false
        try pair.a.delete(RNote.self, identifier: "n3")              // nothing references it yet
        try pair.b.park(RNotebook(id: "nb2", title: "Baking", notes: [RNote(id: "n3", text: "Butter", revision: 1)]))
        do {
            try pair.a.save()
            Issue.record("expected deleteDenied")
        } catch GarageError.deleteDenied(_, let identifier, let referrers) {
            #expect(identifier == "n3")
            #expect(referrers.map(\.identifier) == ["nb2"])
        }
        #expect(try pair.b.retrieve(RNotebook.self, identifier: "nb2")?.notes.map(\.id) == ["n3"])
    }

    @Test func denyIsCheckedWhenTheDeleteIsSavedAsync() async throws {
        let pair = try Pair()
        try await pair.a.park(NoteModel(id: "n3", text: "Butter"))
        try pair.a.beginTransaction()
        try await pair.a.delete(NoteModel.self, identifier: "n3")
        try await pair.b.park(NotebookModel(id: "nb2", title: "Baking", notes: [NoteModel(id: "n3", text: "Butter")]),
                              children: .onlyNew)
        await #expect(throws: GarageError.self) { try await pair.a.commitTransaction() }
        #expect(try await pair.b.retrieve(NotebookModel.self, identifier: "nb2")?.notes.map(\.id) == ["n3"])
        try pair.a.rollbackTransaction()
    }

    /// `.nullify` rewrites the referrer as it is when the delete is written: another
    /// writer's rename of the notebook stays.
    @Test func nullifyRewritesTheReferrerAsItIsWhenSaved() throws {
        let pair = try Pair()
        try pair.a.park(Self.notebook())
        pair.a.isAutosaveEnabled = false
        try pair.a.delete(RNote.self, identifier: "n1", rule: .nullify(in: RNotebook.self))
        #expect(try pair.a.retrieve(RNotebook.self, identifier: "nb1")?.notes.map(\.id) == ["n2"])
        var theirs = try #require(try pair.b.retrieve(RNotebook.self, identifier: "nb1"))
        theirs.title = "Groceries"
        try pair.b.park(&theirs)
        try pair.a.save()
        let notebook = try #require(try pair.b.retrieve(RNotebook.self, identifier: "nb1"))
        #expect(notebook.title == "Groceries")
        #expect(notebook.notes.map(\.id) == ["n2"])
        #expect(try pair.b.retrieve(RNote.self, identifier: "n1") == nil)
    }

    /// A referrer that appeared after the delete was recorded is nullified too.
    @Test func nullifyReachesReferrersThatAppearedSince() async throws {
        let pair = try Pair()
        try await pair.a.park(Self.notebook())
        pair.a.isAutosaveEnabled = false
        try await pair.a.delete(RNote.self, identifier: "n2", rule: .nullify(in: RNotebook.self))
        var n2 = try #require(try await pair.b.retrieve(RNote.self, identifier: "n2"))
        n2.revision = 1
        try await pair.b.park(RNotebook(id: "nb2", title: "Baking", notes: [n2]), children: .onlyNew)
        try await pair.a.save()
        #expect(try await pair.b.retrieve(RNotebook.self, identifier: "nb2")?.notes.isEmpty == true)
        #expect(try await pair.b.retrieve(RNotebook.self, identifier: "nb1")?.notes.map(\.id) == ["n1"])
    }

    // MARK: - 5. Deleting a stale copy

    @Test func deletingAStaleCopyIsRefused() throws {
        let pair = try Pair()
        try pair.a.park(Self.notebook())
        let mine = try #require(try pair.a.retrieve(RNote.self, identifier: "n2"))
        var theirs = try #require(try pair.b.retrieve(RNote.self, identifier: "n2"))
        theirs.text = "Brown eggs"
        try pair.b.park(&theirs)
        #expect(Self.stale { try pair.a.delete(mine, rule: .nullify(in: RNotebook.self)) }?.0 == "n2")
        #expect(try pair.a.retrieve(RNote.self, identifier: "n2")?.text == "Brown eggs")
    }

    @Test func deletingACopyThatWentStaleBeforeTheSaveIsRefused() async throws {
        let pair = try Pair()
        try await pair.a.park(NoteModel(id: "n5", text: "Tea"))
        pair.a.isAutosaveEnabled = false
        let mine = try #require(try await pair.a.retrieve(NoteModel.self, identifier: "n5"))
        try await pair.a.delete(mine)
        let theirs = try #require(try await pair.b.retrieve(NoteModel.self, identifier: "n5"))
        theirs.text = "Green tea"
        try await pair.b.park(theirs)
        #expect(await Self.stale { try await pair.a.save() }?.0 == "n5")
        #expect(try await pair.b.retrieve(NoteModel.self, identifier: "n5")?.text == "Green tea")
    }

    // MARK: - 4. No ChildParking drops an edit unreported

    @Test func keepStoredReportsTheChildEditItDidNotWrite() throws {
        let garage = try TestEngine.garage()
        try garage.parkDownloaded([Self.notebook()])
        var book = try #require(try garage.retrieve(RNotebook.self, identifier: "nb1"))
        try garage.parkDownloaded([RNote(id: "n2", text: "Eggs (another device)")])   // the sync job
        book.notes[1].text = "Eggs, a dozen"                                           // the UI
        #expect(Self.stale { try garage.park(&book) }?.0 == "n2")
        let report = try garage.park(&book, children: .keepStored)
        #expect(report.keptChildren == [ObjectKey(typeName: "RNote", identifier: "n2")])
        #expect(book.notes[1].text == "Eggs (another device)")
        // A stale child is reported whether the UI edited it or not: the park can't tell an
        // edit from the version the copy was retrieved at.
        var unedited = try #require(try garage.retrieve(RNotebook.self, identifier: "nb1"))
        try garage.parkDownloaded([RNote(id: "n1", text: "Milk (another device)")])
        unedited.title = "Groceries"
        #expect(try garage.park(&unedited, children: .keepStored).keptChildren == [ObjectKey(typeName: "RNote", identifier: "n1")])
        #expect(try garage.park(&unedited, children: .keepStored).wroteEverything)
    }

    @Test func onlyNewReportsTheChildrenItLeftAsStored() async throws {
        let garage = try TestEngine.garage()
        try await garage.park(PlainNotebook(id: "nb1", title: "A", notes: [PlainNote(id: "n1", text: "Milk")]))
        let report = try await garage.park(PlainNotebook(id: "nb1", title: "B", notes: [
            PlainNote(id: "n1", text: "Milk, edited"), PlainNote(id: "n2", text: "New"),
        ]), children: .onlyNew)
        #expect(report.keptChildren.map(\.identifier) == ["n1"])
        let same = try await garage.parkAll([PlainNotebook(id: "nb1", title: "C", notes: [
            PlainNote(id: "n1", text: "Milk"), PlainNote(id: "n2", text: "New"),
        ])], children: .onlyNew)
        #expect(same.wroteEverything)
    }
}

extension WriteTimeCheckTests {
    /// A delete followed by a park of the same object is no deletion when saved: its rule
    /// doesn't refuse the referrers another writer added meanwhile.
    @Test func aDeletionParkedAgainIsNoDeletionWhenSaved() throws {
        let pair = try Pair()
        try pair.a.park(RNote(id: "n3", text: "Butter"))
        pair.a.isAutosaveEnabled = false
        try pair.a.delete(RNote.self, identifier: "n3")
        try pair.a.park(RNote(id: "n3", text: "Butter, again"))
        var n3 = try #require(try pair.b.retrieve(RNote.self, identifier: "n3"))
        n3.text = "Butter"
        try pair.b.park(RNotebook(id: "nb2", title: "Baking", notes: [n3]), children: .onlyNew)
        try pair.a.save()
        #expect(try pair.b.retrieve(RNotebook.self, identifier: "nb2")?.notes.map(\.text) == ["Butter, again"])
    }
}

/// A copy whose change was never saved (discarded, rolled back) holds a provisional revision
/// no row ever gets: it can't pass the stale check against another writer's version that
/// happens to have the number the unsaved change predicted (a newcomer's trial, issue 24).
extension WriteTimeCheckTests {
    @Test func aCopyFromADiscardedChangeStaysStale() throws {
        let pair = try Pair()
        try pair.a.park(RNote(id: "n1", text: "start"))
        pair.a.isAutosaveEnabled = false
        var mine = try #require(try pair.a.retrieve(RNote.self, identifier: "n1"))   // revision 1
        mine.text += " +A"
        try pair.a.park(&mine)                                                      // unsaved
        var theirs = try #require(try pair.b.retrieve(RNote.self, identifier: "n1"))
        theirs.text += " +B"
        try pair.b.park(&theirs)                                                     // committed: revision 2
        #expect(Self.stale { try pair.a.save() }?.0 == "n1")
        try pair.a.discardUnsavedChanges(of: RNote.self, identifier: "n1")
        // The screen parks its copy again: refused, not written over B's revision 2.
        #expect(Self.stale { try pair.a.park(&mine) }?.0 == "n1")
        #expect(try pair.b.retrieve(RNote.self, identifier: "n1")?.text == "start +B")
    }

    @Test func aCopyFromARolledBackTransactionStaysStale() async throws {
        let pair = try Pair()
        try await pair.a.park(NoteModel(id: "n1", text: "start"))
        let mine = try #require(try await pair.a.retrieve(NoteModel.self, identifier: "n1"))
        try pair.a.beginTransaction()
        mine.text += " +A"
        try await pair.a.park(mine)
        try pair.a.rollbackTransaction()
        let theirs = try #require(try await pair.b.retrieve(NoteModel.self, identifier: "n1"))
        theirs.text += " +B"
        try await pair.b.park(theirs)
        await #expect(throws: GarageError.self) { try await pair.a.park(mine) }
        #expect(try await pair.b.retrieve(NoteModel.self, identifier: "n1")?.text == "start +B")
        // A copy whose change was saved parks on.
        let fresh = try #require(try await pair.a.retrieve(NoteModel.self, identifier: "n1"))
        pair.a.isAutosaveEnabled = false
        fresh.text += " +A"
        try await pair.a.park(fresh)
        try await pair.a.save()
        fresh.text += " +A again"
        pair.a.isAutosaveEnabled = true
        try await pair.a.park(fresh)
        #expect(try await pair.b.retrieve(NoteModel.self, identifier: "n1")?.text == "start +B +A +A again")
    }
}
