import Foundation
@testable import GarageLite
import Testing

/// Downloads never overwrite an edit the server has not seen: each conflict is decided inside
/// the transaction that applies the download.
@Suite("Downloads")
struct DownloadTests {
    static let austen = Author(id: UUID(uuidString: "00000000-0000-0000-0000-00000000000A")!, name: "Austen")

    static func book(_ id: Int, _ title: String, status: SyncStatus = .notSynced) -> Book {
        Book(id: id, title: title, author: austen, syncStatus: status)
    }

    static func stored(_ garage: Garage, _ id: Int) throws -> (title: String, status: SyncStatus)? {
        try garage.retrieve(Book.self, identifier: id).map { ($0.title, $0.syncStatus) }
    }

    @Test func newObjectsAndTheirReferencesAreParkedSynced() throws {
        let garage = try TestEngine.garage()
        let report = try garage.parkDownloaded([Self.book(1, "Emma"), Self.book(2, "Persuasion")])
        #expect(report.applied == ["1", "2"])
        #expect(report.conflicts.isEmpty)
        #expect(try garage.count(Book.self, withStatus: .synced) == 2)
        #expect(try garage.syncStatus(for: Self.austen) == .synced)
        #expect(try garage.claim(Book.self, limit: 10).isEmpty)
    }

    @Test func aSyncedLocalVersionIsReplacedAndStaysSynced() throws {
        let garage = try TestEngine.garage()
        try garage.parkDownloaded([Self.book(1, "Emma")])
        try garage.parkDownloaded([Self.book(1, "Emma, second edition")])
        #expect(try Self.stored(garage, 1)?.title == "Emma, second edition")
        #expect(try Self.stored(garage, 1)?.status == .synced)
        #expect(try garage.metadata(Book.self, identifier: 1)?.revision == 2)
    }

    @Test func aLocalEditIsKeptByDefault() throws {
        let garage = try TestEngine.garage()
        try garage.parkDownloaded([Self.book(1, "Emma")])
        var edited = try #require(try garage.retrieve(Book.self, identifier: 1))
        edited.title = "Emma (my notes)"
        try garage.park(edited)                               // .notSynced: an edit to upload

        let report = try garage.parkDownloaded([Self.book(1, "Emma, second edition"), Self.book(2, "Persuasion")])
        #expect(report.applied == ["2"])
        #expect(report.conflicts == [DownloadConflict(object: ObjectKey(typeName: "Book", identifier: "1"),
                                                      localStatus: .notSynced, wasClaimed: false, resolution: .keptLocal)])
        #expect(try Self.stored(garage, 1)?.title == "Emma (my notes)")
        #expect(try Self.stored(garage, 1)?.status == .notSynced)
        #expect(try garage.claim(Book.self, limit: 10).identifiers == ["1"])
    }

    @Test func takeDownloadedReplacesTheEditAndAClaimOnItCompletesAsEdited() throws {
        let garage = try TestEngine.garage()
        try garage.park(Self.book(1, "Emma (mine)"))
        let claim = try garage.claim(Book.self, limit: 10)
        let report = try garage.parkDownloaded([Self.book(1, "Emma (theirs)")], onConflict: .takeDownloaded)
        // The author, parked locally with the book and never uploaded, keeps its version.
        #expect(report.conflicts.map(\.description) == ["Book(1): took the server's version",
                                                         "Author(\(Self.austen.id)): kept the local edit"])
        #expect(report.conflicts.first?.wasClaimed == true)
        #expect(try Self.stored(garage, 1)?.title == "Emma (theirs)")
        // The job uploaded "mine", which the server's version replaced: it must not be marked
        // synced as if the server had the stored content from that upload.
        #expect(try garage.complete(claim).notSynced == ["1"])
        #expect(try Self.stored(garage, 1)?.status == .notSynced)
    }

    @Test func mergeParksTheMergedObjectToBeUploaded() throws {
        let garage = try TestEngine.garage()
        try garage.park(Self.book(1, "Emma"))
        let report = try garage.parkDownloaded([Self.book(1, "Emma, annotated")], onConflict: .merge { local, downloaded in
            var merged = downloaded
            merged.title = "\(downloaded.title) + \(local.title)"
            return merged
        })
        #expect(report.conflicts.filter { $0.object.typeName == "Book" }.map(\.resolution) == [.merged])
        #expect(try Self.stored(garage, 1)?.title == "Emma, annotated + Emma")
        #expect(try Self.stored(garage, 1)?.status == .notSynced)
    }

    @Test func aReferencedObjectKeepsItsLocalEdit() throws {
        let garage = try TestEngine.garage()
        try garage.parkDownloaded([Self.book(1, "Emma")])
        var renamed = Self.austen
        renamed.name = "Jane Austen"
        renamed.syncStatus = .notSynced
        try garage.park(renamed)
        try garage.parkDownloaded([Self.book(1, "Emma")], onConflict: .takeDownloaded)
        #expect(try garage.retrieve(Author.self, identifier: Self.austen.id)?.name == "Jane Austen")
        #expect(try garage.syncStatus(for: Self.austen) == .notSynced)
    }

    /// A user's own attempt (read the status, then park) lost an edit parked in between. An
    /// edit parked concurrently with downloads of the same object always survives, to be
    /// uploaded: either the download came first and the edit replaced it, or the edit came
    /// first and the download kept it.
    @Test func anEditParkedDuringDownloadsIsNeverLost() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("garage.sqlite")
        let app = try TestEngine.garage(path: path), job = try TestEngine.garage(path: path)
        for round in 0..<100 {
            try await job.parkDownloaded([Self.book(1, "server \(round)")])
            async let edit = app.park(Self.book(1, "edit \(round)"))
            async let download = job.parkDownloaded([Self.book(1, "server \(round) again")])
            _ = try await (edit, download)
            let stored = try #require(try await app.retrieve(Book.self, identifier: 1).map { (title: $0.title, status: $0.syncStatus) })
            #expect(stored.title == "edit \(round)", "round \(round)")
            #expect(stored.status == .notSynced, "round \(round)")
        }
    }

    /// An edit in a transaction, or unsaved, is written after a download the same code makes
    /// meanwhile: the download must leave it an edit to upload, whatever the resolution.
    @Test(arguments: [true, false])
    func pendingEditsAreKeptAsConflicts(inTransaction: Bool) throws {
        let garage = try TestEngine.garage()
        try garage.parkDownloaded([Self.book(1, "Emma"), Self.book(2, "Persuasion")])
        var reports: [DownloadReport] = []
        let edit = {
            var one = try #require(try garage.retrieve(Book.self, identifier: 1))
            one.title = "Emma (mine)"
            try garage.park(one)                              // still says .synced
            var two = try #require(try garage.retrieve(Book.self, identifier: 2))
            two.title = "Persuasion (mine)"
            try garage.park(two)
            reports.append(try garage.deleteDownloaded(Book.self, identifiers: [1], onConflict: .takeDownloaded))
            reports.append(try garage.parkDownloaded([Self.book(2, "Persuasion (theirs)")], onConflict: .takeDownloaded))
        }
        if inTransaction {
            try garage.transaction { () throws in try edit() }
        } else {
            garage.isAutosaveEnabled = false
            try edit()
            try garage.save()
        }
        #expect(reports.map(\.deleted) == [[], []])
        #expect(reports.map(\.applied) == [[], []])
        #expect(reports.flatMap(\.conflicts).filter { $0.object.typeName == "Book" }.map(\.resolution) == [.keptLocal, .keptLocal])
        #expect(try Self.stored(garage, 1)?.title == "Emma (mine)")
        #expect(try Self.stored(garage, 1)?.status == .notSynced)
        #expect(try Self.stored(garage, 2)?.title == "Persuasion (mine)")
        #expect(try Self.stored(garage, 2)?.status == .notSynced)
    }

    @Test func deletionsFromTheServerKeepLocalEditsUnlessTold() async throws {
        let garage = try TestEngine.garage()
        try await garage.parkDownloaded([Self.book(1, "Emma"), Self.book(2, "Persuasion"), Self.book(3, "Sanditon")])
        try await garage.park(Self.book(3, "Sanditon (finished)"))
        let report = try await garage.deleteDownloaded(Book.self, identifiers: [1, 3, 9])
        #expect(report.deleted == ["1"])
        #expect(report.conflicts.map(\.resolution) == [.keptLocal])
        #expect(try await garage.identifiers(of: Book.self) == ["2", "3"])

        let forced = try await garage.deleteDownloaded(Book.self, identifiers: [2, 3], onConflict: .takeDownloaded)
        #expect(forced.deleted == ["2", "3"])
        #expect(forced.conflicts.map(\.resolution) == [.tookDownloaded])
        #expect(try await garage.count(Book.self) == 0)
    }

    /// A deletion from the server never ends a claim: a tombstone a job holds stays, so the
    /// local deletion is still uploaded after that job's upload (found by the sync stress test).
    @Test func aClaimedTombstoneOutlivesADownloadedDeletion() throws {
        let garage = try TestEngine.garage()
        try garage.park(Memo(id: "m1", text: "v1"))
        let uploading = try garage.claim(Memo.self, limit: 10)          // uploads m1 v1
        try garage.delete(Memo.self, identifier: "m1")                  // a tombstone, still claimed
        let report = try garage.deleteDownloaded(Memo.self, identifiers: ["m1"])
        #expect(report.deleted.isEmpty)
        #expect(report.conflicts == [DownloadConflict(
            object: ObjectKey(typeName: "Memo", identifier: "m1"), localStatus: .notSynced, wasClaimed: true,
            resolution: .keptLocal)])
        #expect(try garage.claim(Memo.self, limit: 10).isEmpty)          // still the first job's
        let completed = try garage.complete(uploading)
        #expect(completed.notSynced == ["m1"])                          // deleted meanwhile
        // v1 may have reached the server after its deletion: the deletion goes up again.
        #expect(try garage.claim(Memo.self, limit: 10).deletions == ["m1"])
    }

    /// Taking the server's deletion of an object a job holds deletes it as the app would: a
    /// tombstone under the same claim, so no second job claims it while the first uploads.
    @Test func takingADownloadedDeletionOfAClaimedObjectKeepsTheClaim() throws {
        let garage = try TestEngine.garage()
        try garage.park(Memo(id: "m1", text: "v1"))
        try garage.complete(try garage.claim(Memo.self, limit: 10))
        try garage.park(Memo(id: "m1", text: "v2"))
        let first = try garage.claim(Memo.self, limit: 10)
        let report = try garage.deleteDownloaded(Memo.self, identifiers: ["m1"], onConflict: .takeDownloaded)
        #expect(report.deleted == ["m1"] && report.conflicts.map(\.resolution) == [.tookDownloaded])
        #expect(try garage.retrieve(Memo.self, identifier: "m1") == nil)
        try garage.park(Memo(id: "m1", text: "v3"))                     // re-created meanwhile
        #expect(try garage.claim(Memo.self, limit: 10).isEmpty)          // not while the first job holds it
        #expect(try garage.complete(first).notSynced == ["m1"])
        #expect(try garage.claim(Memo.self, limit: 10).objects.map(\.text) == ["v3"])
    }

    @Test func nonSendableModelsDownloadFromAsyncCode() async throws {
        let garage = try TestEngine.garage()
        try await garage.park(Sailor(name: "Anne", rank: "captain"))
        let report = try await garage.parkDownloaded([Sailor(name: "Anne", rank: "commodore")], onConflict: .merge { local, downloaded in
            let merged = Sailor(name: local.name, rank: "\(local.rank) → \(downloaded.rank)")
            return merged
        })
        #expect(report.conflicts.map(\.resolution) == [.merged])
        let anne = try #require(try await garage.retrieve(Sailor.self, identifier: "Anne"))
        #expect(anne.rank == "captain → commodore")
        #expect(anne.syncStatus == .notSynced)
    }
}
