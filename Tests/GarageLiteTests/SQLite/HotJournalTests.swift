import Foundation
import GRDB
import Testing
import GarageLite

// A process killed while it wrote a file in SQLite's rollback-journal mode leaves a hot journal
// next to it. A GarageLite store is in that mode only while it is being created (its first
// write switches it to WAL mode); CrashSafetyTests found such files, which GarageLite refused
// to open, by killing workers that were creating a store.
@Suite("Hot journals", .firstPassOnly)
struct HotJournalTests {
    /// A new store's first write, the switch to WAL mode, runs under a rollback journal: a
    /// process killed in it leaves the file's first page and a hot journal. The store opens
    /// (as a new, empty one: rolling the journal back empties the file) instead of being
    /// refused because a read-only look at it can't roll the journal back.
    @Test func aStoreKilledWhileBeingCreatedOpensEmpty() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("created.sqlite")
        try Self.leaveHotJournal(at: path, restoringAnEmptyFile: true) { db in
            try db.execute(sql: "PRAGMA journal_mode = WAL")
        }

        let garage = try Garage(path: path)
        #expect(try garage.count(Branch.self) == 0)
        #expect(!FileManager.default.fileExists(atPath: path + "-journal"))
        try garage.park(Branch(id: "trunk", leaves: 3))
        #expect(try garage.retrieve(Branch.self, identifier: "trunk") == Branch(id: "trunk", leaves: 3))
    }

    /// Another application's database with a hot journal is rolled back, as SQLite does for
    /// anyone, and still refused, with its data intact.
    @Test func anotherApplicationsDatabaseWithAHotJournalIsStillRefused() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("notes.sqlite")
        try Self.leaveHotJournal(at: path, restoringAnEmptyFile: false) { db in
            try db.execute(sql: "CREATE TABLE note (text TEXT); INSERT INTO note VALUES ('kept')")
        }

        #expect(throws: GarageError.notAGarageStore(path: path, reason: "it is an SQLite database of another application")) {
            try Garage(path: path)
        }
        let notes = try DatabaseQueue(path: path).read { db in try String.fetchAll(db, sql: "SELECT text FROM note") }
        #expect(notes == ["kept"])
    }

    /// Runs `write` on a new database at `path` (in SQLite's default rollback-journal mode),
    /// then leaves what a process killed in its next transaction leaves: the file as written,
    /// and a hot journal (a valid header, no page records) next to it. Rolling the journal
    /// back empties the file, or keeps it as it is.
    private static func leaveHotJournal(
        at path: String, restoringAnEmptyFile: Bool, _ write: (Database) throws -> Void
    ) throws {
        try DatabaseQueue(path: path).writeWithoutTransaction(write)
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        let pageCount = UInt32(((attributes[.size] as? Int) ?? 0) / 4096)
        // The journal header (sqlite.org/fileformat.html, "The Rollback Journal"): magic,
        // record count, checksum nonce, page count before the transaction, sector and page size.
        var journal: [UInt8] = [0xD9, 0xD5, 0x05, 0xF9, 0x20, 0xA1, 0x63, 0xD7]
        for field: UInt32 in [0, 0x2545_F491, restoringAnEmptyFile ? 0 : pageCount, 512, 4096] {
            journal += withUnsafeBytes(of: field.bigEndian, Array.init)
        }
        journal += [UInt8](repeating: 0, count: 512 - journal.count)
        try Data(journal).write(to: URL(fileURLWithPath: path + "-journal"))

        // The state this reproduces: a read-only connection can't read the file.
        var configuration = Configuration()
        configuration.readonly = true
        let error = #expect(throws: DatabaseError.self) {
            try DatabaseQueue(path: path, configuration: configuration).read { db in
                try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM sqlite_master")
            }
        }
        #expect(error?.extendedResultCode == .SQLITE_READONLY_ROLLBACK)
        #expect(pageCount > 0)
    }
}
