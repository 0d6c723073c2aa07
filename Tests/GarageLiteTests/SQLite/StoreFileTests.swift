import Foundation
import Testing
@testable import GarageLite
import GarageLiteSQLite

@Suite("Opening store files", .firstPassOnly)
struct StoreFileTests {
    @Test func createsAndReopensAStoreFile() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("garage.sqlite")
        do {
            let garage = try Garage(path: path)
            #expect(garage.path == path)
            try garage.park(Counter(id: 1, value: 1))
        }
        let reopened = try Garage(url: URL(fileURLWithPath: path))
        #expect(try reopened.retrieve(Counter.self, identifier: 1)?.value == 1)
        // The file records its format and is in WAL mode.
        let file = try SQLiteFile(path)
        let (version, applicationID, journalMode) = (try file.int("PRAGMA user_version"),
                                                     try file.int("PRAGMA application_id").map(Int32.init),
                                                     try file.string("PRAGMA journal_mode"))
        #expect(version == Schema.formatVersion)
        #expect(applicationID == Schema.applicationID)
        #expect(journalMode == "wal")
    }

    @Test func theSyncQueryIsARangeScanOfAnIndex() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("garage.sqlite")
        _ = try Garage(path: path)
        let plan = try SQLiteFile(path).queryPlan("""
            SELECT * FROM garage_object WHERE type = 'T' AND syncStatus = 1
            ORDER BY modificationDate
            """)
        #expect(plan.contains { $0.contains("USING INDEX garage_object_sync (syncStatus=? AND type=?)") })
        #expect(!plan.contains { $0.contains("TEMP B-TREE") })
    }

    @Test func aMissingFolderIsAClearError() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("nowhere/garage.sqlite")
        #expect(throws: GarageError.cannotOpenStore(
            path: path, reason: "the folder \(directory.path("nowhere")) does not exist; create it first")) {
            try Garage(path: path)
        }
    }

    @Test func aFileThatIsNotADatabaseIsRefusedUntouched() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("notes.txt")
        let bytes = Data(String(repeating: "not a database at all\n", count: 20).utf8)
        try bytes.write(to: URL(fileURLWithPath: path))
        #expect(throws: GarageError.notAGarageStore(path: path, reason: "it is not an SQLite database")) {
            try Garage(path: path)
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == bytes)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.url.path) == ["notes.txt"])
    }

    @Test func anotherSQLiteDatabaseIsRefusedUntouched() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("other.sqlite")
        try SQLiteFile(path).execute("CREATE TABLE t (x); INSERT INTO t VALUES (1)")
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        #expect(throws: GarageError.notAGarageStore(
            path: path, reason: "it is an SQLite database of another application")) {
            try Garage(path: path)
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
    }

    @Test func aStoreOfANewerFormatIsRefusedUntouched() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("future.sqlite")
        do {
            let garage = try Garage(path: path)
            try garage.park(Counter(id: 1, value: 1))
        }
        do {
            let file = try SQLiteFile(path)
            try file.executeWithoutTransaction("PRAGMA user_version = \(Schema.formatVersion + 1)")
            try file.checkpoint()
        }
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        #expect(throws: GarageError.newerFormatVersion(path: path, version: Schema.formatVersion + 1,
                                                       supportedVersion: Schema.formatVersion)) {
            try Garage(path: path)
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
    }

    @Test func anEmptyFileBecomesAStore() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("empty.sqlite")
        #expect(FileManager.default.createFile(atPath: path, contents: Data()))
        let garage = try Garage(path: path)
        try garage.park(Counter(id: 1, value: 1))
        #expect(try garage.count(Counter.self) == 1)
    }

    @Test func aFolderIsNotAStore() throws {
        let directory = try TemporaryDirectory()
        #expect(throws: GarageError.cannotOpenStore(path: directory.url.path, reason: "it is a folder, not a file")) {
            try Garage(path: directory.url.path)
        }
    }

    @Test func namedGaragesLiveInApplicationSupport() throws {
        let name = "GarageLiteTests-\(UUID().uuidString)"
        let garage = try Garage(named: name)
        let path = try #require(garage.path)
        defer {
            for suffix in ["", "-wal", "-shm"] {
                try? FileManager.default.removeItem(atPath: path + suffix)
            }
        }
        #expect(path.hasSuffix("/\(name).sqlite"))
        let folder = try #require(FileManager.default.urls(for: .applicationSupportDirectory, in: .userDomainMask).first)
        #expect(path == folder.appendingPathComponent("\(name).sqlite").path)
        try garage.park(Counter(id: 1, value: 1))
        #expect(try Garage(named: name).count(Counter.self) == 1)
    }

    @Test func errorsSayWhatToDo() {
        let error = GarageError.newerFormatVersion(path: "/tmp/x.sqlite", version: 2, supportedVersion: 1)
        #expect(error.description.contains("/tmp/x.sqlite"))
        #expect(error.description.contains("Update GarageLite"))
        #expect(error.localizedDescription == error.description)
    }
}

@Suite("Opening one new store from many places", .firstPassOnly)
struct ConcurrentOpeningTests {
    @Test func severalGaragesCreateTheSameNewFileAtOnce() throws {
        let directory = try TemporaryDirectory()
        let failures = Protected<[String]>([])
        for round in 0..<25 {
            let path = directory.path("fresh-\(round).sqlite")
            DispatchQueue.concurrentPerform(iterations: 4) { index in
                do {
                    let garage = try Garage(path: path)
                    try garage.park(Counter(id: index, value: round))
                } catch {
                    failures.write { $0.append("round \(round), opener \(index): \(error)") }
                }
            }
            #expect(try Garage(path: path).count(Counter.self) == 4)
        }
        #expect(failures.read { $0 } == [])
    }
}
