import Foundation
import GRDB
import Testing
@testable import GarageLite

// Bad input, from issue 5: each case gets a clear `GarageError` (or `DecodingError`) that names
// the type, identifier or path and says what to do; nothing crashes; nothing partial is
// written; and every other object stays readable.

@Suite("Bad input: store files")
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
        bytes.append(Data((0..<8_192).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }))
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

@Suite("Bad input: rows")
struct BadRowTests {
    @Test func aRowWithCorruptJSONNamesItselfAndTheOthersStayReadable() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("garage.sqlite")
        let garage = try Garage(path: path)
        try garage.parkAll((1...3).map { Counter(id: $0, value: $0 * 10) })
        try rawWrite(path, "UPDATE garage_object SET data = '{\"id\":2,\"value\":' WHERE type = 'Counter' AND identifier = '2'")

        let error = try #require(throws: GarageError.self) { try garage.retrieve(Counter.self, identifier: 2) }
        guard case let .corruptData(type, identifier, reason) = error else {
            Issue.record("expected corruptData, got \(error)")
            return
        }
        #expect(type == "Counter" && identifier == "2")
        #expect(reason.hasPrefix("its JSON is invalid: unexpected end of data"))
        expect(error, says: ["type Counter", "identifier 2", "Park the object again, or delete it"])
        #expect(try garage.retrieve(Counter.self, identifier: 1)?.value == 10)
        #expect(try garage.retrieve(Counter.self, identifier: 3)?.value == 30)

        // retrieveAll names the bad row; the lossy variant returns the others beside it.
        #expect(throws: error) { try garage.retrieveAll(Counter.self) }
        let lossy = try garage.retrieveAllLossy(Counter.self)
        #expect(lossy.objects.map(\.id) == [1, 3])
        #expect(lossy.failures.map(\.identifier) == ["2"])
        #expect(lossy.failures.first?.typeName == "Counter")
        #expect(lossy.failures.first?.error as? GarageError == error)
        #expect(lossy.failures.first?.description.contains("type Counter with identifier 2") == true)
        #expect(!lossy.isComplete)

        // Replacing the row mends it.
        try garage.park(Counter(id: 2, value: 21))
        #expect(try garage.retrieveAllLossy(Counter.self).isComplete)
        #expect(try garage.retrieveAll(Counter.self).map(\.value) == [10, 21, 30])
    }

    @Test func aRowWhoseShapeNoLongerMatchesItsTypeNamesItselfAndSaysWhatToDo() async throws {
        let garage = try Garage.inMemory()
        // Parked before `Gauge` got its `unit`.
        try await garage.park(GaugeV1(id: 1, reading: 1.5))
        try await garage.migrateAll(fromOldClassName: "GaugeV1", to: Gauge.self)
        try await garage.parkAll([Gauge(id: 2, reading: 2.5, unit: "bar"), Gauge(id: 3, reading: 3.5, unit: "bar")])

        let error = try #require(throws: DecodingError.self) { try garage.retrieve(Gauge.self, identifier: 1) }
        guard case let .keyNotFound(key, context) = error else {
            Issue.record("expected keyNotFound, got \(error)")
            return
        }
        #expect(key.stringValue == "unit")
        #expect(context.debugDescription.hasPrefix("Gauge(1): "))
        #expect(context.debugDescription.hasSuffix(DecodingError.whatToDo))
        #expect(try await garage.retrieve(Gauge.self, identifier: 2)?.unit == "bar")

        let all = try #require(throws: DecodingError.self) { try garage.retrieveAll(Gauge.self) }
        #expect(describe(all).hasPrefix("Gauge(1): "))
        let lossy = try await garage.retrieveAllLossy(Gauge.self)
        #expect(lossy.objects == [Gauge(id: 2, reading: 2.5, unit: "bar"), Gauge(id: 3, reading: 3.5, unit: "bar")])
        #expect(lossy.failures.map(\.identifier) == ["1"])
        #expect(lossy.failures.first?.error is DecodingError)
    }

    @Test func aReferenceToARowOfTheWrongTypeNamesBothRows() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("garage.sqlite")
        let garage = try Garage(path: path)
        let author = Author(id: UUID(), name: "Calvino")
        let guarantor = Author(id: UUID(), name: "Guarantor")
        try garage.parkAll([
            Loan(id: "a", book: Book(id: 1, title: "Invisible Cities", author: author), guarantor: guarantor),
            Loan(id: "b", book: Book(id: 2, title: "Mr Palomar", author: author), guarantor: guarantor),
        ])
        // Book 1's row now holds another type.
        try rawWrite(path, "UPDATE garage_object SET type = 'Volume' WHERE type = 'Book' AND identifier = '1'")

        let error = try #require(throws: DecodingError.self) { try garage.retrieve(Loan.self, identifier: "a") }
        let description = describe(error)
        #expect(description.hasPrefix("Loan(a): Missing Identifiable reference: no object of type Book with identifier 1"))
        #expect(description.contains("Park it again, or make the property optional"))
        #expect(try garage.retrieve(Loan.self, identifier: "b")?.book.title == "Mr Palomar")
        let lossy = try garage.retrieveAllLossy(Loan.self)
        #expect(lossy.objects.map(\.id) == ["b"])
        #expect(lossy.failures.map(\.identifier) == ["a"])

        // An optional reference to a row that moved decodes as nil, as documented.
        try rawWrite(path, "UPDATE garage_object SET type = 'Writer' WHERE identifier = '\(guarantor.id.uuidString)'")
        #expect(try garage.retrieve(Loan.self, identifier: "b")?.guarantor == nil)
    }

    @Test func aReferencedRowWithTheWrongShapeNamesTheParentAndTheChild() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("garage.sqlite")
        let garage = try Garage(path: path)
        let author = Author(id: UUID(), name: "Calvino")
        try garage.parkAll([
            Loan(id: "a", book: Book(id: 1, title: "Invisible Cities", author: author), guarantor: nil),
            Loan(id: "b", book: Book(id: 2, title: "Mr Palomar", author: author), guarantor: nil),
        ])
        try rawWrite(path, "UPDATE garage_object SET data = '{\"id\":1,\"name\":\"not a book\"}' WHERE type = 'Book' AND identifier = '1'")
        let error = try #require(throws: DecodingError.self) { try garage.retrieve(Loan.self, identifier: "a") }
        let description = describe(error)
        #expect(description.hasPrefix("Loan(a): Book(1): "))
        #expect(description.hasSuffix(DecodingError.whatToDo))
        #expect(description.components(separatedBy: DecodingError.whatToDo).count == 2, "said once")
        #expect(try garage.retrieve(Loan.self, identifier: "b")?.book.id == 2)
        #expect(try garage.retrieveAllLossy(Book.self).objects.map(\.id) == [2])
    }

    @Test func aWrongDecryptionKeyNamesTheObjectAndTheOthersStayReadable() throws {
        let garage = try Garage.inMemory()
        try garage.park(Counter(id: 1, value: 10))                // plaintext
        let encryptor = TestEncryptor()
        garage.dataEncryptionDelegate = encryptor
        try garage.parkAll([Counter(id: 2, value: 20), Counter(id: 3, value: 30)])
        garage.dataEncryptionDelegate = TestEncryptor()         // another key

        let error = try #require(throws: GarageError.self) { try garage.retrieve(Counter.self, identifier: 2) }
        guard case let .decryptionFailed(type, identifier, reason) = error else {
            Issue.record("expected decryptionFailed, got \(error)")
            return
        }
        #expect(type == "Counter" && identifier == "2")
        #expect(reason.contains("CryptoKitError"))
        expect(error, says: ["type Counter", "identifier 2", "could not be decrypted",
                             "Set the dataEncryptionDelegate (and key) that encrypted it"])
        #expect(try garage.retrieve(Counter.self, identifier: 1)?.value == 10)
        let lossy = try garage.retrieveAllLossy(Counter.self)
        #expect(lossy.objects.map(\.id) == [1])
        #expect(lossy.failures.map(\.identifier) == ["2", "3"])

        garage.dataEncryptionDelegate = encryptor
        #expect(try garage.retrieveAll(Counter.self).map(\.value) == [10, 20, 30])
    }

    @Test func aDelegateThatDecryptsToGarbageGivesCorruptDataNamingTheObject() throws {
        let garage = try Garage.inMemory()
        garage.dataEncryptionDelegate = ReversingEncryptor()
        try garage.park(Counter(id: 1, value: 10))
        garage.dataEncryptionDelegate = IdentityEncryptor()  // "decrypts" the reversed JSON as it is
        let error = try #require(throws: GarageError.self) { try garage.retrieve(Counter.self, identifier: 1) }
        guard case let .corruptData(type, identifier, reason) = error else {
            Issue.record("expected corruptData, got \(error)")
            return
        }
        #expect(type == "Counter" && identifier == "1")
        #expect(reason.hasPrefix("its decrypted JSON is invalid (was it decrypted with another key?)"))
    }

    @Test func aClaimSkipsRowsItCannotDecodeAndReportsThem() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("garage.sqlite")
        let garage = try Garage(path: path)
        let notes = (0..<4).map { Note(text: "note \($0)", tags: []) }
        for note in notes { try garage.park(note) }     // oldest first
        let bad = try garage.identifier(for: notes[0])
        try rawWrite(path, "UPDATE garage_object SET data = 'not json' WHERE type = 'Note' AND identifier = '\(bad)'")

        let claim = try garage.claim(Note.self, limit: 2)
        #expect(claim.objects.map(\.text) == ["note 1", "note 2"])
        #expect(claim.failures.map(\.identifier) == [bad])
        guard case .corruptData("Note", bad, _)? = claim.failures.first?.error as? GarageError else {
            Issue.record("expected corruptData naming Note(\(bad)), got \(claim.failures)")
            return
        }
        #expect(try garage.syncStatus(for: notes[1]) == .syncing)
        // The bad row is left as it was: unclaimed, and still waiting to be synced.
        #expect(try garage.metadata(Note.self, identifier: bad)?.syncStatus == .notSynced)
        #expect(try garage.metadata(Note.self, identifier: bad)?.claimDate == nil)
        #expect(try garage.complete(claim).synced.count == 2)
        let next = try garage.claim(Note.self, limit: 10)
        #expect(next.objects.map(\.text) == ["note 3"])
        #expect(next.failures.map(\.identifier) == [bad])
    }
}

@Suite("Bad input: identifiers and type names")
struct BadIdentifierTests {
    static let awkward: [String] = [
        "",
        String(repeating: "0123456789", count: 1_024),                   // 10 KB
        "ünïcødé", "日本語の識別子", "👩‍👩‍👧‍👦🏳️‍🌈", "مرحبا بالعالم", "\u{FEFF}bom", "tab\tnew\nline\r",
        "a \"quoted\" name", "O'Brien", "Robert'); DROP TABLE garage_object;--", "' OR '1'='1",
        "%_*?[]", "back\\slash", "/slashes/and:colons", "{\"json\":true}", "[\"Person\",\"x\"]",
    ]

    @Test(arguments: awkward.indices)
    func awkwardIdentifiersRoundTripWithTheirReferences(_ index: Int) throws {
        let name = Self.awkward[index]
        let garage = try Garage.inMemory()
        try garage.park(Counter(id: 1, value: 1))
        let person = Person(name: name)
        person.brother = Person(name: name + "'s brother")
        try garage.park(person)

        let retrieved = try #require(try garage.retrieve(Person.self, identifier: name))
        #expect(retrieved.name == name)
        #expect(retrieved.brother?.name == name + "'s brother")
        #expect(Set(try garage.identifiers(of: Person.self)) == [name, name + "'s brother"])
        #expect(try garage.metadata(Person.self, identifier: name)?.identifier == name)
        try garage.delete(person)
        #expect(try garage.retrieve(Person.self, identifier: name) == nil)
        #expect(try garage.count(Person.self) == 1)
        // The table is still there, with the other objects.
        #expect(try garage.retrieve(Counter.self, identifier: 1)?.value == 1)
    }

    @Test func identifiersThatSwiftFindsEqualAreOneObject() throws {
        let garage = try Garage.inMemory()
        let composed = "caf\u{E9}", decomposed = "cafe\u{301}"
        #expect(composed == decomposed)
        try garage.park(Person(name: decomposed))
        #expect(try garage.retrieve(Person.self, identifier: composed)?.name == decomposed)
        try garage.park(Person(name: composed, age: 41))
        #expect(try garage.count(Person.self) == 1)
        #expect(try garage.retrieve(Person.self, identifier: decomposed)?.age == 41)
    }

    @Test func anIdentifierWithANULCharacterIsRefusedAndNothingIsWritten() throws {
        let garage = try Garage.inMemory()
        let error = try #require(throws: GarageError.self) { try garage.park(Person(name: "a\u{0}b")) }
        guard case let .invalidIdentifier(type, identifier, _) = error else {
            Issue.record("expected invalidIdentifier, got \(error)")
            return
        }
        #expect(type == "Person" && identifier == "a\u{0}b")
        expect(error, says: ["type Person", #""a\0b""#, "U+0000", "Give it an identifier without that character"])

        let parent = Person(name: "parent")
        parent.brother = Person(name: "x\u{0}y")
        #expect(throws: GarageError.self) { try garage.park(parent) }
        #expect(try garage.count(Person.self) == 0)
    }

    @Test func genericTypesAreStoredUnderTheirFullNames() throws {
        let garage = try Garage.inMemory()
        let author = Author(id: UUID(), name: "Calvino")
        try garage.park(Crate(id: "c", content: 7))
        try garage.park(Crate(id: "c", content: "seven"))
        try garage.park(Crate(id: "c", content: ["seven": 7]))
        try garage.park(Crate(id: "c", content: Crate(id: "inner", content: 7)))
        try garage.park(Crate(id: "c", content: author))

        let types = try garage.store.read("test") { db in try Store.types(db) }
        #expect(Set(types) == [
            "Crate<Int>", "Crate<String>", "Crate<Dictionary<String, Int>>", "Crate<Crate<Int>>",
            "Crate<Author>", "Author",
        ])
        #expect(try garage.retrieve(Crate<Int>.self, identifier: "c")?.content == 7)
        #expect(try garage.retrieve(Crate<String>.self, identifier: "c")?.content == "seven")
        #expect(try garage.retrieve(Crate<[String: Int]>.self, identifier: "c")?.content == ["seven": 7])
        #expect(try garage.retrieve(Crate<Crate<Int>>.self, identifier: "c")?.content.content == 7)
        #expect(try garage.retrieve(Crate<Author>.self, identifier: "c")?.content == author)
        #expect(try garage.retrieve(Crate<Double>.self, identifier: "c") == nil)
        // The crate inside `Crate<Crate<Int>>` is Identifiable: a row of its own.
        #expect(try garage.identifiers(of: Crate<Int>.self) == ["c", "inner"])
        #expect(try garage.deleteAll(Crate<Int>.self, rule: .rowOnly) == 2)
        #expect(try garage.count(Crate<String>.self) == 1)
        #expect(try garage.identifiers(of: Crate<Author>.self) == ["c"])
    }
}

@Suite("Bad input: size and depth")
struct BadSizeTests {
    @Test func aTenMegabyteObjectRoundTrips() throws {
        let directory = try TemporaryDirectory()
        let garage = try Garage(path: directory.path("garage.sqlite"))
        try garage.park(Counter(id: 1, value: 1))
        let blob = Blob(id: "big", text: String(repeating: "0123456789abcdef", count: 655_360),   // 10 MB
                        bytes: Data((0..<1_048_576).map { UInt8(truncatingIfNeeded: $0) }),       // 1 MB
                        numbers: Array(0..<100_000))
        try garage.park(blob)
        let retrieved = try #require(try garage.retrieve(Blob.self, identifier: "big"))
        #expect(retrieved == blob)
        #expect(try garage.retrieve(Counter.self, identifier: 1)?.value == 1)
        #expect(try Garage(path: directory.path("garage.sqlite")).retrieve(Blob.self, identifier: "big") == blob)
    }

    @Test func valuesNestedDeeperThanTheLimitAreRefusedNamingTheObject() throws {
        let garage = try Garage.inMemory()
        try garage.park(Counter(id: 1, value: 1))
        var nested = Nested(child: nil)
        for _ in 0..<1_000 { nested = Nested(child: nested) }
        let error = try #require(throws: EncodingError.self) { try garage.park(Holder(id: "deep", nested: nested)) }
        guard case let .invalidValue(_, context) = error else {
            Issue.record("expected invalidValue, got \(error)")
            return
        }
        #expect(context.debugDescription.hasPrefix("Holder(deep): The value is nested 512 levels deep"))
        #expect(context.debugDescription.contains("Make some nested values Identifiable"))
        #expect(try garage.count(Holder.self) == 0)
        #expect(try garage.retrieve(Counter.self, identifier: 1)?.value == 1)
    }

    @Test func valuesNestedJustBelowTheLimitParkAndRetrieveOnASmallStack() async throws {
        let garage = try Garage.inMemory()
        var nested = Nested(child: nil)
        for _ in 0..<(JSONReader.maximumDepth - 2) { nested = Nested(child: nested) }
        let holder = UncheckedSendable(Holder(id: "deep", nested: nested))
        let depth = try onSmallStack {
            try garage.park(holder.value)
            return try garage.retrieve(Holder.self, identifier: "deep").map { depthOf($0.nested) }
        }
        #expect(depth == JSONReader.maximumDepth - 1)
        let inTask = try await Task.detached {
            try garage.retrieve(Holder.self, identifier: "deep").map { depthOf($0.nested) }
        }.value
        #expect(inTask == JSONReader.maximumDepth - 1)
    }

    @Test func aThousandDeepChainOfReferencesParksAndRetrievesOnASmallStack() async throws {
        let garage = try Garage.inMemory()
        var head = ChainLink(id: 0, next: nil)
        for id in 1..<1_000 { head = ChainLink(id: id, next: head) }
        let chain = head
        try await garage.park(chain)
        #expect(try await garage.count(ChainLink.self) == 1_000)

        // A Foundation thread with a 512 KB stack, as a dispatch queue's on Apple platforms.
        let onThread = try onSmallStack { try garage.retrieve(ChainLink.self, identifier: 999).map(lengthOf) }
        #expect(onThread == 1_000)
        let all = try onSmallStack { try garage.retrieveAll(ChainLink.self).map(lengthOf) }
        #expect(all.sorted() == Array(1...1_000))
        // Swift concurrency: the synchronous API in a task, and the asynchronous one.
        let inTask = try await Task.detached { try garage.retrieve(ChainLink.self, identifier: 999).map(lengthOf) }.value
        #expect(inTask == 1_000)
        #expect(try await garage.retrieve(ChainLink.self, identifier: 999).map(lengthOf) == 1_000)
        #expect(try await garage.retrieve(ChainLink.self, identifier: 500).map(lengthOf) == 501)
        // A link that can't be read deep in the chain still names itself.
        try await garage.store.write("test") { db in
            try db.execute(sql: "UPDATE garage_object SET data = '{' WHERE type = 'ChainLink' AND identifier = '3'")
        }
        let error = try #require(throws: GarageError.self) {
            try onSmallStack { try garage.retrieve(ChainLink.self, identifier: 999) }
        }
        #expect(error == .corruptData(typeName: "ChainLink", identifier: "3", reason: "its JSON is invalid: expected a key at byte 1"))
    }

    @Test func aCallToTheGarageFromADeepInitFromStillThrowsInsteadOfDeadlocking() throws {
        let garage = try Garage.inMemory()
        var head = ReentrantLink(id: 0, next: nil)
        for id in 1..<300 { head = ReentrantLink(id: id, next: head) }
        try garage.park(head)
        ReentrantLink.garage.write { $0 = garage }
        defer { ReentrantLink.garage.write { $0 = nil } }
        #expect(throws: GarageError.reentrantCall(operation: "count Counter")) {
            try onSmallStack { try garage.retrieve(ReentrantLink.self, identifier: 299) }
        }
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
    let queue = try DatabaseQueue(path: path)
    try queue.writeWithoutTransaction { db in try db.execute(sql: "VACUUM") }
    try queue.close()
    return path
}

/// Runs `sql` on the store file through a connection of its own, as another program would.
func rawWrite(_ path: String, _ sql: String) throws {
    try DatabaseQueue(path: path).write { db in try db.execute(sql: sql) }
}

/// Runs `body` on a Foundation thread with a 512 KB stack, and returns or throws what it does.
private func onSmallStack<T>(_ body: @escaping @Sendable () throws -> T) throws -> T {
    let result = ThreadResult<Result<T, any Error>>()
    let done = DispatchSemaphore(value: 0)
    let thread = Thread {
        result.value = Result { try body() }
        done.signal()
    }
    thread.stackSize = 512 * 1024
    thread.start()
    done.wait()
    return try #require(result.value).get()
}

private func expect(_ error: GarageError, says parts: [String], sourceLocation: SourceLocation = #_sourceLocation) {
    for part in parts {
        #expect(error.description.contains(part), "\(error.description) does not say \(part)",
                sourceLocation: sourceLocation)
    }
    #expect(error.localizedDescription == error.description, sourceLocation: sourceLocation)
}

private func describe(_ error: DecodingError) -> String {
    switch error {
    case let .typeMismatch(_, context), let .valueNotFound(_, context), let .keyNotFound(_, context),
         let .dataCorrupted(context):
        return context.debugDescription
    @unknown default:
        return "\(error)"
    }
}

private func depthOf(_ nested: Nested) -> Int {
    var depth = 1
    var node = nested
    while let child = node.child {
        depth += 1
        node = child
    }
    return depth
}

private func lengthOf(_ link: ChainLink) -> Int {
    var length = 1
    var node = link
    while let next = node.next {
        length += 1
        node = next
    }
    return length
}

private struct UncheckedSendable<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}

/// "Encrypts" by reversing the JSON's bytes, which are then no JSON at all.
private final class ReversingEncryptor: DataEncryptionDelegate, Sendable {
    func encrypt(_ data: Data) throws -> String { String(decoding: data.reversed(), as: UTF8.self) }
    func decrypt(_ string: String) throws -> Data { Data(string.utf8.reversed()) }
}

/// "Decrypts" by returning the stored text as it is.
private final class IdentityEncryptor: DataEncryptionDelegate, Sendable {
    func encrypt(_ data: Data) throws -> String { String(decoding: data, as: UTF8.self) }
    func decrypt(_ string: String) throws -> Data { Data(string.utf8) }
}


@Suite("Bad input: mistyped columns read in bulk")
struct BadColumnsInBulkTests {
    /// `retrieveAll` and the sync queries read rows through a cursor, where SQLite would
    /// convert text in a number column to 0 and cut text at a NUL.
    @Test func textInTheSyncStatusColumnIsCorruptDataNotUndetermined() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("garage.sqlite")
        let garage = try Garage(path: path)
        try garage.parkAll([Counter(id: 1, value: 1), Counter(id: 2, value: 2)])
        try DatabaseQueue(path: path).write { db in
            try db.execute(sql: "UPDATE garage_object SET syncStatus = 'synced' WHERE identifier = '2'")
        }
        let error = try #require(throws: GarageError.self) { try garage.retrieveAll(Counter.self) }
        #expect(error == .corruptData(typeName: "Counter", identifier: "2", reason: "its syncStatus column is not an integer"))
        #expect(try garage.retrieve(Counter.self, identifier: 1)?.value == 1)
    }

    @Test func dataWithANULInsideIsInvalidNotCutShort() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("garage.sqlite")
        let garage = try Garage(path: path)
        try garage.parkAll([Counter(id: 1, value: 1), Counter(id: 2, value: 2)])
        try DatabaseQueue(path: path).write { db in
            // Valid JSON, a NUL, then garbage: read up to the NUL, it would look fine.
            try db.execute(sql: """
                UPDATE garage_object SET data = CAST(CAST('{"id":2,"value":2}' AS BLOB) || x'00' || CAST('junk' AS BLOB) AS TEXT)
                WHERE identifier = '2'
                """)
        }
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
