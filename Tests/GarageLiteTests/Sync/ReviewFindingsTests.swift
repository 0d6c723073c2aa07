import Foundation
@testable import GarageLite
import Testing

/// Sequences a review of issue 24's write-time checks, provisional revisions and downloaded
/// deletions found losing an edit or leaving an object unreadable (each failed before its fix).
@Suite("Review findings (issue 24)")
struct ReviewFindingsTests {
    /// Two garages on one file: A, the app's screen (autosave off), and B, another writer.
    typealias Pair = GaragePair

    /// A notebook that is not `Revisioned`: last writer wins.
    struct RFPlainBook: Codable, Identifiable, Sendable {
        var id: String
        var title: String
        var subtitle: String
        var notes: [PlainNote]
    }

    static func isStale(_ body: () throws -> Void) -> Bool {
        do {
            try body()
            return false
        } catch GarageError.staleObject {
            return true
        } catch {
            Issue.record("expected staleObject, got \(error)")
            return false
        }
    }

    // MARK: - Provisional revisions settled to the wrong revision

    /// Two unsaved parks of one row in two segments (a bulk change between them): the save
    /// settles *both* provisional revisions to the row's final revision, so a copy held from
    /// the first park passes the stale check and writes over the second edit.
    @Test func aCopyFromAnEarlierSegmentIsStaleAfterTheSave() throws {
        let garage = try TestEngine.garage()
        try garage.park(RNote(id: "n1", text: "Milk"))
        try garage.park(PlainNote(id: "p1", text: "unrelated"))
        garage.isAutosaveEnabled = false
        var first = try #require(try garage.retrieve(RNote.self, identifier: "n1"))
        first.text = "Oat milk"
        try garage.park(&first)                       // provisional p1
        let older = first                             // a copy the UI still holds
        try garage.deleteAll(PlainNote.self)          // a bulk change: the next park is a new segment
        var second = first
        second.text = "Soy milk"
        try garage.park(&second)                      // provisional p2
        try garage.save()                             // settles p1 AND p2 to the final revision

        var stale = older
        #expect(Self.isStale { try garage.park(&stale) })
        #expect(try garage.retrieve(RNote.self, identifier: "n1")?.text == "Soy milk")
    }

    /// The same with autosave turned back on: the autosaving park is merged after the sealed
    /// unsaved changes (a new segment), and the unsaved park's provisional revision is settled
    /// to the revision of the later write.
    @Test func aCopyFromTheUnsavedParkIsStaleAfterAnAutosavingPark() throws {
        let garage = try TestEngine.garage()
        try garage.park(RNote(id: "n1", text: "Milk"))
        garage.isAutosaveEnabled = false
        var first = try #require(try garage.retrieve(RNote.self, identifier: "n1"))
        first.text = "Oat milk"
        try garage.park(&first)
        let older = first
        garage.isAutosaveEnabled = true
        var second = first
        second.text = "Soy milk"
        try garage.park(&second)                      // saves both

        var stale = older
        #expect(Self.isStale { try garage.park(&stale) })
        #expect(try garage.retrieve(RNote.self, identifier: "n1")?.text == "Soy milk")
    }

    /// A save refused, then retried after more edits: the retry's segments each settle to the
    /// final revision.
    @Test func aCopyFromBeforeARefusedSaveIsStaleAfterTheRetry() throws {
        let pair = try Pair()
        try pair.a.park(RNote(id: "n1", text: "Milk"))
        try pair.a.park(RNote(id: "m1", text: "Bread"))
        pair.a.isAutosaveEnabled = false
        var first = try #require(try pair.a.retrieve(RNote.self, identifier: "n1"))
        first.text = "Oat milk"
        try pair.a.park(&first)
        let older = first
        var m = try #require(try pair.a.retrieve(RNote.self, identifier: "m1"))
        m.text = "Rye bread"
        try pair.a.park(&m)
        var theirs = try #require(try pair.b.retrieve(RNote.self, identifier: "m1"))
        theirs.text = "White bread"
        try pair.b.park(&theirs)
        #expect(Self.isStale { try pair.a.save() })   // refused: m1; the unsaved changes are sealed
        var second = first
        second.text = "Soy milk"
        try pair.a.park(&second)                      // a new segment
        try pair.a.discardUnsavedChanges(of: RNote.self, identifier: "m1")
        try pair.a.save()

        var stale = older
        #expect(Self.isStale { try pair.a.park(&stale) })
        if pair.a.hasUnsavedChanges { try pair.a.save() }
        #expect(try pair.b.retrieve(RNote.self, identifier: "n1")?.text == "Soy milk")
    }

    // MARK: - A rewrite folded over the app's own park

    /// A (autosave off) edits a notebook that is not `Revisioned`, then deletes a note with
    /// `.nullify`: the rewrite folds into A's park, and its check marks the row as "only
    /// rewrites". B changes the notebook; A's save rebuilds the rewrite over B's row and A's
    /// edit of the title is silently dropped although the save succeeded.
    @Test func theAppsOwnParkIsNotDroppedByARebuiltRewrite() throws {
        let pair = try Pair()
        try pair.a.park(RFPlainBook(id: "b1", title: "Old", subtitle: "old",
                                    notes: [PlainNote(id: "n1", text: "Milk"), PlainNote(id: "n2", text: "Eggs")]))
        pair.a.isAutosaveEnabled = false
        var mine = try #require(try pair.a.retrieve(RFPlainBook.self, identifier: "b1"))
        mine.title = "A's title"
        try pair.a.park(mine)
        try pair.a.delete(PlainNote.self, identifier: "n1", rule: .nullify(in: RFPlainBook.self))

        var theirs = try #require(try pair.b.retrieve(RFPlainBook.self, identifier: "b1"))
        theirs.subtitle = "B's subtitle"
        try pair.b.park(theirs)

        try pair.a.save()                             // succeeds
        let saved = try #require(try pair.b.retrieve(RFPlainBook.self, identifier: "b1"))
        #expect(saved.notes.map(\.id) == ["n2"])
        #expect(saved.title == "A's title")           // fails: "Old", A's acknowledged edit is gone
    }

    // MARK: - Delete of a copy holding a provisional revision

    /// The delete's stale check compares the copy's revision with the row's `revision`, not
    /// its `copyRevision`: a copy just parked unsaved (provisional revision) can't be deleted.
    @Test func aCopyJustParkedUnsavedCanBeDeleted() throws {
        let garage = try TestEngine.garage()
        try garage.park(RNote(id: "n1", text: "Milk"))
        garage.isAutosaveEnabled = false
        var note = try #require(try garage.retrieve(RNote.self, identifier: "n1"))
        note.text = "Oat milk"
        try garage.park(&note)
        try garage.delete(note)                       // throws staleObject(parked: -k, stored: 2)
        try garage.save()
        #expect(try garage.retrieve(RNote.self, identifier: "n1") == nil)
    }

    @Test func aCopyJustParkedInATransactionCanBeDeleted() throws {
        let garage = try TestEngine.garage()
        try garage.park(RNote(id: "n1", text: "Milk"))
        try garage.transaction {
            var note = try #require(try garage.retrieve(RNote.self, identifier: "n1"))
            note.text = "Oat milk"
            try garage.park(&note)
            try garage.delete(note)
        }
        #expect(try garage.retrieve(RNote.self, identifier: "n1") == nil)
    }

    // MARK: - The deletion check skips referrers that pending changes merely touch

    /// A's unsaved changes set the notebook's status (touching it), then delete a note under
    /// `.deny`. B adds the note to the notebook. A's save skips the notebook as "touched by
    /// the changes" and deletes the note: B's notebook no longer reads.
    @Test func aStatusChangeDoesNotHideANewReferrerFromDeny() throws {
        let pair = try Pair()
        try pair.a.park(RNote(id: "n9", text: "Butter"))
        try pair.a.park(RNotebook(id: "nb1", title: "Shopping", notes: [RNote(id: "n1", text: "Milk")]))
        pair.a.isAutosaveEnabled = false
        let book = try #require(try pair.a.retrieve(RNotebook.self, identifier: "nb1"))
        try pair.a.setSyncStatus(.synced, for: book)
        try pair.a.delete(RNote.self, identifier: "n9", rule: .deny)   // nothing references it yet

        var theirs = try #require(try pair.b.retrieve(RNotebook.self, identifier: "nb1"))
        theirs.notes.append(try #require(try pair.b.retrieve(RNote.self, identifier: "n9")))
        try pair.b.park(&theirs)

        #expect(throws: GarageError.self) { try pair.a.save() }   // should be deleteDenied
        #expect(try pair.b.retrieve(RNotebook.self, identifier: "nb1")?.notes.map(\.id) == ["n1", "n9"])
    }

    // MARK: - A downloaded deletion purges a row a pending referrer names

    /// A (autosave off) parks a new notebook naming an existing note with `.onlyNew` (the note's
    /// row is left as stored, so the pending changes don't touch it). The note's deletion is
    /// downloaded: no committed referrer, so the row was purged, not kept as a `.synced`
    /// tombstone, and A's save then wrote a notebook naming a row that is gone: it couldn't be
    /// read. Since issue 41 the unsaved notebook, a new object that names the note, keeps it (an
    /// edit to upload), and the report says so.
    @Test func aDownloadedDeletionLeavesAPendingReferrerReadable() throws {
        let garage = try TestEngine.garage()
        try garage.parkDownloaded([RNote(id: "n2", text: "Eggs")])
        garage.isAutosaveEnabled = false
        let note = try #require(try garage.retrieve(RNote.self, identifier: "n2"))
        try garage.park(RNotebook(id: "nb2", title: "Baking", notes: [note]), children: .onlyNew)
        let report = try garage.deleteDownloaded(RNote.self, identifiers: ["n2"])
        #expect(report.conflicts.first?.referencedBy == [ObjectKey(typeName: "RNotebook", identifier: "nb2")])
        try garage.save()
        let notebook = try garage.retrieve(RNotebook.self, identifier: "nb2")
        #expect(notebook?.notes.map(\.id) == ["n2"])
    }

    // MARK: - A downloaded deletion of a claimed object

    /// `.takeDownloaded` against a claimed local edit turns the row into a local (`.notSynced`)
    /// tombstone, not a `.synced` one, so a collection naming it no longer reads.
    @Test func aDownloadedDeletionOfAClaimedObjectLeavesTheParentReadable() throws {
        let garage = try TestEngine.garage()
        try garage.parkDownloaded([RNotebook(id: "nb1", title: "Shopping",
                                             notes: [RNote(id: "n1", text: "Milk"), RNote(id: "n2", text: "Eggs")])])
        var n2 = try #require(try garage.retrieve(RNote.self, identifier: "n2"))
        n2.text = "Brown eggs"
        try garage.park(&n2)
        let claim = try garage.claim(RNote.self, limit: 10)
        #expect(claim.identifiers == ["n2"])
        try garage.deleteDownloaded(RNote.self, identifiers: ["n2"], onConflict: .takeDownloaded)
        let notebook = try garage.retrieve(RNotebook.self, identifier: "nb1")   // threw: Missing Identifiable reference
        #expect(notebook?.notes.map(\.id) == ["n1"])
        // After the claim (the deletion is then a change to upload), and after its upload.
        try garage.complete(claim)
        #expect(try garage.retrieve(RNotebook.self, identifier: "nb1")?.notes.map(\.id) == ["n1"])
        let deletion = try garage.claim(RNote.self, limit: 10)
        #expect(deletion.deletions == ["n2"])
        try garage.complete(deletion)
        #expect(try garage.retrieve(RNotebook.self, identifier: "nb1")?.notes.map(\.id) == ["n1"])
        #expect(try garage.check().problems.isEmpty)
    }
}

extension ReviewFindingsTests {
    /// `deleteAll(_:rule: .deny)` followed by a park of one of the type's objects: the object
    /// exists at the end, so a referrer another writer added to it doesn't refuse the save.
    @Test func aDeleteAllThenAParkIsNoDeletionOfWhatWasParked() throws {
        let pair = try Pair()
        try pair.a.park(RNote(id: "n1", text: "Milk"))
        pair.a.isAutosaveEnabled = false
        try pair.a.deleteAll(RNote.self, rule: .deny)
        try pair.a.park(RNote(id: "n1", text: "Milk, again"))
        var n1 = try #require(try pair.b.retrieve(RNote.self, identifier: "n1"))
        n1.text = "Milk"
        try pair.b.park(RNotebook(id: "nb1", title: "Shopping", notes: [n1]), children: .onlyNew)
        try pair.a.save()
        #expect(try pair.b.retrieve(RNotebook.self, identifier: "nb1")?.notes.map(\.text) == ["Milk, again"])
    }
}
