import Crypto
import Foundation
@testable import GarageLite
import Testing

// A notes app's graph: notebooks hold notes in an array, a pinned note in an optional, notes
// by section in a dictionary; a cover holds one note it can't do without.
struct DNote: Codable, Identifiable, Hashable, Syncable, Sendable {
    var id: String
    var text: String
    var syncStatus: SyncStatus = .notSynced
}

struct DNotebook: Codable, Identifiable, Syncable, Revisioned, Sendable {
    var id: String
    var title: String
    var notes: [DNote]
    var pinned: DNote?
    var sections: [String: DNote] = [:]
    var syncStatus: SyncStatus = .notSynced
    var revision: Int64 = 0
}

struct DCover: Codable, Identifiable, Sendable {
    var id: String
    var note: DNote
}

/// Content-identified: removing a reference would change its identifier.
struct DBookmark: Codable, Hashable, Sendable {
    var label: String
    var note: DNote
}

/// A class model, as a view model holds one.
final class DFolder: Codable, Identifiable {
    var id: String
    var notes: [DNote]

    init(id: String, notes: [DNote]) {
        self.id = id
        self.notes = notes
    }
}

/// Relatives referencing one another: a referrer's children may reference the deleted object too.
final class DRelative: Codable, Identifiable {
    var id: String
    var brother: DRelative?
    var siblings: [DRelative]

    init(id: String, brother: DRelative? = nil, siblings: [DRelative] = []) {
        self.id = id
        self.brother = brother
        self.siblings = siblings
    }
}

/// Issue 11: deleting an object that others reference follows a rule — refuse (the default),
/// remove the references from the referrers in the same transaction, or delete the row only
/// as GarageStorage does — and the referrers are found through an index, not a scan.
@Suite("Delete rules and referrers")
struct DeleteRuleTests {
    static let milk = DNote(id: "n1", text: "Milk")
    static let eggs = DNote(id: "n2", text: "Eggs")

    static func notebook(_ id: String = "b1") -> DNotebook {
        DNotebook(id: id, title: "Shopping", notes: [milk, eggs], pinned: milk, sections: ["dairy": milk, "other": eggs])
    }

    static func key(_ type: String, _ identifier: String) -> ObjectKey {
        ObjectKey(typeName: type, identifier: identifier)
    }

    /// The error `body` throws, or a failure.
    static func error<E: Error>(_ type: E.Type, _ body: () throws -> Void) -> E? {
        do {
            try body()
            Issue.record("expected \(E.self)")
        } catch let error as E {
            return error
        } catch {
            Issue.record("expected \(E.self), got \(error)")
        }
        return nil
    }

    // MARK: - Referrers

    @Test func referrersListWhoReferencesAnObjectAndFollowEveryChange() throws {
        let garage = try TestEngine.garage()
        try garage.park(Self.notebook("b1"))
        try garage.park(DNotebook(id: "b2", title: "Other", notes: [Self.milk]))
        try garage.park(DCover(id: "c1", note: Self.eggs))
        #expect(try garage.referrers(of: Self.milk) == [Self.key("DNotebook", "b1"), Self.key("DNotebook", "b2")])
        #expect(try garage.referrers(of: DNote.self, identifier: "n2") == [Self.key("DCover", "c1"), Self.key("DNotebook", "b1")])
        #expect(try garage.referrers(of: DNote.self, identifier: "none").isEmpty)
        #expect(try garage.referrers(of: Self.notebook("b1")).isEmpty)

        // A referrer parked without the reference, and a referrer deleted, are no longer ones.
        var b2 = try #require(try garage.retrieve(DNotebook.self, identifier: "b2"))
        b2.notes = []
        try garage.park(b2)
        try garage.delete(DCover.self, identifier: "c1")
        #expect(try garage.referrers(of: Self.milk) == [Self.key("DNotebook", "b1")])
        #expect(try garage.referrers(of: Self.eggs) == [Self.key("DNotebook", "b1")])
        // A rename moves the referrers and the referenced.
        try garage.migrateAll(fromOldClassName: "DNotebook", to: DNotebook.self)
        #expect(try garage.referrers(of: Self.milk) == [Self.key("DNotebook", "b1")])
        #expect(try garage.check().problems.isEmpty)
    }

    @Test func anObjectReferencingItselfIsNotItsOwnReferrer() throws {
        let garage = try TestEngine.garage()
        let folder = DFolder(id: "f", notes: [Self.milk])
        try garage.park(folder)
        #expect(try garage.referrers(of: Self.milk) == [Self.key("DFolder", "f")])
        try garage.delete(folder)                     // nothing references the folder
        #expect(try garage.referrers(of: Self.milk).isEmpty)
        try garage.delete(Self.milk)
    }

    @Test(arguments: [false, true])
    func referrersSeeUnsavedChangesAndTransactions(inTransaction: Bool) throws {
        let garage = try TestEngine.garage()
        try garage.park(DNotebook(id: "b1", title: "Committed", notes: [Self.milk]))
        // A committed referrer the changes leave alone stays one.
        try garage.park(DNotebook(id: "b3", title: "Committed, kept", notes: [Self.milk]))
        let referrers = [Self.key("DNotebook", "b2"), Self.key("DNotebook", "b3")]
        func pending() throws {
            try garage.park(DNotebook(id: "b2", title: "Pending", notes: [Self.milk]))
            try garage.park(DNotebook(id: "b1", title: "Committed, emptied", notes: [], revision: 1))
            #expect(try garage.referrers(of: Self.milk) == referrers)
            #expect(throws: GarageError.deleteDenied(typeName: "DNote", identifier: "n1", referrers: referrers)) {
                try garage.delete(Self.milk)
            }
        }
        if inTransaction {
            try garage.transaction { try pending() }
        } else {
            garage.isAutosaveEnabled = false
            try pending()
            try garage.save()
        }
        #expect(try garage.referrers(of: Self.milk) == referrers)
    }

    @Test func anotherGarageOnTheFileSeesTheSameReferrers() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("notes.sqlite")
        let app = try TestEngine.garage(path: path)
        let widget = try TestEngine.garage(path: path)
        try widget.park(Self.notebook())
        #expect(try app.referrers(of: Self.milk) == [Self.key("DNotebook", "b1")])
        #expect(throws: GarageError.self) { try app.delete(Self.milk) }
        #expect(try widget.retrieve(DNotebook.self, identifier: "b1")?.notes.count == 2)
    }

    // MARK: - deny (the default)

    @Test func deletingAReferencedObjectIsRefusedNamingItsReferrers() throws {
        let garage = try TestEngine.garage()
        try garage.park(Self.notebook())
        try garage.park(DCover(id: "c1", note: Self.milk))
        let error = Self.error(GarageError.self) { try garage.delete(Self.milk) }
        #expect(error == .deleteDenied(typeName: "DNote", identifier: "n1",
                                       referrers: [Self.key("DCover", "c1"), Self.key("DNotebook", "b1")]))
        #expect(error?.description.hasPrefix("Cannot delete DNote(n1): DCover(c1), DNotebook(b1) reference it") == true)
        #expect(error?.description.contains(".nullify(in: DCover.self, DNotebook.self)") == true)
        #expect(try garage.retrieve(DNote.self, identifier: "n1") != nil)
        #expect(try garage.retrieve(DNotebook.self, identifier: "b1")?.notes.count == 2)
        // The other entry points refuse alike; an object nobody references goes.
        #expect(throws: GarageError.self) { try garage.delete(DNote.self, identifier: "n1") }
        #expect(throws: GarageError.self) { try garage.deleteAll(DNote.self) }
        #expect(try garage.count(DNote.self) == 2)
        try garage.delete(DCover.self, identifier: "c1")
        try garage.park(DNote(id: "n3", text: "Tea"))
        #expect(try garage.delete(DNote.self, identifier: "n3"))
    }

    @Test func deleteAllIgnoresReferrersOfItsOwnType() throws {
        let garage = try TestEngine.garage()
        try garage.park(DNotebook(id: "b1", title: "One", notes: [Self.milk]))
        #expect(try garage.deleteAll(DNotebook.self) == 1)
        #expect(try garage.deleteAll(DNote.self) == 1)
    }

    @Test func theGarageWideRuleAppliesToCallsWithoutOne() throws {
        let garage = try TestEngine.garage()
        #expect(garage.deleteRule.description == "deny")
        garage.deleteRule = .nullify(in: DNotebook.self)
        #expect(garage.deleteRule.description == "nullify(in: [DNotebook.self])")
        try garage.park(Self.notebook())
        try garage.delete(Self.milk)
        #expect(try garage.retrieve(DNotebook.self, identifier: "b1")?.notes.map(\.id) == ["n2"])
    }

    // MARK: - rowOnly (GarageStorage's delete)

    @Test func rowOnlyLeavesTheReferencesAsGarageStorageDoes() throws {
        let garage = try TestEngine.garage()
        try garage.park(Self.notebook())
        try garage.park(DCover(id: "c1", note: Self.milk))
        try garage.delete(Self.milk, rule: .rowOnly)
        #expect(try garage.retrieve(DNote.self, identifier: "n1") == nil)
        #expect(throws: DecodingError.self) { try garage.retrieve(DNotebook.self, identifier: "b1") }
        #expect(throws: DecodingError.self) { try garage.retrieve(DCover.self, identifier: "c1") }
        #expect(try garage.check().problems.count == 2)   // the notebook's and the cover's dangling reference
    }

    // MARK: - nullify

    @Test func nullifyRemovesTheReferenceWhereverItIsHeld() throws {
        let garage = try TestEngine.garage()
        try garage.park(Self.notebook())
        try garage.park(DFolder(id: "f", notes: [Self.eggs, Self.milk]))
        let before = try #require(try garage.metadata(DNotebook.self, identifier: "b1"))

        try garage.delete(Self.milk, rule: .nullify(in: DNotebook.self, DFolder.self))
        let notebook = try #require(try garage.retrieve(DNotebook.self, identifier: "b1"))
        #expect(notebook.notes.map(\.id) == ["n2"])
        #expect(notebook.pinned == nil)
        #expect(notebook.sections.mapValues(\.id) == ["other": "n2"])
        #expect(notebook.title == "Shopping")
        #expect(notebook.revision == before.revision + 1)
        #expect(try garage.retrieve(DFolder.self, identifier: "f")?.notes.map(\.id) == ["n2"])
        #expect(try garage.retrieve(DNote.self, identifier: "n1") == nil)
        #expect(try garage.referrers(of: Self.eggs) == [Self.key("DFolder", "f"), Self.key("DNotebook", "b1")])
        #expect(try garage.check().problems.isEmpty)
    }

    @Test func nullifiedReferrersAreUploadedAndTheDeletionToo() throws {
        let garage = try TestEngine.garage()
        try garage.parkDownloaded([Self.notebook()])                       // .synced, from the server
        #expect(try garage.syncStatus(for: Self.notebook()) == .synced)
        try garage.delete(Self.milk, rule: .nullify(in: DNotebook.self))
        #expect(try garage.syncStatus(for: Self.notebook()) == .notSynced)
        let notebooks = try garage.claim(DNotebook.self, limit: 10)
        #expect(notebooks.objects.map { $0.notes.map(\.id) } == [["n2"]])
        let notes = try garage.claim(DNote.self, limit: 10)
        #expect(notes.deletions == ["n1"])
        try garage.complete(notebooks)
        try garage.complete(notes)
    }

    /// The UI still holds the notebook with the deleted note: parking it must not bring the
    /// note back, nor undo the removal.
    @Test func aCopyHeldFromBeforeTheDeletionIsStale() throws {
        let garage = try TestEngine.garage()
        try garage.park(Self.notebook())
        var ui = try #require(try garage.retrieve(DNotebook.self, identifier: "b1"))
        try garage.delete(DNote.self, identifier: "n1", rule: .nullify(in: DNotebook.self))
        ui.title = "Groceries"
        let error = Self.error(GarageError.self) { try garage.park(ui) }
        guard case .staleObject("DNotebook", "b1", 1, 2)? = error else {
            Issue.record("expected staleObject for the notebook, got \(String(describing: error))")
            return
        }
        #expect(try garage.retrieve(DNote.self, identifier: "n1") == nil)
    }

    @Test func nullifyRefusesWhatItCantDoAndChangesNothing() throws {
        let garage = try TestEngine.garage()
        try garage.park(Self.notebook())
        try garage.park(DCover(id: "c1", note: Self.milk))
        try garage.park(DBookmark(label: "x", note: Self.eggs))
        func rows() throws -> [String] {
            try garage.store.allStoredRows().map { "\($0.key.typeName)\($0.key.identifier)\($0.data)\($0.revision)" }.sorted()
        }
        let stored = try rows()

        // A referrer type not given.
        var error = Self.error(GarageError.self) { try garage.delete(Self.milk, rule: .nullify(in: DNotebook.self)) }
        guard case .cannotNullify("DNote", "n1", Self.key("DCover", "c1"), let reason)? = error else {
            Issue.record("expected cannotNullify naming the cover, got \(String(describing: error))")
            return
        }
        #expect(reason.contains("add DCover.self"))
        // A property that is not optional.
        error = Self.error(GarageError.self) { try garage.delete(Self.milk, rule: .nullify(in: DNotebook.self, DCover.self)) }
        guard case .cannotNullify("DNote", "n1", Self.key("DCover", "c1"), let reason)? = error else {
            Issue.record("expected cannotNullify naming the cover, got \(String(describing: error))")
            return
        }
        #expect(reason.contains("its property `note` can't do without it"))
        #expect(!reason.contains("DecodingError"))
        #expect(error?.description.hasPrefix("Cannot delete DNote(n1) with rule .nullify: DCover(c1) references it") == true)
        // A content-identified referrer.
        error = Self.error(GarageError.self) { try garage.delete(Self.eggs, rule: .nullify(in: DNotebook.self, DBookmark.self)) }
        guard case .cannotNullify("DNote", "n2", let referrer, let reason)? = error else {
            Issue.record("expected cannotNullify naming the bookmark, got \(String(describing: error))")
            return
        }
        #expect(referrer.typeName == "DBookmark")
        #expect(reason.contains("identified by its content"))

        let after = try rows()
        #expect(after == stored)
    }

    /// A notebook parked, then changed by a nullify, in one transaction (or one batch of
    /// unsaved changes): the copy held from the park is stale once they are written, and can't
    /// bring the note back.
    @Test(arguments: [false, true])
    func aCopyParkedInTheSameTransactionIsStaleToo(unsaved: Bool) async throws {
        let garage = try TestEngine.garage()
        var held = Self.notebook()
        let work = {
            try await garage.park(&held)
            try await garage.delete(Self.milk, rule: .nullify(in: DNotebook.self))
        }
        if unsaved {
            garage.isAutosaveEnabled = false
            try await work()
            try await garage.save()
        } else {
            try await garage.transaction { try await work() }
        }
        // The park's revision was provisional (the change unsaved then), and the rule's
        // rewrite replaced it: the copy is stale.
        #expect(held.revision < 0)
        #expect(try await garage.metadata(DNotebook.self, identifier: "b1")?.revision == 2)
        held.title = "Groceries"
        do {
            try await garage.park(&held)
            Issue.record("expected staleObject")
        } catch GarageError.staleObject(let type, let identifier, _, let stored) {
            #expect(type == "DNotebook" && identifier == "b1" && stored == 2)
        }
        #expect(try await garage.retrieve(DNote.self, identifier: "n1") == nil)
    }

    /// References that dangle already (a row-only delete) refer to nothing: they don't hold
    /// back a delete of the type.
    @Test func danglingReferencesDontBlockDeleteAll() throws {
        let garage = try TestEngine.garage()
        try garage.park(DNotebook(id: "b1", title: "One", notes: [Self.milk], pinned: Self.eggs))
        try garage.delete(Self.milk, rule: .rowOnly)
        #expect(try garage.referrers(of: DNote.self, identifier: "n1").isEmpty)
        #expect(throws: GarageError.deleteDenied(typeName: "DNote", identifier: "n2",
                                                 referrers: [Self.key("DNotebook", "b1")])) {
            try garage.deleteAll(DNote.self)
        }
        #expect(try garage.deleteAll(DNote.self, rule: .rowOnly) == 1)
        #expect(try garage.deleteAll(DNote.self) == 0)
    }

    /// Olivia references Sam and Nick, Sam references Nick: both drop Nick (a GarageStorage
    /// switcher's trial found Olivia refused, blamed for Sam's array).
    @Test func referrersThatReferenceEachOtherAreEachRewritten() throws {
        let garage = try TestEngine.garage()
        let nick = DRelative(id: "Nick")
        let sam = DRelative(id: "Sam", siblings: [nick])
        try garage.park(DRelative(id: "Olivia", brother: sam, siblings: [nick]))
        try garage.delete(DRelative.self, identifier: "Nick", rule: .nullify(in: DRelative.self))
        let olivia = try #require(try garage.retrieve(DRelative.self, identifier: "Olivia"))
        #expect(olivia.brother?.id == "Sam" && olivia.siblings.isEmpty && olivia.brother?.siblings.isEmpty == true)
        #expect(try garage.identifiers(of: DRelative.self) == ["Olivia", "Sam"])
    }

    @Test func deleteAllNullifiesEveryReference() throws {
        let garage = try TestEngine.garage()
        try garage.park(Self.notebook())
        try garage.park(DFolder(id: "f", notes: [Self.eggs]))
        #expect(try garage.deleteAll(DNote.self, rule: .nullify(in: DNotebook.self, DFolder.self)) == 2)
        let notebook = try #require(try garage.retrieve(DNotebook.self, identifier: "b1"))
        #expect(notebook.notes.isEmpty && notebook.pinned == nil && notebook.sections.isEmpty)
        #expect(try garage.retrieve(DFolder.self, identifier: "f")?.notes.isEmpty == true)
        #expect(try garage.check().problems.isEmpty)
    }

    @Test func nullifyRewritesEncryptedReferrers() throws {
        let garage = try TestEngine.garage()
        garage.dataEncryptionDelegate = TestEncryptor()
        try garage.park(Self.notebook())
        try garage.delete(Self.milk, rule: .nullify(in: DNotebook.self))
        #expect(try garage.retrieve(DNotebook.self, identifier: "b1")?.notes.map(\.id) == ["n2"])
        let encrypted = try garage.store.storedRow(ObjectKey(typeName: "DNotebook", identifier: "b1"))?.isEncrypted
        #expect(encrypted == true)
    }

    @Test(arguments: [false, true])
    func nullifyInsideATransactionCommitsWithIt(throwing: Bool) throws {
        let garage = try TestEngine.garage()
        try garage.park(Self.notebook())
        struct Cancel: Error {}
        do {
            try garage.transaction {
                try garage.delete(Self.milk, rule: .nullify(in: DNotebook.self))
                #expect(try garage.retrieve(DNotebook.self, identifier: "b1")?.notes.map(\.id) == ["n2"])
                if throwing { throw Cancel() }
            }
        } catch is Cancel {}
        #expect(try garage.retrieve(DNote.self, identifier: "n1") == (throwing ? Self.milk : nil))
        #expect(try garage.retrieve(DNotebook.self, identifier: "b1")?.notes.count == (throwing ? 2 : 1))
    }

    @Test func theAsyncCallsFollowTheSameRules() async throws {
        let garage = try TestEngine.garage()
        try await garage.park(Self.notebook())
        #expect(try await garage.referrers(of: Self.milk) == [Self.key("DNotebook", "b1")])
        #expect(try await garage.referrers(of: DNote.self, identifier: "n2") == [Self.key("DNotebook", "b1")])
        await #expect(throws: GarageError.self) { try await garage.delete(Self.milk) }
        try await garage.delete(Self.milk, rule: .nullify(in: DNotebook.self))
        #expect(try await garage.delete(DNote.self, identifier: "n2", rule: .rowOnly))
        #expect(try await garage.deleteAll(DNotebook.self, rule: .deny) == 1)
    }
}
