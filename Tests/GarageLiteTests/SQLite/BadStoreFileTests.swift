import Foundation
import Testing
@testable import GarageLite

// Bad input, from issue 5, in the store file itself: files that are no store, damaged,
// truncated, unwritable or full, and columns of the wrong type, each written through SQLite
// below the library. Moved from Reliability/BadInputTests.swift (issue 25).

@Suite("Bad input: store files", .firstPassOnly)
struct BadStoreFileTests {
    @Test func aFileThatIsNotADatabaseIsRefusedAndLeftUntouched() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("notes.sqlite")
        let bytes = Data(String(repeating: "shopping list: eggs, milk\n", count: 40).utf8)
        try bytes.write(to: URL(fileURLWithPath: path))
        let error = try #require(throws: GarageError.self) { try Garage(path: path) }
        #expect(error == .notAGarageStore(path: path, reason: "it is not an SQLite database"))
        expect(error, says: [path, "not a GarageLite store", "left untouched", "Open another path"])
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == bytes)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.url.path) == ["notes.sqlite"])
        // Other stores, in the same folder and process, are unaffected.
        let other = try Garage(path: directory.path("other.sqlite"))
        try other.park(Counter(id: 1, value: 1))
        #expect(try other.retrieve(Counter.self, identifier: 1)?.value == 1)
    }

    @Test func aFileWithAnSQLiteHeaderAndGarbageIsRefused() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("garbage.sqlite")
        var bytes = Data("SQLite format 3\0".utf8)
        bytes.append(contentsOf: (0..<8_192).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) })
        try bytes.write(to: URL(fileURLWithPath: path))
        let error = try #require(throws: GarageError.self) { try Garage(path: path) }
        switch error {
        case let .notAGarageStore(errorPath, _), let .damagedStore(errorPath, _, _):
            #expect(errorPath == path)
        default:
            Issue.record("unexpected error \(error)")
        }
        expect(error, says: [path])
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == bytes)
    }

    @Test func aTruncatedStoreIsReportedDamagedAndLeftUntouched() throws {
        let directory = try TemporaryDirectory()
        let path = try closedStore(in: directory, counters: 2_000)
        let size = try #require(try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int)
        #expect(size > 16 * 4_096, "the store should span many pages")
        let handle = try #require(FileHandle(forWritingAtPath: path))
        try handle.truncate(atOffset: UInt64(size / 2))
        try handle.close()
        let truncated = try Data(contentsOf: URL(fileURLWithPath: path))

        let error = try #require(throws: GarageError.self) {
            let garage = try Garage(path: path)
            _ = try garage.retrieveAll(Counter.self)
        }
        guard case let .damagedStore(errorPath, _, reason) = error else {
            Issue.record("expected damagedStore, got \(error)")
            return
        }
        #expect(errorPath == path)
        #expect(reason.contains("malformed"))
        expect(error, says: [path, "damaged", "and wrote nothing", "Restore the file from a backup"])
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == truncated)
    }

    @Test func aStoreOverwrittenInTheMiddleFailsWhereItIsDamagedOnly() throws {
        let directory = try TemporaryDirectory()
        let path = try closedStore(in: directory, counters: 2_000)
        // Overwrite the page that holds counter 1000's row.
        var bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        let row = try #require(bytes.range(of: Data(#"{"id":1000,"value":10000}"#.utf8)))
        let page = row.lowerBound / 4_096 * 4_096
        // Which counters share the page depends on the order the rows were inserted in, which
        // varies between processes.
        let damaged = Self.counterIdentifiers(in: bytes[page..<(page + 4_096)])
        bytes.replaceSubrange(page..<(page + 4_096), with: Data(repeating: 0xFF, count: 4_096))
        try bytes.write(to: URL(fileURLWithPath: path))

        let garage = try Garage(path: path)
        let error = try #require(throws: GarageError.self) { try garage.retrieve(Counter.self, identifier: 1_000) }
        guard case let .damagedStore(errorPath, operation, reason) = error else {
            Issue.record("expected damagedStore, got \(error)")
            return
        }
        #expect(errorPath == path && operation == "retrieve Counter(1000)")
        #expect(reason.contains("malformed"))
        expect(error, says: [path, "damaged", "Restore the file from a backup"])
        // Objects on intact pages are still retrieved: the first and the last counter that are
        // not on the damaged one.
        #expect(damaged.contains(1_000))
        let intact = (1...2_000).filter { !damaged.contains($0) }
        let first = try #require(intact.first), last = try #require(intact.last)
        #expect(try garage.retrieve(Counter.self, identifier: first)?.value == first * 10)
        #expect(try garage.retrieve(Counter.self, identifier: last)?.value == last * 10)
        // A scan of every row meets the damaged page; the lossy variant can't step over it either.
        #expect(throws: GarageError.damagedStore(path: path, operation: "retrieve all Counter", reason: reason)) {
            _ = try garage.retrieveAll(Counter.self).count
        }
        #expect(throws: GarageError.damagedStore(path: path, operation: "retrieve all Counter", reason: reason)) {
            _ = try garage.retrieveAllLossy(Counter.self).objects.count
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == bytes)
    }

    /// The identifiers of the counters whose rows `bytes` hold (`{"id":N,`), whole or cut.
    static func counterIdentifiers(in bytes: Data) -> Set<Int> {
        // A 0xFF-filled page holds none; a row cut at the page's start still names its id.
        let text = String(decoding: bytes, as: UTF8.self)
        var identifiers = Set<Int>()
        for part in text.components(separatedBy: #"{"id":"#).dropFirst() {
            if let id = Int(part.prefix { $0.isNumber }) { identifiers.insert(id) }
        }
        return identifiers
    }

    @Test func aStoreTruncatedInsideItsHeaderIsNotADatabase() throws {
        let directory = try TemporaryDirectory()
        let path = try closedStore(in: directory, counters: 10)
        let handle = try #require(FileHandle(forWritingAtPath: path))
        try handle.truncate(atOffset: 60)
        try handle.close()
        #expect(throws: GarageError.notAGarageStore(path: path, reason: "it is not an SQLite database")) {
            try Garage(path: path)
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)).count == 60)
    }

    /// A field of the header that SQLite misreads rather than reports, damaged, and what its
    /// error must say (issue 42).
    struct HeaderDamage: Sendable, CustomTestStringConvertible {
        var offset: UInt64
        var bytes: [UInt8]
        var says: [String]
        var testDescription: String { "bytes \(bytes) at \(offset)" }
    }

    static let headerDamages = [
        // SQLite opened this one for reading only: "attempt to write a readonly database".
        HeaderDamage(offset: 18, bytes: [3], says: ["byte 18 of its header (SQLite's write version) is 3",
                                                    "for reading only", "writing 2 back at offset 18 repairs"]),
        HeaderDamage(offset: 18, bytes: [0], says: ["byte 18", "is 0", "no such version", "writing 2 back at offset 18"]),
        HeaderDamage(offset: 19, bytes: [7], says: ["byte 19 of its header (SQLite's read version) is 7",
                                                    "not a database", "writing 2 back at offset 19"]),
        HeaderDamage(offset: 16, bytes: [0x20, 0x10], says: ["bytes 16 and 17 of its header (the size of its pages) read 8208"]),
        HeaderDamage(offset: 20, bytes: [8], says: ["byte 20 of its header", "is 8", "writing 0 back at offset 20"]),
        HeaderDamage(offset: 21, bytes: [65], says: ["bytes 21 to 23 of its header (SQLite's payload fractions) are 65, 32, 32",
                                                     "not a database", "writing 64, 32, 32 back at offset 21"]),
        HeaderDamage(offset: 23, bytes: [31], says: ["are 64, 32, 31"]),
        // SQLite said "unsupported file format", and "malformed database schema" in mojibake.
        HeaderDamage(offset: 47, bytes: [5], says: ["bytes 44 to 47 of its header (SQLite's schema format) read 5"]),
        HeaderDamage(offset: 59, bytes: [2], says: ["bytes 56 to 59 of its header (the text encoding) read 2",
                                                    "writing 1 back (0, 0, 0, 1 at offset 56)"]),
    ]

    /// Opening a store whose header SQLite would misread throws `damagedStore` naming the byte
    /// (not "read-only", nor "not an SQLite database"), read-only too, and leaves the file as
    /// it is; `check()` of a garage that had it open reports the same reason, and writing the
    /// byte back, as the message says, repairs the file.
    @Test(arguments: headerDamages)
    func aHeaderSQLiteWouldMisreadIsReportedDamagedWhereItIs(_ damage: HeaderDamage) throws {
        let directory = try TemporaryDirectory()
        let path = try closedStore(in: directory, counters: 20)
        let open = try Garage(path: path)      // opened before the damage: its check finds it
        let original = try overwrite(path, at: damage.offset, with: damage.bytes)
        let damaged = try Data(contentsOf: URL(fileURLWithPath: path))

        let error = try #require(throws: GarageError.self) { try Garage(path: path) }
        guard case let .damagedStore(errorPath, operation, reason) = error else {
            Issue.record("expected damagedStore, got \(error)")
            return
        }
        #expect(errorPath == path && operation == "open the store")
        expect(error, says: [path, "damaged"] + damage.says)
        #expect(throws: error) { try Garage.readOnly(path: path) }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == damaged)

        let report = try open.check()
        #expect(report.problems.first == .sqlite(reason), "\(report)")
        #expect(report.description.contains(reason))

        try overwrite(path, at: damage.offset, with: original)
        #expect(try open.check().isOK)
        #expect(try Garage(path: path).retrieveAll(Counter.self).map(\.value).sorted() == (1...20).map { $0 * 10 })
    }

    // MARK: Read-only

    @Test(.enabled(if: WriteProtection.isAvailable, "this system can't make a file unwritable for this process"))
    func aReadOnlyFileIsReadAndRefusesWrites() async throws {
        let directory = try TemporaryDirectory()
        let path = try closedStore(in: directory, counters: 3)
        #expect(WriteProtection.protect(path))
        defer { WriteProtection.unprotect(path) }
        let before = try Data(contentsOf: URL(fileURLWithPath: path))

        let garage = try Garage(path: path)
        #expect(try await garage.retrieveAll(Counter.self).map(\.value) == [10, 20, 30])
        #expect(try await garage.retrieve(Counter.self, identifier: 2)?.value == 20)
        let error = try #require(throws: GarageError.self) { try garage.park(Counter(id: 4, value: 40)) }
        guard case let .readOnlyStore(errorPath, operation, reason) = error else {
            Issue.record("expected readOnlyStore, got \(error)")
            return
        }
        #expect(errorPath == path)
        #expect(operation == "park Counter(4)")
        #expect(reason.hasPrefix("the file can't be written"))
        expect(error, says: [path, "read-only", "park Counter(4)", "nothing was written", "reading still works",
                             "make the file and its folder writable"])
        await #expect(throws: GarageError.readOnlyStore(path: path, operation: "park Counter(5)", reason: reason)) {
            try await garage.park(Counter(id: 5, value: 50))
        }
        #expect(throws: GarageError.readOnlyStore(path: path, operation: "delete all Counter", reason: reason)) {
            try garage.deleteAll(Counter.self)
        }
        #expect(try await garage.count(Counter.self) == 3)
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
    }

    @Test(.enabled(if: WriteProtection.isAvailable, "this system can't make a folder unwritable for this process"))
    func aStoreInAReadOnlyFolderIsReadAndRefusesWrites() throws {
        let directory = try TemporaryDirectory()
        let path = try closedStore(in: directory, counters: 3)
        // Closed cleanly: no -wal or -shm file, and SQLite can't create them in the folder.
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.url.path) == ["garage.sqlite"])
        #expect(WriteProtection.protect(directory.url.path))
        defer { WriteProtection.unprotect(directory.url.path) }

        let garage = try Garage(path: path)
        #expect(try garage.retrieveAll(Counter.self).map(\.value) == [10, 20, 30])
        #expect(try garage.identifiers(of: Counter.self) == ["1", "2", "3"])
        garage.isAutosaveEnabled = false
        try garage.park(Counter(id: 4, value: 40))   // held in memory until saved
        let error = try #require(throws: GarageError.self) { try garage.save() }
        guard case let .readOnlyStore(errorPath, operation, reason) = error else {
            Issue.record("expected readOnlyStore, got \(error)")
            return
        }
        #expect(errorPath == path)
        #expect(operation == "save")
        #expect(reason.hasPrefix("its folder \(directory.url.path) can't be written"))
        expect(error, says: [path, "read-only", "nothing was written"])
        #expect(garage.hasUnsavedChanges)
        garage.discardUnsavedChanges()
        #expect(try garage.count(Counter.self) == 3)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.url.path) == ["garage.sqlite"])
    }

    @Test(.enabled(if: WriteProtection.isAvailable, "this system can't make a folder unwritable for this process"))
    func aStoreOpenElsewhereInAReadOnlyFolderIsReadWithItsWAL() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("garage.sqlite")
        let writer = try Garage(path: path)
        try writer.parkAll([Counter(id: 1, value: 10), Counter(id: 2, value: 20)])
        #expect(FileManager.default.fileExists(atPath: path + "-wal"))
        #expect(WriteProtection.protect(directory.url.path))
        defer { WriteProtection.unprotect(directory.url.path) }

        let reader = try Garage(path: path)
        #expect(try reader.retrieveAll(Counter.self).map(\.value) == [10, 20])
        // The writer, whose files are already open, goes on; the reader sees its commits.
        try writer.park(Counter(id: 3, value: 30))
        #expect(try reader.retrieve(Counter.self, identifier: 3)?.value == 30)
        #expect(throws: GarageError.self) { try reader.park(Counter(id: 4, value: 40)) }
        #expect(try writer.count(Counter.self) == 3)
    }

    @Test(.enabled(if: WriteProtection.isAvailable, "this system can't make a folder unwritable for this process"))
    func noStoreCanBeCreatedInAReadOnlyFolder() throws {
        let directory = try TemporaryDirectory()
        #expect(WriteProtection.protect(directory.url.path))
        defer { WriteProtection.unprotect(directory.url.path) }
        let path = directory.path("new.sqlite")
        let error = try #require(throws: GarageError.self) { try Garage(path: path) }
        guard case let .cannotOpenStore(errorPath, reason) = error else {
            Issue.record("expected cannotOpenStore, got \(error)")
            return
        }
        #expect(errorPath == path)
        #expect(reason.hasPrefix("the folder \(directory.url.path) can't be written"))
        expect(error, says: [path, "may read and write there"])
    }

    /// Runs everywhere, root or not: the same read-only store as a protected file gives.
    @Test func aGarageOpenedReadOnlyReadsAndRefusesEveryWrite() async throws {
        let directory = try TemporaryDirectory()
        let path = try closedStore(in: directory, counters: 3)
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        let garage = try Garage.readOnly(path: path)
        #expect(try await garage.retrieveAll(Counter.self).map(\.value) == [10, 20, 30])
        #expect(try await garage.retrieve(Counter.self, identifier: 3)?.value == 30)
        let reason = "it was opened with Garage.readOnly(path:)"
        #expect(throws: GarageError.readOnlyStore(path: path, operation: "park Counter(4)", reason: reason)) {
            try garage.park(Counter(id: 4, value: 40))
        }
        #expect(throws: GarageError.readOnlyStore(path: path, operation: "delete Counter(1)", reason: reason)) {
            try garage.delete(Counter(id: 1, value: 10))
        }
        #expect(throws: GarageError.readOnlyStore(path: path, operation: "claim Counter", reason: reason)) {
            try garage.claim(Counter.self, limit: 10)
        }
        await #expect(throws: GarageError.readOnlyStore(path: path, operation: "save", reason: reason)) {
            try await garage.save()
        }
        #expect(try await garage.count(Counter.self) == 3)
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
        #expect(throws: GarageError.cannotOpenStore(
            path: directory.path("missing.sqlite"), reason: "the file does not exist, and a read-only garage can't create it")) {
            try Garage.readOnly(path: directory.path("missing.sqlite"))
        }
    }

    // MARK: Full disk

    @Test func aFullDiskDuringAGraphParkWritesNothingAndSaysSo() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("garage.sqlite")
        let garage = try Garage(path: path)
        try garage.parkAll([Counter(id: 1, value: 10), Counter(id: 2, value: 20)])
        try garage.store.limitPageCount(to: try garage.store.pageCount())

        let shipment = Shipment.sample(id: "s1", parcels: 300)
        let error = try #require(throws: GarageError.self) { try garage.park(shipment) }
        #expect(error == .storeFull(path: path, operation: "park Shipment(s1)"))
        expect(error, says: [path, "disk", "full", "park Shipment(s1)", "nothing of it was written", "Free some disk space"])
        // Nothing partial: neither the shipment nor any of its parcels.
        #expect(try garage.count(Shipment.self) == 0)
        #expect(try garage.count(Parcel.self) == 0)
        #expect(try garage.retrieveAll(Counter.self).map(\.value) == [10, 20])

        // A large parkAll, written while it is encoded, fails the same way.
        let parcels = (0..<1_500).map { Parcel(id: $0, label: String(repeating: "p", count: 1_000)) }
        #expect(throws: GarageError.storeFull(path: path, operation: "park 1500 EdgeCases.Parcel objects")) {
            try garage.parkAll(parcels)
        }
        #expect(try garage.count(Parcel.self) == 0)

        // Unsaved changes stay unsaved, to be saved once there is room.
        garage.isAutosaveEnabled = false
        try garage.park(shipment)
        #expect(throws: GarageError.storeFull(path: path, operation: "save")) { try garage.save() }
        #expect(garage.hasUnsavedChanges)
        try garage.store.limitPageCount(to: 1 << 30)
        try garage.save()
        #expect(try garage.retrieve(Shipment.self, identifier: "s1")?.parcels.count == 300)
        #expect(try Garage(path: path).count(Parcel.self) == 300)
    }
}

// MARK: - Helpers

/// A closed file store holding `counters` counters (values 10, 20, ...): its WAL is checkpointed
/// into the file and removed.
private func closedStore(in directory: TemporaryDirectory, counters: Int) throws -> String {
    let path = directory.path("garage.sqlite")
    do {
        let garage = try Garage(path: path)
        // In batches below `Garage.streamingThreshold`: a streaming parkAll's writer may still
        // hold the store for a moment after the call returns, and close it later.
        let counters = (1...counters).map { Counter(id: $0, value: $0 * 10) }
        for start in stride(from: 0, to: counters.count, by: Garage.streamingThreshold - 1) {
            try garage.parkAll(Array(counters[start..<min(start + Garage.streamingThreshold - 1, counters.count)]))
        }
    }
    // Rebuilt compactly: B-tree page splits leave stale copies of rows in the free space of
    // pages, which a search of the file's bytes would find instead of the live row.
    let file = try SQLiteFile(path)
    try file.executeWithoutTransaction("VACUUM")
    try file.close()
    return path
}

@Suite("Bad input: mistyped columns read in bulk", .firstPassOnly)
struct BadColumnsInBulkTests {
    /// `retrieveAll` and the sync queries read rows through a cursor, where SQLite would
    /// convert text in a number column to 0 and cut text at a NUL.
    @Test func textInTheSyncStatusColumnIsCorruptDataNotUndetermined() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("garage.sqlite")
        let garage = try Garage(path: path)
        try garage.parkAll([Counter(id: 1, value: 1), Counter(id: 2, value: 2)])
        try rawWrite(path, "UPDATE garage_object SET syncStatus = 'synced' WHERE identifier = '2'")
        let error = try #require(throws: GarageError.self) { try garage.retrieveAll(Counter.self) }
        #expect(error == .corruptData(typeName: "Counter", identifier: "2", reason: "its syncStatus column is not an integer"))
        #expect(try garage.retrieve(Counter.self, identifier: 1)?.value == 1)
    }

    @Test func dataWithANULInsideIsInvalidNotCutShort() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("garage.sqlite")
        let garage = try Garage(path: path)
        try garage.parkAll([Counter(id: 1, value: 1), Counter(id: 2, value: 2)])
        // Valid JSON, a NUL, then garbage: read up to the NUL, it would look fine.
        try rawWrite(path, """
            UPDATE garage_object SET data = CAST(CAST('{"id":2,"value":2}' AS BLOB) || x'00' || CAST('junk' AS BLOB) AS TEXT)
            WHERE identifier = '2'
            """)
        // Every byte is read, past the NUL: the JSON has data after its end.
        let invalid = GarageError.corruptData(
            typeName: "Counter", identifier: "2",
            reason: "its JSON is invalid: unexpected data after the JSON value at byte 18")
        let bulkError = try #require(throws: GarageError.self) { try garage.retrieveAll(Counter.self) }
        #expect(bulkError == invalid)
        let oneError = try #require(throws: GarageError.self) { try garage.retrieve(Counter.self, identifier: 2) }
        #expect(oneError == invalid)
        let lossy = try garage.retrieveAllLossy(Counter.self)
        #expect(lossy.objects.map(\.id) == [1])
        #expect(lossy.failures.map(\.identifier) == ["2"])
    }
}
