import Foundation
import Testing
@testable import GarageLite

/// Issue 44: a device forgets the deletions the server has once nothing references them any
/// more (issue 24 noted they were kept for ever): `Garage.purgeSyncedTombstones()`, and the
/// sync engine's call of it. A deletion still to upload, or one a referrer still reads, stays.
@Suite("Synced tombstones are purged once no referrer needs them")
struct TombstonePurgeTests {
    /// A board of the app's own, not synced, that pins an engine note.
    struct PurgeBoard: Codable, Identifiable, Sendable {
        var id: String
        var pinned: EngineNote?
    }

    /// Whether the table holds a row of `key`, a tombstone too.
    static func holdsRow(_ garage: Garage, _ typeName: String, _ identifier: String) throws -> Bool {
        try garage.store.allStoredRows().contains { $0.key == ObjectKey(typeName: typeName, identifier: identifier) }
    }

    @Test func aDownloadedDeletionIsForgottenOnceItsReferrerDropsIt() throws {
        let garage = try TestEngine.garage()
        try garage.parkDownloaded([RNotebook(id: "nb1", title: "Shopping", notes: [RNote(id: "n1", text: "Milk"), RNote(id: "n2", text: "Eggs")])])
        #expect(try garage.deleteDownloaded(RNote.self, identifiers: ["n2"]).deleted == ["n2"])
        // The notebook still names n2: its tombstone stays, and the notebook reads without it.
        #expect(try garage.purgeSyncedTombstones() == 0)
        #expect(try Self.holdsRow(garage, "RNote", "n2"))
        #expect(try garage.retrieve(RNotebook.self, identifier: "nb1")?.notes.map(\.id) == ["n1"])
        // The server's notebook without n2 arrives: nothing names n2 any more.
        let notebook = try #require(try garage.retrieve(RNotebook.self, identifier: "nb1"))
        try garage.parkDownloaded([notebook])
        #expect(try garage.purgeSyncedTombstones() == 1)
        #expect(try !Self.holdsRow(garage, "RNote", "n2"))
        #expect(try garage.retrieve(RNotebook.self, identifier: "nb1")?.notes.map(\.id) == ["n1"])
        #expect(try garage.retrieve(RNote.self, identifier: "n2") == nil)
        #expect(try garage.check().isOK)
        #expect(try garage.purgeSyncedTombstones() == 0)
    }

    @Test func anUploadedDeletionIsForgottenOnceNothingReferencesIt() async throws {
        let garage = try TestEngine.garage()
        let author = Author(id: UUID(), name: "Sappho")
        try await garage.park(Book(id: 1, title: "Fragments", author: author))
        try await garage.complete(try await garage.claim(Author.self, limit: 10))
        try await garage.delete(author, rule: .rowOnly)
        // Still to upload: it stays, whoever references it.
        #expect(try await garage.purgeSyncedTombstones() == 0)
        let claim = try await garage.claim(Author.self, limit: 10)
        #expect(claim.deletions == [author.id.uuidString])
        // Claimed: it stays.
        #expect(try await garage.purgeSyncedTombstones() == 0)
        #expect(try await garage.complete(claim).deletionsUploaded == [author.id.uuidString])
        // The server has it, but the book still names the author: it stays, `.synced`.
        #expect(try Self.holdsRow(garage, "Author", author.id.uuidString))
        #expect(try await garage.purgeSyncedTombstones() == 0)
        try await garage.park(Book(id: 1, title: "Fragments", author: Author(id: UUID(), name: "Anonymous")))
        #expect(try await garage.purgeSyncedTombstones() == 1)
        #expect(try !Self.holdsRow(garage, "Author", author.id.uuidString))
        #expect(try await garage.retrieve(Book.self, identifier: 1)?.author.name == "Anonymous")
        #expect(try await garage.check().isOK)
    }

    @Test func aDeletionNotYetUploadedStays() throws {
        let garage = try TestEngine.garage()
        try garage.park(RNote(id: "n1", text: "Milk"))
        try garage.complete(try garage.claim(RNote.self, limit: 10))
        try garage.delete(RNote.self, identifier: "n1")
        #expect(try garage.purgeSyncedTombstones() == 0)
        #expect(try garage.claim(RNote.self, limit: 10).deletions == ["n1"])
    }

    static func engine(_ server: ScriptedServer, _ garage: Garage, interval: TimeInterval?) -> SyncEngine {
        var configuration = SyncEngineTests.quick
        configuration.tombstonePurgeInterval = interval
        return SyncEngine(garage: garage, transport: ScriptedTransport(server: server), types: [.of(EngineNote.self)],
                          configuration: configuration)
    }

    @Test func theEngineForgetsTheDeletionsNothingReferences() async throws {
        let directory = try TemporaryDirectory()
        let server = ScriptedServer()
        let garage = try TestEngine.garage(path: directory.path("device.garage"))
        let engine = Self.engine(server, garage, interval: 0)
        try await garage.park(PurgeBoard(id: "b", pinned: EngineNote(id: "n1", a: "pinned")))
        try await garage.park(EngineNote(id: "n2", a: "alone"))
        #expect(try await engine.sync().tombstonesPurged == 0)
        await server.delete("n1")
        await server.delete("n2")
        // n2 goes at once; n1 stays while the board pins it.
        #expect(try await engine.sync().tombstonesPurged == 0)
        #expect(try Self.holdsRow(garage, "EngineNote", "n1"))
        #expect(try !Self.holdsRow(garage, "EngineNote", "n2"))
        // The board reads (an optional reference to a deletion reads `nil`).
        let board = try #require(try await garage.retrieve(PurgeBoard.self, identifier: "b"))
        #expect(board.pinned == nil)
        try await garage.park(PurgeBoard(id: "b", pinned: nil))
        #expect(try await engine.sync().tombstonesPurged == 1)
        #expect(try !Self.holdsRow(garage, "EngineNote", "n1"))
        #expect(engine.status.lastReport?.tombstonesPurged == 1)
    }

    @Test func theEnginePurgesAtMostOncePerIntervalAndNeverWithoutOne() async throws {
        let directory = try TemporaryDirectory()
        for interval in [3600, nil] as [TimeInterval?] {
            let server = ScriptedServer()
            let garage = try TestEngine.garage(path: directory.path("device-\(interval ?? 0).garage"))
            let engine = Self.engine(server, garage, interval: interval)
            try await garage.park(PurgeBoard(id: "b", pinned: EngineNote(id: "n1", a: "pinned")))
            _ = try await engine.sync()
            await server.delete("n1")
            _ = try await engine.sync()
            try await garage.park(PurgeBoard(id: "b", pinned: nil))
            // The first sync purged (or none did): the next one doesn't.
            #expect(try await engine.sync().tombstonesPurged == 0)
            #expect(try Self.holdsRow(garage, "EngineNote", "n1"))
            #expect(try await garage.purgeSyncedTombstones() == 1)
        }
    }
}
