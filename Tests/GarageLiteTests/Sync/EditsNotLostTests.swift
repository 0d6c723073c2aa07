import Foundation
import Testing
@testable import GarageLite

// Issue 41: ordinary sequences of app code that lost or hid an edit.

/// A notebook a screen holds inside its notes: not `Revisioned`, a value.
struct ShelfNotebook: Codable, Identifiable, Syncable, Sendable, Equatable {
    var id: String
    var name: String
    var syncStatus: SyncStatus = .notSynced
}

/// A note filed in a notebook, which is a row of its own.
struct ShelfNote: Codable, Identifiable, Syncable, Sendable {
    var id: String
    var text: String
    var notebook: ShelfNotebook?
    var syncStatus: SyncStatus = .notSynced
}

/// The same notebook as a class, held by a view model, not `Revisioned`.
final class ShelfNotebookModel: Codable, Identifiable, Syncable {
    var id: String
    var name: String
    var syncStatus: SyncStatus = .notSynced

    init(id: String, name: String) {
        self.id = id
        self.name = name
    }
}

/// The same note as a class.
final class ShelfNoteModel: Codable, Identifiable, Syncable {
    var id: String
    var text: String
    var notebook: ShelfNotebookModel?
    var syncStatus: SyncStatus = .notSynced

    init(id: String, text: String, notebook: ShelfNotebookModel?) {
        self.id = id
        self.text = text
        self.notebook = notebook
    }
}

/// Runs `body` as a synchronous call: in an `async` test, the garage's synchronous entry points.
func synchronously<T>(_ body: () throws -> T) rethrows -> T {
    try body()
}

@Suite("No edit lost or hidden (issue 41)")
struct EditsNotLostTests {
    // MARK: - An object created offline on two devices under one identifier

    /// Two devices create "n1" offline. The second to upload gets a conflict with the first's:
    /// the server never had its version, so the merge has no base, every property the two
    /// differ on follows the policy (the local edit by default), and the report names them.
    @Test func anObjectCreatedOfflineOnBothDevicesIsMergedAndNamed() async throws {
        let directory = try TemporaryDirectory()
        let server = ScriptedServer()
        func device(_ name: String, merge: SyncMerge<EngineNote> = .fields()) throws -> (Garage, SyncEngine) {
            let garage = try TestEngine.garage(path: directory.path("\(name).garage"))
            return (garage, SyncEngine(garage: garage, transport: ScriptedTransport(server: server),
                                       types: [.of(EngineNote.self, merge: merge)], configuration: SyncEngineTests.quick))
        }
        let (a, engineA) = try device("a")
        let (b, engineB) = try device("b")
        try await a.park(EngineNote(id: "n1", a: "from A", shared: "A", tags: ["a"]))
        try await b.park(EngineNote(id: "n1", b: "from B", shared: "B", tags: ["b"]))
        try await engineA.sync()
        let report = try await engineB.sync()
        let conflict = try #require(report.conflicts.first { $0.object.identifier == "n1" })
        #expect(conflict.resolution == .merged)
        #expect(conflict.discardedFields == ["a", "b", "shared", "tags"])
        #expect(conflict.description == "EngineNote(n1): merged (both changed: a, b, shared, tags)")
        let stored = try #require(await server.notes["n1"])
        #expect(stored.b == "from B" && stored.shared == "B" && stored.tags == ["b"])
        try await engineA.sync()
        #expect(try await a.retrieve(EngineNote.self, identifier: "n1")?.content == stored.content)
        #expect(try await b.retrieve(EngineNote.self, identifier: "n1")?.content == stored.content)

        // With the server's side winning, B's values go, and the report names each.
        let (c, engineC) = try device("c", merge: .fields(bothChanged: .serverWins))
        try await c.park(EngineNote(id: "n1", b: "from C", shared: "C"))
        let taken = try await engineC.sync()
        let named = try #require(taken.conflicts.first { $0.object.identifier == "n1" })
        #expect(named.discardedFields.contains("shared") && named.discardedFields.contains("b"))
        #expect(try await c.retrieve(EngineNote.self, identifier: "n1")?.content == stored.content)
    }

    // MARK: - The losing side of a same-property conflict

    /// A and B change `shared` at once; B's merge keeps its own (the local edit wins there) and
    /// names A's in its report. A, whose upload the server had taken, learns at its next sync
    /// that it was replaced, and which property: in its report and its status. A change of
    /// another property, or A's own upload coming back, names nothing.
    @Test func theDeviceWhoseUploadWasReplacedLearnsIt() async throws {
        let directory = try TemporaryDirectory()
        let server = ScriptedServer()
        func device(_ name: String) throws -> (Garage, SyncEngine) {
            let garage = try TestEngine.garage(path: directory.path("\(name).garage"))
            return (garage, SyncEngine(garage: garage, transport: ScriptedTransport(server: server),
                                       types: [.of(EngineNote.self)], configuration: SyncEngineTests.quick))
        }
        let (a, engineA) = try device("a")
        let (b, engineB) = try device("b")
        try await a.park(EngineNote(id: "n1", shared: "first"))
        let created = try await engineA.sync()
        #expect(created.replaced.isEmpty)                     // its own upload came back
        try await engineB.sync()

        var mine = try #require(try await a.retrieve(EngineNote.self, identifier: "n1"))
        mine.shared = "A's"
        mine.a = "only A"
        try await a.park(mine)
        var theirs = try #require(try await b.retrieve(EngineNote.self, identifier: "n1"))
        theirs.shared = "B's"
        try await b.park(theirs)
        let first = try await engineA.sync()
        #expect(first.replaced.isEmpty)
        let merged = try await engineB.sync()
        #expect(merged.conflicts.flatMap(\.discardedFields) == ["shared"])
        let learned = try await engineA.sync()
        let replaced = try #require(learned.replaced.first)
        #expect(learned.replaced.count == 1)
        #expect(replaced.object == ObjectKey(typeName: "EngineNote", identifier: "n1"))
        #expect(replaced.fields == ["shared"])               // not `a`, which B's version kept
        #expect(!replaced.isDeletion)
        #expect(replaced.description.contains("shared"))
        #expect(engineA.status.replaced == learned.replaced)
        #expect(engineA.status.description.contains("1 replaced by the server"))
        #expect(try await a.retrieve(EngineNote.self, identifier: "n1")?.shared == "B's")
        // Told once.
        #expect(try await engineA.sync().replaced.isEmpty)

        // Another device's change of another property after A's upload replaces nothing of it.
        mine = try #require(try await a.retrieve(EngineNote.self, identifier: "n1"))
        mine.a = "again"
        try await a.park(mine)
        try await engineA.sync()
        await server.edit("n1") { $0.s = "the server's" }
        #expect(try await engineA.sync().replaced.isEmpty)

        // A deletion of A's upload before A saw it again is named too.
        mine = try #require(try await a.retrieve(EngineNote.self, identifier: "n1"))
        mine.tags = ["t"]
        try await a.park(mine)
        try await engineA.sync()
        await server.delete("n1")
        let deleted = try await engineA.sync()
        #expect(deleted.replaced.map(\.isDeletion) == [true])
        #expect(deleted.replaced.first?.fields == ["tags"])
    }

    /// Issue 44's trial: a device that deletes what it uploaded before is not told that the
    /// server's deletion (its own, coming back in the feed) replaced its upload.
    @Test func theDevicesOwnDeletionReplacesNothing() async throws {
        let directory = try TemporaryDirectory()
        let server = ScriptedServer()
        let garage = try TestEngine.garage(path: directory.path("a.garage"))
        let engine = SyncEngine(garage: garage, transport: ScriptedTransport(server: server),
                                types: [.of(EngineNote.self)], configuration: SyncEngineTests.quick)
        try await garage.park(EngineNote(id: "n1", shared: "first"))
        #expect(try await engine.sync().replaced.isEmpty)
        var mine = try #require(try await garage.retrieve(EngineNote.self, identifier: "n1"))
        mine.shared = "second"
        try await garage.park(mine)
        #expect(try await engine.sync().replaced.isEmpty)
        try await garage.delete(EngineNote.self, identifier: "n1")
        let deleted = try await engine.sync()
        #expect(deleted.uploads.flatMap(\.deletionsUploaded) == ["n1"])
        #expect(deleted.replaced.isEmpty, "\(deleted.replaced)")
        #expect(engine.status.replaced.isEmpty)
        #expect(await server.notes["n1"] == nil)
    }

    // MARK: - An old child instance held by a screen

    /// A screen holds a note and its notebook; another device renames the notebook (a
    /// download); the screen edits the note and parks it, with the notebook it holds, unchanged:
    /// the rename stays, and the notebook stays `.synced`. A changed child is still written.
    @Test(arguments: [false, true])
    func anUnchangedOldChildValueDoesNotOverwriteANewerRow(async: Bool) async throws {
        let garage = try TestEngine.garage()
        try await garage.parkDownloaded([ShelfNote(id: "n1", text: "first", notebook: ShelfNotebook(id: "b1", name: "Name 2"))])
        var screen = try #require(try await garage.retrieve(ShelfNote.self, identifier: "n1"))
        #expect(screen.notebook?.name == "Name 2")
        try await garage.parkDownloaded([ShelfNotebook(id: "b1", name: "Name 3")])
        screen.text = "edited"
        if async { try await garage.park(screen) } else { try synchronously { try garage.park(screen) } }
        let notebook = try #require(try await garage.retrieve(ShelfNotebook.self, identifier: "b1"))
        #expect(notebook.name == "Name 3")
        #expect(notebook.syncStatus == .synced)
        #expect(try await garage.retrieve(ShelfNote.self, identifier: "n1")?.text == "edited")
        // An edit of the child it holds is an edit: written.
        screen.notebook?.name = "Mine"
        if async { try await garage.park(screen) } else { try synchronously { try garage.park(screen) } }
        #expect(try await garage.retrieve(ShelfNotebook.self, identifier: "b1")?.name == "Mine")
    }

    @Test(arguments: [false, true])
    func anUnchangedOldChildInstanceDoesNotOverwriteANewerRow(async: Bool) async throws {
        let garage = try TestEngine.garage()
        let original = ShelfNoteModel(id: "n1", text: "first", notebook: ShelfNotebookModel(id: "b1", name: "Name 2"))
        try await garage.parkDownloaded([original])
        let screen = try #require(try await garage.retrieve(ShelfNoteModel.self, identifier: "n1"))
        // Another screen read the notebook after the rename: the first still holds Name 2.
        try await garage.parkDownloaded([ShelfNotebookModel(id: "b1", name: "Name 3")])
        #expect(try await garage.retrieve(ShelfNotebookModel.self, identifier: "b1")?.name == "Name 3")
        screen.text = "edited"
        if async { try await garage.park(screen) } else { try synchronously { try garage.park(screen) } }
        let metadata = try #require(try await garage.metadata(ShelfNotebookModel.self, identifier: "b1"))
        #expect(try await garage.retrieve(ShelfNotebookModel.self, identifier: "b1")?.name == "Name 3")
        #expect(metadata.syncStatus == .synced)
        // parkAll of notes holding it: the same.
        if async { try await garage.parkAll([screen]) } else { try synchronously { try garage.parkAll([screen]) } }
        #expect(try await garage.retrieve(ShelfNotebookModel.self, identifier: "b1")?.name == "Name 3")
        screen.notebook?.name = "Mine"
        if async { try await garage.park(screen) } else { try synchronously { try garage.park(screen) } }
        #expect(try await garage.retrieve(ShelfNotebookModel.self, identifier: "b1")?.name == "Mine")
    }

    /// A `Revisioned` child unchanged since it was retrieved is not an edit either: kept as
    /// stored, not refused as stale (a changed stale one still is).
    @Test func anUnchangedStaleRevisionedChildIsKeptAndAChangedOneRefused() async throws {
        let garage = try TestEngine.garage()
        try await garage.park(RNotebook(id: "b1", title: "book", notes: [RNote(id: "r1", text: "one")]))
        var screen = try #require(try await garage.retrieve(RNotebook.self, identifier: "b1"))
        var elsewhere = try #require(try await garage.retrieve(RNote.self, identifier: "r1"))
        elsewhere.text = "renamed elsewhere"
        try await garage.park(elsewhere)
        screen.title = "book, edited"
        try await garage.park(screen)
        #expect(try await garage.retrieve(RNote.self, identifier: "r1")?.text == "renamed elsewhere")
        #expect(try await garage.retrieve(RNotebook.self, identifier: "b1")?.title == "book, edited")
        screen = try #require(try await garage.retrieve(RNotebook.self, identifier: "b1"))
        elsewhere = try #require(try await garage.retrieve(RNote.self, identifier: "r1"))
        elsewhere.text = "again"
        try await garage.park(elsewhere)
        screen.notes[0].text = "changed here"
        await #expect(throws: GarageError.self) { try await garage.park(screen) }
    }

    // MARK: - A reference to an object the server deleted

    /// Device B files a new note, offline, in a notebook device A deleted: the deletion comes
    /// down, and the notebook is kept (an edit to upload, re-creating it) for the note, and the
    /// report names both.
    @Test(arguments: [false, true])
    func aDeletedObjectThatALocalEditReferencesIsKeptAndNamed(async: Bool) async throws {
        let garage = try TestEngine.garage()
        try await garage.parkDownloaded([ShelfNotebook(id: "b1", name: "Work")])
        let notebook = try #require(try await garage.retrieve(ShelfNotebook.self, identifier: "b1"))
        try await garage.park(ShelfNote(id: "n1", text: "filed offline", notebook: notebook))
        let report = async
            ? try await garage.deleteDownloaded(ShelfNotebook.self, identifiers: ["b1"])
            : try synchronously { try garage.deleteDownloaded(ShelfNotebook.self, identifiers: ["b1"]) }
        let conflict = try #require(report.conflicts.first)
        #expect(conflict.object == ObjectKey(typeName: "ShelfNotebook", identifier: "b1"))
        #expect(conflict.referencedBy == [ObjectKey(typeName: "ShelfNote", identifier: "n1")])
        #expect(conflict.resolution == .keptLocal)
        #expect(conflict.description == "ShelfNotebook(b1): deleted on the server, kept to upload again (referenced by ShelfNote(n1))")
        #expect(report.deleted.isEmpty)
        #expect(try await garage.retrieve(ShelfNote.self, identifier: "n1")?.notebook?.name == "Work")
        #expect(try await garage.metadata(ShelfNotebook.self, identifier: "b1")?.syncStatus == .notSynced)
    }

    /// A referrer with nothing to upload: the object is deleted, and the report names the
    /// referrer that now reads without it. `.takeDownloaded` deletes it whatever the referrer.
    @Test func aDeletedObjectThatOnlySyncedObjectsReferenceIsDeletedAndNamed() async throws {
        let garage = try TestEngine.garage()
        try await garage.parkDownloaded([ShelfNote(id: "n1", text: "synced", notebook: ShelfNotebook(id: "b1", name: "Work"))])
        let report = try await garage.deleteDownloaded(ShelfNotebook.self, identifiers: ["b1"])
        let conflict = try #require(report.conflicts.first)
        #expect(conflict.referencedBy == [ObjectKey(typeName: "ShelfNote", identifier: "n1")])
        #expect(conflict.resolution == .tookDownloaded)
        #expect(report.deleted == ["b1"])
        #expect(try await garage.retrieve(ShelfNote.self, identifier: "n1")?.notebook == nil)

        try await garage.parkDownloaded([ShelfNotebook(id: "b2", name: "Home")])
        let home = try #require(try await garage.retrieve(ShelfNotebook.self, identifier: "b2"))
        try await garage.park(ShelfNote(id: "n2", text: "offline", notebook: home))
        let taken = try await garage.deleteDownloaded(ShelfNotebook.self, identifiers: ["b2"], onConflict: .takeDownloaded)
        #expect(taken.conflicts.map(\.resolution) == [.tookDownloaded])
        #expect(taken.conflicts.first?.referencedBy == [ObjectKey(typeName: "ShelfNote", identifier: "n2")])
        #expect(taken.deleted == ["b2"])
    }

    @Test func aDeletedClassObjectThatALocalEditReferencesIsKept() async throws {
        let garage = try TestEngine.garage()
        try await garage.parkDownloaded([ShelfNotebookModel(id: "b1", name: "Work")])
        let notebook = try #require(try await garage.retrieve(ShelfNotebookModel.self, identifier: "b1"))
        try synchronously { try garage.park(ShelfNoteModel(id: "n1", text: "filed offline", notebook: notebook)) }
        let report = try synchronously { try garage.deleteDownloaded(ShelfNotebookModel.self, identifiers: ["b1"]) }
        #expect(report.conflicts.map(\.resolution) == [.keptLocal])
        #expect(try synchronously { try garage.retrieve(ShelfNoteModel.self, identifier: "n1") }?.notebook?.name == "Work")
    }
}
