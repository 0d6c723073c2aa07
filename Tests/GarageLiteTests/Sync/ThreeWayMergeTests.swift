import Foundation
import Testing
@testable import GarageLite

/// A note with a property for each side, for the three-way merges of `parkDownloaded`.
private struct ThreeWayNote: Codable, Identifiable, Syncable, Equatable {
    var id: String
    var title = ""
    var body = ""
    var syncStatus: SyncStatus = .notSynced
}

/// The same, as a class (not `Sendable`): each version is an instance of its own.
private final class ThreeWayNotebook: Codable, Identifiable, Syncable {
    var id: String
    var name: String
    var color: String
    var syncStatus: SyncStatus = .notSynced
    init(id: String, name: String, color: String) {
        self.id = id
        self.name = name
        self.color = color
    }
}

/// A writer, an `Identifiable` child of `ThreeWayBook`: its own row.
private struct ThreeWayAuthor: Codable, Identifiable, Syncable, Equatable {
    var id: String
    var name: String
    var syncStatus: SyncStatus = .notSynced
}

/// A book with an `Identifiable` child.
private struct ThreeWayBook: Codable, Identifiable, Syncable, Equatable {
    var id: String
    var title: String
    var year: Int
    var author: ThreeWayAuthor
    var syncStatus: SyncStatus = .notSynced
}

/// Issue 26: `parkDownloaded(_:onConflict: .threeWay(…))` merges with the base the store keeps,
/// as a hand-written sync job uses it.
@Suite("Three-way merges of downloads")
struct ThreeWayMergeTests {
    /// The server's version `synced`, then a local edit of the body, then the server's edit of
    /// the title: both kept, nothing dropped, the merge to upload.
    func editBothSides(_ garage: Garage) throws -> DownloadReport {
        try garage.parkDownloaded([ThreeWayNote(id: "n1", title: "t0", body: "b0")])
        try garage.park(ThreeWayNote(id: "n1", title: "t0", body: "b1"))
        return try garage.parkDownloaded([ThreeWayNote(id: "n1", title: "t1", body: "b0")], onConflict: .threeWay(.fields()))
    }

    @Test func aPropertyChangedOnEachSideKeepsBoth() throws {
        let garage = try TestEngine.garage()
        let report = try editBothSides(garage)
        #expect(report.conflicts.map(\.resolution) == [.merged])
        #expect(report.conflicts.first?.discardedFields == [])
        let merged = try #require(try garage.retrieve(ThreeWayNote.self, identifier: "n1"))
        #expect(merged.title == "t1" && merged.body == "b1" && merged.syncStatus == .notSynced)
        // The merge is based on the download: the same download again changes nothing.
        let again = try garage.parkDownloaded([ThreeWayNote(id: "n1", title: "t1", body: "b0")], onConflict: .threeWay(.fields()))
        #expect(again.conflicts.first?.discardedFields == [])
        #expect(try garage.retrieve(ThreeWayNote.self, identifier: "n1")?.body == "b1")
    }

    @Test func anEncryptedStoreMergesWithItsEncryptedBase() throws {
        let garage = try TestEngine.garage()
        garage.dataEncryptionDelegate = TestEncryptor()
        _ = try editBothSides(garage)
        let merged = try #require(try garage.retrieve(ThreeWayNote.self, identifier: "n1"))
        #expect(merged.title == "t1" && merged.body == "b1")
        #expect(try garage.metadata(for: merged).isEncrypted)
    }

    /// A version the app marked `.synced` itself is the base of its next edit too; an object
    /// never synced has no base: every difference is a conflict, the policy decides, and the
    /// report names what it dropped.
    @Test func withoutABaseThePolicyDecidesAndSaysSo() throws {
        let garage = try TestEngine.garage()
        try garage.park(ThreeWayNote(id: "n1", title: "t0", body: "b0"))
        try garage.setSyncStatus(.synced, for: ThreeWayNote(id: "n1"))
        var note = try #require(try garage.retrieve(ThreeWayNote.self, identifier: "n1"))
        note.body = "b1"
        try garage.park(note)
        let report = try garage.parkDownloaded([ThreeWayNote(id: "n1", title: "t1", body: "b0")],
                                               onConflict: .threeWay(.fields(bothChanged: .serverWins)))
        // The base is the version the app marked synced: the body changed locally, the title on the server.
        let merged = try #require(try garage.retrieve(ThreeWayNote.self, identifier: "n1"))
        #expect(merged.title == "t1" && merged.body == "b1")
        #expect(report.conflicts.first?.discardedFields == [])

        let bare = try TestEngine.garage()
        try bare.park(ThreeWayNote(id: "n2", title: "mine", body: "mine"))   // never synced: no base
        let conflict = try bare.parkDownloaded([ThreeWayNote(id: "n2", title: "theirs", body: "mine")],
                                               onConflict: .threeWay(.fields()))
        #expect(conflict.conflicts.first?.discardedFields == ["title"])
        #expect(try bare.retrieve(ThreeWayNote.self, identifier: "n2")?.title == "mine")
    }

    /// A class model: the base, the local and the downloaded version are three instances (one
    /// decoder would give the base's instance for the local version too, and the local edit
    /// would be lost, silently).
    @Test func aClassModelMergesItsThreeVersions() throws {
        let garage = try TestEngine.garage()
        try garage.parkDownloaded([ThreeWayNotebook(id: "b1", name: "Work", color: "grey")])
        let notebook = try #require(try garage.retrieve(ThreeWayNotebook.self, identifier: "b1"))
        notebook.name = "Work stuff"
        try garage.park(notebook)
        let seen = Protected<Bool>(false)
        try garage.parkDownloaded([ThreeWayNotebook(id: "b1", name: "Work", color: "red")],
                                  onConflict: .threeWay(.custom { base, local, downloaded in
            seen.write { $0 = base !== local && base?.name == "Work" && local.name == "Work stuff" }
            return downloaded
        }))
        #expect(seen.read { $0 })
        // The custom merge took the server's version, as it is: `.synced`.
        #expect(try garage.metadata(ThreeWayNotebook.self, identifier: "b1")?.syncStatus == .synced)
        try garage.park(ThreeWayNotebook(id: "b1", name: "Work stuff", color: "red"))
        try garage.parkDownloaded([ThreeWayNotebook(id: "b1", name: "Work", color: "green")], onConflict: .threeWay(.fields()))
        let merged = try #require(try garage.retrieve(ThreeWayNotebook.self, identifier: "b1"))
        #expect(merged.name == "Work stuff" && merged.color == "green")
    }

    /// The stored base of `identifier`, as the rules keep it.
    func base(_ garage: Garage, _ identifier: String) throws -> String? {
        try garage.store.engine.write("read a base") { statements in
            try statements.record(ObjectKey(typeName: "ThreeWayNote", identifier: identifier))?.get().base
        }
    }

    /// A base reads like its row: an edit stored in the other encryption drops it (a plaintext
    /// base must not stay in an encrypted store, where the encryption pass would not see it).
    @Test func anEditInTheOtherEncryptionDropsTheBase() throws {
        let garage = try TestEngine.garage()
        try garage.parkDownloaded([ThreeWayNote(id: "n1", title: "secret plan")])
        try garage.park(ThreeWayNote(id: "n1", title: "secret plan, revised"))
        #expect(try base(garage, "n1")?.contains("secret plan") == true)
        garage.dataEncryptionDelegate = TestEncryptor()
        try garage.park(ThreeWayNote(id: "n1", title: "secret plan, encrypted"))
        #expect(try base(garage, "n1") == nil)
        // The merge goes without a base, and says what its policy dropped.
        let report = try garage.parkDownloaded([ThreeWayNote(id: "n1", title: "server's plan")], onConflict: .threeWay(.fields()))
        #expect(report.conflicts.first?.discardedFields == ["title"])
    }

    /// A claim gives its data as base to an object that was never on the server only: an edit
    /// that may be (a row kept from before bases existed) gets none, so the merge of its
    /// conflict is decided by the policy and reported, never taken as "no local change".
    @Test func aClaimGivesABaseToNewObjectsOnly() throws {
        let garage = try TestEngine.garage()
        try garage.park(ThreeWayNote(id: "new", title: "new"))
        try garage.parkDownloaded([ThreeWayNote(id: "old", title: "server")])
        try garage.park(ThreeWayNote(id: "old", title: "edited"))
        // As a store of format 5 holds it: may be on the server, no base.
        try garage.store.engine.write("forget a base") { statements in
            var row = try #require(try statements.record(ObjectKey(typeName: "ThreeWayNote", identifier: "old"))?.get())
            row.base = nil
            try statements.putRow(row)
        }
        let claim = try garage.claim(ThreeWayNote.self, limit: 10)
        #expect(Set(claim.identifiers) == ["new", "old"])
        #expect(try base(garage, "new")?.contains("new") == true)
        #expect(try base(garage, "old") == nil)
        try garage.release(claim)
        let report = try garage.parkDownloaded([ThreeWayNote(id: "old", title: "server, again")], onConflict: .threeWay(.fields()))
        #expect(report.conflicts.first?.discardedFields == ["title"])
        #expect(try garage.retrieve(ThreeWayNote.self, identifier: "old")?.title == "edited")
    }

    /// The base of a graph reads its children as they were too: a child edited with its parent
    /// is a local change, which the server's edit of another property doesn't revert.
    @Test func theBaseOfAGraphHoldsItsChildrensBases() throws {
        let garage = try TestEngine.garage()
        try garage.parkDownloaded([ThreeWayBook(id: "b1", title: "Emma", year: 1815, author: ThreeWayAuthor(id: "a1", name: "Ann"))])
        try garage.park(ThreeWayBook(id: "b1", title: "Emma", year: 1815, author: ThreeWayAuthor(id: "a1", name: "Jane Austen")))
        let report = try garage.parkDownloaded([ThreeWayBook(id: "b1", title: "Emma", year: 1816, author: ThreeWayAuthor(id: "a1", name: "Ann"))],
                                               onConflict: .threeWay(.fields()))
        #expect(report.conflicts.first { $0.object.identifier == "b1" }?.discardedFields == [])
        let merged = try #require(try garage.retrieve(ThreeWayBook.self, identifier: "b1"))
        #expect(merged.year == 1816 && merged.author.name == "Jane Austen")
    }

    /// An edit made during an upload is based on the upload, unless the rows' encryption was
    /// rewritten meanwhile (a rekey): the uploaded data is then in a retired key, and the base
    /// the rewrite left stays.
    @Test func anUploadRecordsItsBaseUnlessARewriteChangedIt() throws {
        let garage = try TestEngine.garage()
        try garage.park(ThreeWayNote(id: "n1", title: "first"))
        try garage.park(ThreeWayNote(id: "n2", title: "first"))
        let claim = try garage.claim(ThreeWayNote.self, limit: 10)
        // During the upload: n2's base is rewritten (as a rekey rewrites it), then both are edited.
        try garage.store.engine.write("rewrite a base") { statements in
            var row = try #require(try statements.record(ObjectKey(typeName: "ThreeWayNote", identifier: "n2"))?.get())
            row.base = "rewritten"
            try statements.putRow(row)
        }
        try garage.park(ThreeWayNote(id: "n1", title: "second"))
        try garage.park(ThreeWayNote(id: "n2", title: "second"))
        try garage.complete(claim)
        #expect(try base(garage, "n1")?.contains("first") == true)    // the upload
        #expect(try base(garage, "n2") == "rewritten")
    }

    /// A merge that throws keeps the local version and says why: one object can't stop a download.
    @Test func aFailedMergeKeepsTheLocalVersionAndSaysWhy() throws {
        struct Refusal: Error, CustomStringConvertible { var description: String { "can't merge this" } }
        let garage = try TestEngine.garage()
        try garage.parkDownloaded([ThreeWayNote(id: "n1", title: "t0"), ThreeWayNote(id: "n2", title: "t0")])
        try garage.park(ThreeWayNote(id: "n1", title: "local"))
        let report = try garage.parkDownloaded([ThreeWayNote(id: "n1", title: "server"), ThreeWayNote(id: "n2", title: "server")],
                                               onConflict: .threeWay(.custom { _, _, _ in throw Refusal() }))
        #expect(report.conflicts.map(\.mergeFailure) == ["can't merge this"])
        #expect(report.conflicts.first?.resolution == .keptLocal)
        #expect(report.applied.contains("n2"))
        #expect(try garage.retrieve(ThreeWayNote.self, identifier: "n1")?.title == "local")
        #expect(try garage.retrieve(ThreeWayNote.self, identifier: "n2")?.title == "server")
    }

    /// A merge equal to the server's version is the server's version: `.synced`, nothing to upload.
    @Test func aMergeThatIsTheServersVersionIsSynced() throws {
        let garage = try TestEngine.garage()
        try garage.parkDownloaded([ThreeWayNote(id: "n1", title: "t0")])
        try garage.park(ThreeWayNote(id: "n1", title: "t1"))
        let report = try garage.parkDownloaded([ThreeWayNote(id: "n1", title: "t1")], onConflict: .threeWay(.fields()))
        #expect(report.conflicts.map(\.resolution) == [.tookDownloaded])
        #expect(try garage.count(ThreeWayNote.self, withStatus: .synced) == 1)
    }

    /// A merge that comes to the server's version names the local changes it dropped.
    @Test func aMergeIntoTheServersVersionSaysWhatItDropped() throws {
        let garage = try TestEngine.garage()
        try garage.parkDownloaded([ThreeWayNote(id: "n1", title: "t0")])
        try garage.park(ThreeWayNote(id: "n1", title: "mine"))
        let report = try garage.parkDownloaded([ThreeWayNote(id: "n1", title: "theirs")],
                                               onConflict: .threeWay(.fields(bothChanged: .serverWins)))
        #expect(report.conflicts.first?.resolution == .tookDownloaded)
        #expect(report.conflicts.first?.discardedFields == ["title"])
        #expect(try garage.metadata(ThreeWayNote.self, identifier: "n1")?.syncStatus == .synced)
    }

    /// A custom merge gets the base, the local and the downloaded version.
    @Test func aCustomMergeGetsTheBase() throws {
        let garage = try TestEngine.garage()
        try garage.parkDownloaded([ThreeWayNote(id: "n1", title: "base")])
        try garage.park(ThreeWayNote(id: "n1", title: "local"))
        let seen = Protected<[String]>([])
        try garage.parkDownloaded([ThreeWayNote(id: "n1", title: "downloaded")], onConflict: .threeWay(.custom { base, local, downloaded in
            seen.write { $0 = [base?.title ?? "nil", local.title, downloaded.title] }
            return ThreeWayNote(id: "n1", title: "custom")
        }))
        #expect(seen.read { $0 } == ["base", "local", "downloaded"])
        #expect(try garage.retrieve(ThreeWayNote.self, identifier: "n1")?.title == "custom")
    }
}
