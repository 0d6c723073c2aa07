import Foundation
@testable import GarageLite
import Testing

/// Issue 11: a stale parent must not undo newer children. `Revisioned` objects carry the
/// revision they were retrieved at; a park over a newer row is refused (or, for children,
/// leaves the stored row alone), in the transaction that writes.
@Suite("Stale writes are detected")
struct StaleWriteTests {
    static let autosaves = [true, false]

    static func notebook(_ text: String = "Milk") -> RNotebook {
        RNotebook(id: "nb1", title: "Shopping", notes: [RNote(id: "n1", text: text), RNote(id: "n2", text: "Eggs")])
    }

    /// The stale error `body` throws, or a failure.
    static func staleError(_ body: () throws -> Void) -> (String, String, Int64, Int64)? {
        do {
            try body()
            Issue.record("expected GarageError.staleObject")
        } catch GarageError.staleObject(let type, let identifier, let parked, let stored) {
            return (type, identifier, parked, stored)
        } catch {
            Issue.record("expected GarageError.staleObject, got \(error)")
        }
        return nil
    }

    // MARK: - Retrieve sets the revision

    @Test func retrieveSetsTheRevisionOfRootsAndChildren() throws {
        let garage = try TestEngine.garage()
        try garage.park(Self.notebook())
        var notebook = try #require(try garage.retrieve(RNotebook.self, identifier: "nb1"))
        #expect(notebook.revision == 1)
        #expect(notebook.notes.map(\.revision) == [1, 1])
        notebook.notes[0].text = "Oat milk"
        try garage.park(notebook)
        let again = try #require(try garage.retrieve(RNotebook.self, identifier: "nb1"))
        #expect(again.revision == 1)                          // the notebook's JSON did not change
        #expect(again.notes.map(\.revision) == [2, 1])
        #expect(try garage.retrieveAll(RNote.self).map(\.revision) == [2, 1])
        #expect(try garage.retrieveAllLossy(RNote.self).objects.map(\.revision) == [2, 1])
        // Claims decode through the same decoder (oldest change first).
        #expect(try garage.claim(RNote.self, limit: 10).objects.map(\.revision) == [1, 2])
    }

    /// The revision is not content: it is not in the stored JSON, and a Hashable object's
    /// identifier does not depend on it.
    @Test func theRevisionIsNotContent() throws {
        let garage = try TestEngine.garage()
        #expect(try garage.identifier(for: RTag(name: "a", revision: 0))
            == garage.identifier(for: RTag(name: "a", revision: 7)))
        try garage.park(RNote(id: "n1", text: "Milk"))
        var note = try #require(try garage.retrieve(RNote.self, identifier: "n1"))
        note.syncStatus = .notSynced
        try garage.park(note)                                 // same content: no new revision
        #expect(try garage.metadata(RNote.self, identifier: "n1")?.revision == 1)
        #expect(try garage.retrieve(RNote.self, identifier: "n1")?.revision == 1)
    }

    // MARK: - The notes app of the issue

    /// The UI holds a notebook; the sync job applies a server edit to one of its notes; the
    /// user renames the notebook and edits that note. Parking it must not write the UI's note,
    /// an edit of an older version, over the server's. (The same park with the note unchanged
    /// keeps it as stored and writes the rest: `EditsNotLostTests`.)
    @Test(arguments: autosaves)
    func aStaleNotebookIsRefusedNamingTheNote(autosave: Bool) throws {
        let garage = try TestEngine.garage()
        try garage.parkDownloaded([Self.notebook()])
        var ui = try #require(try garage.retrieve(RNotebook.self, identifier: "nb1"))   // the UI's copy

        try garage.parkDownloaded([RNote(id: "n1", text: "Milk (from the server)")])      // the sync job
        garage.isAutosaveEnabled = autosave
        ui.title = "Groceries"                                                             // the user
        ui.notes[0].text = "Milk (edited here)"
        let stale = Self.staleError { try garage.park(ui) }
        #expect(stale?.1 == "n1")
        #expect(stale?.2 == 1)
        #expect(stale?.3 == 2)
        #expect(stale?.0 == "RNote")
        try garage.save()
        // Nothing of the refused park was written.
        let stored = try #require(try garage.retrieve(RNotebook.self, identifier: "nb1"))
        #expect(stored.title == "Shopping")
        #expect(stored.notes[0].text == "Milk (from the server)")
        #expect(stored.notes[0].syncStatus == .synced)
    }

    @Test(arguments: autosaves)
    func keepStoredRenamesTheNotebookAndKeepsTheServerText(autosave: Bool) throws {
        let garage = try TestEngine.garage()
        try garage.parkDownloaded([Self.notebook()])
        var ui = try #require(try garage.retrieve(RNotebook.self, identifier: "nb1"))
        try garage.parkDownloaded([RNote(id: "n1", text: "Milk (from the server)")])
        garage.isAutosaveEnabled = autosave
        ui.title = "Groceries"
        ui.notes[1].text = "Eggs, a dozen"                     // a child that is not stale is written
        try garage.park(&ui, children: .keepStored)
        #expect(ui.notes[0].text == "Milk (from the server)")  // read back as stored
        try garage.save()
        let stored = try #require(try garage.retrieve(RNotebook.self, identifier: "nb1"))
        #expect(stored.title == "Groceries")
        #expect(stored.notes.map(\.text) == ["Milk (from the server)", "Eggs, a dozen"])
        #expect(stored.notes[0].syncStatus == .synced)         // the server still has it
        #expect(stored.notes[1].syncStatus == .notSynced)
        // Unsaved, the copy's revisions were provisional: the save settled them to the stored ones.
        #expect(ProvisionalRevisions.resolve(ui.revision) == stored.revision
            && ui.notes.map { ProvisionalRevisions.resolve($0.revision) } == stored.notes.map(\.revision))
    }

    /// Without `Revisioned`, `.onlyNew` writes the notebook and only the notes not stored yet.
    @Test(arguments: autosaves)
    func onlyNewLeavesStoredPlainNotesAlone(autosave: Bool) throws {
        let garage = try TestEngine.garage()
        try garage.parkDownloaded([PlainNotebook(id: "nb1", title: "Shopping", notes: [PlainNote(id: "n1", text: "Milk")])])
        var ui = try #require(try garage.retrieve(PlainNotebook.self, identifier: "nb1"))
        try garage.parkDownloaded([PlainNote(id: "n1", text: "Milk (from the server)")])
        garage.isAutosaveEnabled = autosave
        ui.title = "Groceries"
        ui.notes.append(PlainNote(id: "n2", text: "Bread"))
        try garage.park(ui, children: .onlyNew)
        try garage.save()
        let stored = try #require(try garage.retrieve(PlainNotebook.self, identifier: "nb1"))
        #expect(stored.title == "Groceries")
        #expect(stored.notes.map(\.text) == ["Milk (from the server)", "Bread"])
        #expect(stored.notes[0].syncStatus == .synced)
    }

    /// GarageStorage's behaviour stays the default for children that are not Revisioned, and
    /// `.all` for Revisioned ones: the old text is written back. (This is the bug the options fix.)
    @Test func writingAllChildrenUndoesTheServerEdit() throws {
        let garage = try TestEngine.garage()
        try garage.parkDownloaded([Self.notebook()])
        var ui = try #require(try garage.retrieve(RNotebook.self, identifier: "nb1"))
        try garage.parkDownloaded([RNote(id: "n1", text: "Milk (from the server)")])
        ui.title = "Groceries"
        try garage.park(ui, children: .all)
        #expect(try garage.retrieve(RNote.self, identifier: "n1")?.text == "Milk")
    }

    // MARK: - Roots

    @Test(arguments: autosaves)
    func aStaleRootIsRefused(autosave: Bool) throws {
        let garage = try TestEngine.garage()
        try garage.park(RNote(id: "n1", text: "Milk"))
        garage.isAutosaveEnabled = autosave
        var first = try #require(try garage.retrieve(RNote.self, identifier: "n1"))
        var second = try #require(try garage.retrieve(RNote.self, identifier: "n1"))
        first.text = "Oat milk"
        try garage.park(first)
        second.text = "Soy milk"
        let stale = Self.staleError { try garage.park(second) }
        // Unsaved, the newer version is the garage's own unsaved change.
        #expect(stale?.1 == "n1" && stale?.2 == 1 && (autosave ? stale?.3 == 2 : (stale?.3 ?? 0) < 0))
        try garage.save()
        #expect(try garage.retrieve(RNote.self, identifier: "n1")?.text == "Oat milk")
    }

    /// Revision 0 (not retrieved) over a stored row is a blind overwrite: refused. Where no row
    /// is stored, it is a new object.
    @Test func aNewObjectOverAStoredOneIsRefused() throws {
        let garage = try TestEngine.garage()
        try garage.park(RNote(id: "n1", text: "Milk"))
        let stale = Self.staleError { try garage.park(RNote(id: "n1", text: "Other")) }
        #expect(stale?.2 == 0 && stale?.3 == 1)
        #expect(try garage.retrieve(RNote.self, identifier: "n1")?.text == "Milk")
    }

    @Test func anObjectDeletedSinceItWasRetrievedIsRefused() throws {
        let garage = try TestEngine.garage()
        try garage.park(RNote(id: "n1", text: "Milk"))
        let note = try #require(try garage.retrieve(RNote.self, identifier: "n1"))
        try garage.delete(note, rule: .rowOnly)
        let stale = Self.staleError { try garage.park(note) }
        #expect(stale?.2 == 1 && stale?.3 == 0)
        #expect(try garage.count(RNote.self) == 0)
        // keepStored has nothing stored to keep for a deleted child: refused too.
        try garage.park(Self.notebook())
        let notebook = try #require(try garage.retrieve(RNotebook.self, identifier: "nb1"))
        try garage.delete(RNote.self, identifier: "n2", rule: .rowOnly)
        #expect(Self.staleError { try garage.park(notebook, children: .keepStored) }?.3 == 0)
    }

    @Test func parkDownloadedIsNotChecked() throws {
        let garage = try TestEngine.garage()
        try garage.parkDownloaded([RNote(id: "n1", text: "Milk")])
        try garage.parkDownloaded([RNote(id: "n1", text: "Server", revision: 0)])  // revision 0 over a row
        #expect(try garage.retrieve(RNote.self, identifier: "n1")?.text == "Server")
    }

    // MARK: - Edit, park, edit, park

    @Test(arguments: autosaves)
    func aStructIsEditedAndParkedAgainAndAgain(autosave: Bool) throws {
        let garage = try TestEngine.garage()
        try garage.park(Self.notebook())
        garage.isAutosaveEnabled = autosave
        var notebook = try #require(try garage.retrieve(RNotebook.self, identifier: "nb1"))
        notebook.title = "Groceries"
        notebook.notes[0].text = "Oat milk"
        try garage.park(&notebook)
        if autosave {
            #expect(notebook.revision == 2 && notebook.notes.map(\.revision) == [2, 1])
        } else {
            // Unsaved: provisional revisions for the rows the park changed, until saved.
            #expect(notebook.revision < 0 && notebook.notes[0].revision < 0 && notebook.notes[1].revision == 1)
        }
        notebook.title = "Shopping list"
        notebook.notes[0].text = "Soy milk"
        try garage.park(&notebook)
        notebook.notes[1].text = "Eggs, a dozen"
        try garage.park(&notebook)
        try garage.save()
        let stored = try #require(try garage.retrieve(RNotebook.self, identifier: "nb1"))
        #expect(stored.title == "Shopping list")
        #expect(stored.notes.map(\.text) == ["Soy milk", "Eggs, a dozen"])
        #expect(ProvisionalRevisions.resolve(notebook.revision) == stored.revision
            && notebook.notes.map { ProvisionalRevisions.resolve($0.revision) } == stored.notes.map(\.revision))
        // Without `&`, the copy does not learn its new revisions: the next park is stale.
        var copy = stored
        copy.title = "Once"
        try garage.park(copy)
        copy.title = "Twice"
        #expect(Self.staleError { try garage.park(copy) }?.1 == "nb1")
    }


    @Test(arguments: autosaves)
    func aClassIsEditedAndParkedAgainAndAgain(autosave: Bool) async throws {
        let garage = try TestEngine.garage()
        try await garage.park(NotebookModel(id: "nb1", title: "Shopping", notes: [NoteModel(id: "n1", text: "Milk")]))
        garage.isAutosaveEnabled = autosave
        let model = try #require(try await garage.retrieve(NotebookModel.self, identifier: "nb1"))
        let note = model.notes[0]
        model.title = "Groceries"
        note.text = "Oat milk"
        try await garage.park(model)
        #expect(autosave ? model.revision == 2 && note.revision == 2 : model.revision < 0 && note.revision < 0)
        let first = note.revision
        note.text = "Soy milk"
        try await garage.park(model)
        // Unsaved, both edits are written as one change of the row, and still count two
        // revisions, as if each had been written.
        #expect(autosave ? note.revision == 3 : note.revision < 0 && note.revision != first)
        model.title = "Shopping list"
        try await garage.park(model, children: .keepStored)
        try await garage.save()
        let stored = try #require(try await garage.retrieve(NotebookModel.self, identifier: "nb1"))
        #expect(stored.title == "Shopping list" && stored.notes[0].text == "Soy milk")
        #expect(stored.revision == ProvisionalRevisions.resolve(model.revision)
            && stored.notes[0].revision == ProvisionalRevisions.resolve(note.revision))
    }

    // MARK: - Transactions and refusals

    @Test func insideATransactionTheChecksSeeItsChanges() throws {
        let garage = try TestEngine.garage()
        try garage.park(Self.notebook())
        var notebook = try #require(try garage.retrieve(RNotebook.self, identifier: "nb1"))
        var stale = notebook
        stale.notes[0].text = "Almond milk"        // an edit of the version the transaction moves past
        try garage.transaction {
            notebook.notes[0].text = "Oat milk"
            try garage.park(&notebook)
            notebook.notes[0].text = "Soy milk"
            try garage.park(&notebook)
            #expect(Self.staleError { try garage.park(stale) }?.1 == "n1")
        }
        #expect(try garage.retrieve(RNote.self, identifier: "n1")?.text == "Soy milk")
        #expect(try garage.retrieve(RNote.self, identifier: "n1")?.revision == ProvisionalRevisions.resolve(notebook.notes[0].revision))
        notebook.notes[0].text = "Rice milk"
        try garage.park(&notebook)                             // the revision it learned is the committed one
        // A refusal inside a transaction throws out of it: nothing of it is committed.
        #expect(throws: GarageError.self) {
            try garage.transaction {
                try garage.park(RNote(id: "n9", text: "New"))
                try garage.park(stale)
            }
        }
        #expect(try garage.retrieve(RNote.self, identifier: "n9") == nil)
    }

    /// A parked-over tombstone: the revision the caller learns is the one the store writes.
    @Test func parkingOverATombstoneInATransactionLearnsTheStoredRevision() throws {
        let garage = try TestEngine.garage()
        try garage.parkDownloaded([RNote(id: "n1", text: "Milk")])   // on the server: deleting leaves a tombstone
        try garage.delete(RNote.self, identifier: "n1")
        var note = RNote(id: "n1", text: "Again")
        try garage.transaction { try garage.park(&note) }
        #expect(ProvisionalRevisions.resolve(note.revision) == (try garage.metadata(RNote.self, identifier: "n1")?.revision))
        note.text = "Once more"
        try garage.park(&note)
    }

    @Test func nothingIsWrittenWhenOneObjectIsStale() async throws {
        let garage = try TestEngine.garage()
        try await garage.parkAll([RNote(id: "n1", text: "Milk"), RNote(id: "n2", text: "Eggs")])
        let notes = try await garage.retrieveAll(RNote.self)
        try await garage.park(notes[1].settingText("Eggs, a dozen"))
        let batch = [RNote(id: "n0", text: "New"), notes[0].settingText("Oat milk"), notes[1].settingText("Brown eggs")]
        #expect(Self.staleError { try garage.parkAll(batch) }?.1 == "n2")
        await #expect(throws: GarageError.self) { try await garage.parkAll(batch, children: .keepStored) }
        #expect(try await garage.retrieveAll(RNote.self).map(\.text) == ["Milk", "Eggs, a dozen"])
    }

    /// A streaming parkAll checks in its transaction too: a stale object at the end rolls back
    /// the rows already written.
    @Test func aStreamingParkAllIsCheckedToo() async throws {
        let garage = try TestEngine.garage()
        try await garage.park(RNote(id: "z-stored", text: "Stored"))
        var many = (0..<Garage.streamingThreshold + 10).map { RNote(id: String(format: "n%05d", $0), text: "\($0)") }
        many.append(RNote(id: "z-stored", text: "Blind overwrite"))
        #expect(Self.staleError { try garage.parkAll(many) }?.1 == "z-stored")
        await #expect(throws: GarageError.self) { try await garage.parkAll(many) }
        #expect(try await garage.count(RNote.self) == 1)
        many.removeLast()
        try await garage.parkAll(many)
        #expect(try await garage.count(RNote.self) == many.count + 1)
        // Class instances learn their revisions from a streaming write as well.
        let models = (0..<Garage.streamingThreshold).map { NoteModel(id: "m\($0)", text: "\($0)") }
        try await garage.parkAll(models)
        models[5].text = "edited"
        try await garage.parkAll(models)
        #expect(models[5].revision == 2 && models[4].revision == 1)
    }

    /// Two parks of one object in one transaction or batch of unsaved changes are written as
    /// one; the revision still counts both, as if each had been written, so a copy held from
    /// the first is stale, and content parked back as it was still moves the revision on.
    @Test(arguments: autosaves)
    func eachParkFoldedIntoOneWriteCountsARevision(autosave: Bool) throws {
        let garage = try TestEngine.garage()
        var first = RNote(id: "n1", text: "One")
        var second = RNote(id: "n1", text: "Two")
        var back = RNote(id: "n1", text: "One")
        try garage.park(&first)
        garage.isAutosaveEnabled = autosave
        try garage.transaction {
            second.revision = first.revision
            try garage.park(&second)                     // revision 2 (provisional until committed)
            back.revision = second.revision
            try garage.park(&back)                       // revision 3, the content of revision 1
            #expect(try garage.metadata(RNote.self, identifier: "n1")?.revision == back.revision)
        }
        try garage.save()
        #expect(ProvisionalRevisions.resolve(back.revision) == 3)
        #expect(second.revision != back.revision)        // the first park's, replaced by the second
        #expect(try garage.metadata(RNote.self, identifier: "n1")?.revision == 3)
        #expect(try garage.retrieve(RNote.self, identifier: "n1")?.text == "One")
        #expect(throws: GarageError.self) { try garage.park(&second) }
        #expect(throws: GarageError.self) { try garage.park(&first) }
    }
}

extension RNote {
    func settingText(_ text: String) -> RNote {
        var copy = self
        copy.text = text
        return copy
    }
}
