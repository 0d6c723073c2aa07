import Crypto
import Foundation
import GarageFixtureModels
@testable import GarageLite
import Testing

/// Issue 12: a GarageStorage app that switches keeps its users' objects. The golden source,
/// `Fixtures/garagestorage/store.garagestorage` and its `-wal` file, is in Core Data's layout
/// of GarageStorage's entity (see `Fixtures/generator/GarageStorageStores.swift`); each test
/// imports a copy, and checks the golden files did not change.
@Suite("Importing a GarageStorage store", .firstPassOnly)
struct GarageStorageImportTests {
    typealias Relative = FixtureGarageStorage.Relative
    typealias Diary = FixtureGarageStorage.Diary
    typealias Badge = FixtureGarageStorage.Badge

    static let folder = FixtureFile.fixturesFolder.appendingPathComponent("garagestorage")
    static let names = ["store.garagestorage", "store.garagestorage-wal"]

    /// A copy of the golden source in a folder of its own, and the bytes of the originals.
    struct Source {
        let directory: TemporaryDirectory
        /// Where the tests' garage goes.
        let garageDirectory: TemporaryDirectory
        let url: URL
        let originals: [Data]

        init() throws {
            directory = try TemporaryDirectory()
            garageDirectory = try TemporaryDirectory()
            originals = try names.map { try Data(contentsOf: folder.appendingPathComponent($0)) }
            for (name, bytes) in zip(names, originals) {
                try bytes.write(to: directory.url.appendingPathComponent(name))
            }
            url = directory.url.appendingPathComponent("store.garagestorage")
        }

        /// The copy's files are as the golden ones, and nothing appeared beside them.
        func expectUnchanged(sourceLocation: SourceLocation = #_sourceLocation) throws {
            for (name, bytes) in zip(names, originals) {
                #expect(try Data(contentsOf: directory.url.appendingPathComponent(name)) == bytes,
                        "\(name) changed", sourceLocation: sourceLocation)
                #expect(try Data(contentsOf: folder.appendingPathComponent(name)) == bytes,
                        "the golden \(name) changed", sourceLocation: sourceLocation)
            }
            let files = try FileManager.default.contentsOfDirectory(atPath: directory.url.path).sorted()
            #expect(files == Self.expectedFiles, sourceLocation: sourceLocation)
        }

        static let expectedFiles = names.sorted()
    }

    static func garage(_ source: Source) throws -> Garage {
        let garage = try Garage(path: source.garageDirectory.path("garage.sqlite"))
        garage.dataEncryptionDelegate = TestEncryptor(key: SymmetricKey(data: FixtureV1.encryptionKey))
        return garage
    }

    @Test func everyObjectIsImportedWithItsStatusAndDates() throws {
        let source = try Source()
        let directory = try TemporaryDirectory()
        let garage = try Garage(path: directory.path("garage.sqlite"))
        garage.dataEncryptionDelegate = TestEncryptor(key: SymmetricKey(data: FixtureV1.encryptionKey))
        let report = try garage.importGarageStorageStore(at: source.url)

        #expect(report.imported == ["Relative": 4, "Diary": 1, "Badge": 1])
        #expect(report.encrypted == 1 && !report.encryptedUnchecked)
        #expect(report.alreadyInGarage.isEmpty)
        #expect(report.failures.map(\.rowID) == [6, 7, 8])
        #expect(report.failures[0].key == ObjectKey(typeName: "Relative", identifier: "Ghost"))
        #expect(report.failures[0].reason.contains("data (ZGS_DATA) is nil"))
        #expect(report.failures[1].reason == "row 2 holds a later version of the same object")
        #expect(report.failures[2].reason.contains("no type"))
        #expect(report.description.hasPrefix("Imported 6 objects (Badge: 1, Diary: 1, Relative: 4), 1 of them encrypted; 3 rows could not be taken:"))

        // Swift rows: references, ISO dates, the empty array of references GarageStorage omitted.
        let sam = try #require(try garage.retrieve(Relative.self, identifier: "Sam"))
        #expect(sam.age == 36 && sam.brother?.name == "Nick" && sam.siblings.map(\.name) == ["Nick", "Emily"])
        #expect(sam.birthdate == ISO8601DateFormatter().date(from: "1950-01-01T04:00:00Z"))
        #expect(sam.address == FixtureGarageStorage.Residence(street: "1 Main St", city: "Boston"))
        #expect(sam.brother?.siblings.isEmpty == true)
        // The Objective-C era row.
        let olivia = try #require(try garage.retrieve(Relative.self, identifier: "Olivia"))
        #expect(olivia.brother?.name == "Sam" && olivia.siblings.map(\.name) == ["Sam", "Nick"])
        #expect(olivia.birthdate == ISO8601DateFormatter().date(from: "1964-03-02T00:00:00Z"))
        #expect(olivia.address?.city == "Salem")
        // The last commit, from the -wal file.
        #expect(try garage.retrieve(Relative.self, identifier: "Emily")?.brother?.name == "Nick")
        // Encrypted, read with the same key; and a Hashable value under its old identifier.
        #expect(try garage.retrieve(Diary.self, identifier: "d1")?.text == "Dear diary: the garage moved.")
        #expect(try garage.retrieveAll(Badge.self) == [Badge(label: "Founder")])

        // Statuses: .syncing (an upload never finished) is .notSynced; NULL is .undetermined.
        #expect(try garage.syncStatus(for: sam) == .notSynced)
        #expect(try garage.metadata(Relative.self, identifier: "Nick")?.syncStatus == .synced)
        #expect(try garage.metadata(Relative.self, identifier: "Olivia")?.syncStatus == .notSynced)
        #expect(try garage.metadata(Relative.self, identifier: "Emily")?.syncStatus == .undetermined)
        // Dates: Core Data's timestamps.
        let nick = try #require(try garage.metadata(Relative.self, identifier: "Nick"))
        #expect(nick.creationDate == Date(timeIntervalSinceReferenceDate: 783_000_000))
        #expect(nick.modificationDate == Date(timeIntervalSinceReferenceDate: 783_086_400))
        #expect(nick.revision == 1 && nick.isRoot)
        #expect(try garage.metadata(Diary.self, identifier: "d1")?.isEncrypted == true)
        try source.expectUnchanged()
    }

    @Test func importingTwiceChangesNothingAndKeepsTheGaragesEdits() throws {
        let source = try Source()
        let garage = try Self.garage(source)
        try garage.importGarageStorageStore(at: source.url)
        let sam = try #require(try garage.retrieve(Relative.self, identifier: "Sam"))
        sam.age = 37
        try garage.park(sam)
        let again = try garage.importGarageStorageStore(at: source.url)
        #expect(again.imported.isEmpty && again.alreadyInGarage.isEmpty)
        #expect(again.alreadyImported == ["Relative": 4, "Diary": 1, "Badge": 1])
        #expect(again.description.hasPrefix("Imported 0 objects; 6 imported before, skipped (Badge: 1, Diary: 1, Relative: 4);"))
        #expect(try garage.retrieve(Relative.self, identifier: "Sam")?.age == 37)
        #expect(try garage.count(Relative.self) == 4)
        try source.expectUnchanged()
    }

    /// Issue 24: the README's migration imports at every launch while the old file is there.
    /// What the first import took stays as the app left it: an object deleted since (never
    /// synced: no tombstone; synced: its tombstone gone once the job uploaded the deletion),
    /// renamed by `migrateAll` (the Objective-C row too) or edited does not come back, in this
    /// garage or one opened on the file later, nor from a copy of the source elsewhere (the
    /// same Core Data store).
    @Test func importingAgainBringsBackNothingDeletedRenamedOrChanged() throws {
        let source = try Source()
        let garage = try Self.garage(source)
        #expect(try garage.importGarageStorageStore(at: source.url).importedCount == 6)

        let sam = try #require(try garage.retrieve(Relative.self, identifier: "Sam"))
        sam.age = 37
        try garage.park(sam)
        try garage.delete(Relative.self, identifier: "Emily", rule: .rowOnly)      // .undetermined: gone at once
        try garage.delete(Relative.self, identifier: "Nick", rule: .rowOnly)       // .synced: a tombstone
        try garage.delete(Diary.self, identifier: "d1")
        let claim = try garage.claim(Relative.self, limit: 10)
        #expect(claim.deletions == ["Nick"])
        try garage.complete(claim)
        // The server has the deletion; Olivia and Sam still name Nick, so his tombstone stays,
        // .synced, for them to read without him.
        let nick = try garage.record(ObjectKey(typeName: "Relative", identifier: "Nick"))
        #expect(nick?.isDeleted == true && nick?.syncStatus == .synced)
        #expect(try garage.migrateAll(fromOldClassName: "Relative", toTypeName: "Kin") == 2)   // Olivia (Objective-C) and Sam

        func expectNothingCameBack(_ garage: Garage, sourceLocation: SourceLocation = #_sourceLocation) throws {
            #expect(try garage.records(ofType: "Relative").isEmpty, sourceLocation: sourceLocation)
            #expect(try garage.records(ofType: "Diary").isEmpty, sourceLocation: sourceLocation)
            #expect(try garage.records(ofType: "Kin").filter { !$0.isDeleted }.map(\.identifier) == ["Olivia", "Sam"],
                    sourceLocation: sourceLocation)
            #expect(try garage.record(ObjectKey(typeName: "Kin", identifier: "Sam"))?.json.contains(#""age":37"#) == true,
                    sourceLocation: sourceLocation)
            #expect(try garage.count() == 3, sourceLocation: sourceLocation)     // Olivia, Sam and the badge
        }
        let again = try garage.importGarageStorageStore(at: source.url)
        #expect(again.imported.isEmpty && again.alreadyInGarage.isEmpty)
        #expect(again.alreadyImported == ["Relative": 4, "Diary": 1, "Badge": 1])
        #expect(again.failures.map(\.rowID) == [6, 7, 8], "the rows it can't take are reported every time")
        try expectNothingCameBack(garage)

        // The next launch: another garage on the file, and the source moved (an iOS container does).
        let relaunched = try Garage(path: source.garageDirectory.path("garage.sqlite"))
        relaunched.dataEncryptionDelegate = garage.dataEncryptionDelegate
        let moved = try TemporaryDirectory()
        for name in Self.names {
            try FileManager.default.copyItem(at: source.directory.url.appendingPathComponent(name),
                                             to: moved.url.appendingPathComponent(name))
        }
        let third = try relaunched.importGarageStorageStore(at: moved.url.appendingPathComponent("store.garagestorage"))
        #expect(third.importedCount == 0 && third.alreadyImported.values.reduce(0, +) == 6)
        try expectNothingCameBack(relaunched)
        try source.expectUnchanged()
    }

    /// A row the first import could not take (here: a delegate with another key) is imported by
    /// a later one, and only it.
    @Test func aLaterImportTakesOnlyWhatTheFirstCouldNot() throws {
        let source = try Source()
        let garage = try Garage(path: source.garageDirectory.path("garage.sqlite"))
        garage.dataEncryptionDelegate = TestEncryptor()
        let first = try garage.importGarageStorageStore(at: source.url)
        #expect(first.imported == ["Relative": 4, "Badge": 1])
        try garage.delete(Relative.self, identifier: "Emily", rule: .rowOnly)
        garage.dataEncryptionDelegate = TestEncryptor(key: SymmetricKey(data: FixtureV1.encryptionKey))
        let second = try garage.importGarageStorageStore(at: source.url)
        #expect(second.imported == ["Diary": 1])
        #expect(second.alreadyImported == ["Relative": 4, "Badge": 1])
        #expect(try garage.retrieve(Diary.self, identifier: "d1") != nil)
        #expect(try garage.retrieve(Relative.self, identifier: "Emily") == nil)
        #expect(try garage.importGarageStorageStore(at: source.url).alreadyImported == ["Relative": 4, "Badge": 1, "Diary": 1])
    }

    /// The same with the `async` entry points, from a file Core Data did not make (no store
    /// UUID: the source is known by its path); an object the garage had before the first import
    /// is left as it is, and does not come back once deleted either.
    @Test func importingAgainBringsBackNothingAsync() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("small.garagestorage")
        try Self.writeSmallStore(at: path, rows: """
            INSERT INTO ZGSCOREDATAOBJECT VALUES (1, 1, 1, 'GSMemo', 'm1', '{"id":"m1","title":"one"}', 3, 0, 0, NULL);
            INSERT INTO ZGSCOREDATAOBJECT VALUES (2, 1, 1, 'GSMemo', 'm2', '{"id":"m2","title":"two"}', 0, 0, 0, NULL);
            INSERT INTO ZGSCOREDATAOBJECT VALUES (3, 1, 1, 'GSMemo', 'm3', '{"id":"m3","title":"three"}', 1, 0, 0, NULL);
            """)
        let garage = try Garage(path: directory.path("garage.sqlite"))
        try await garage.park(GSMemo(id: "m3", title: "the app's own"))
        let first = try await garage.importGarageStorageStore(at: URL(fileURLWithPath: path))
        #expect(first.imported == ["GSMemo": 2] && first.alreadyInGarage == ["GSMemo": 1])
        try await garage.delete(GSMemo.self, identifier: "m2")        // never synced: no tombstone
        try await garage.delete(GSMemo.self, identifier: "m3")        // the app's own, never synced
        var memo = try #require(try await garage.retrieve(GSMemo.self, identifier: "m1"))
        memo.title = "edited"
        try await garage.park(memo)
        try await garage.delete(GSMemo.self, identifier: "m1")        // synced: a tombstone, uploaded
        let claim = try await garage.claim(GSMemo.self, limit: 10)
        #expect(claim.deletions == ["m1"])
        try await garage.complete(claim)

        let again = try await garage.importGarageStorageStore(at: URL(fileURLWithPath: path))
        #expect(again.imported.isEmpty && again.alreadyInGarage.isEmpty && again.alreadyImported == ["GSMemo": 3])
        #expect(try await garage.count() == 0)
        #expect(try await garage.records().isEmpty)
    }

    /// The references of imported objects aren't known exactly: what might be one counts, so
    /// that nothing is reported or collected that a parent still needs, and delete rules refuse.
    @Test func importedObjectsAreRootsWhoseReferencesCount() async throws {
        let source = try Source()
        let garage = try Self.garage(source)
        try await garage.importGarageStorageStore(at: source.url)
        #expect(try await garage.check().problems.isEmpty)
        #expect(try await garage.collectGarbage(dryRun: false).objects.isEmpty)
        #expect(try await garage.referrers(of: Relative.self, identifier: "Nick").map(\.description)
            == ["Relative(Emily)", "Relative(Olivia)", "Relative(Sam)"])
        await #expect(throws: GarageError.self) { try await garage.delete(Relative.self, identifier: "Nick") }
        // Parked again, an object's references are exact.
        let emily = try #require(try await garage.retrieve(Relative.self, identifier: "Emily"))
        emily.brother = nil
        try await garage.park(emily)
        #expect(try await garage.referrers(of: Relative.self, identifier: "Nick").map(\.description)
            == ["Relative(Olivia)", "Relative(Sam)"])
        // A guessed reference that dangles is not reported. Nick may be on the server (he was
        // imported .synced): his tombstone remembers the deletion, so the objects that
        // really referenced him read as if the reference had been removed (in GarageStorage
        // they broke).
        try await garage.delete(FixtureGarageStorage.Badge.self, identifier: "-4526998374617813370")
        try await garage.delete(Relative.self, identifier: "Nick", rule: .rowOnly)
        #expect(try await garage.check().problems.isEmpty)
        let lossy = try await garage.retrieveAllLossy(Relative.self)
        #expect(lossy.failures.isEmpty)
        #expect(lossy.objects.map(\.name) == ["Emily", "Olivia", "Sam"])
    }

    /// A GarageStorage store with GarageStorage's table only (no Core Data metadata), holding
    /// what the SQL `rows` insert.
    static func writeSmallStore(at path: String, rows: String) throws {
        try SQLiteFile(path).execute("""
            CREATE TABLE ZGSCOREDATAOBJECT (Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZGS_TYPE VARCHAR,
                ZGS_IDENTIFIER VARCHAR, ZGS_DATA VARCHAR, ZGS_SYNCSTATUS INTEGER, ZGS_CREATIONDATE TIMESTAMP,
                ZGS_MODIFIEDDATE TIMESTAMP, ZGS_VERSION INTEGER);
            """ + rows)
    }

    struct GSMemo: Codable, Identifiable, Syncable {
        var id: String
        var title: String
        var syncStatus: SyncStatus = .undetermined
    }

    /// A string that only looks like a reference: the guess makes it a referrer, which
    /// `.deny` counts and `.nullify` leaves as it is (its type encodes no reference).
    @Test func aGuessedReferrerThatIsNotOneIsLeftAlone() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("small.garagestorage")
        try SQLiteFile(path).execute("""
            CREATE TABLE ZGSCOREDATAOBJECT (Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZGS_TYPE VARCHAR,
                ZGS_IDENTIFIER VARCHAR, ZGS_DATA VARCHAR, ZGS_SYNCSTATUS INTEGER, ZGS_CREATIONDATE TIMESTAMP,
                ZGS_MODIFIEDDATE TIMESTAMP, ZGS_VERSION INTEGER);
            INSERT INTO ZGSCOREDATAOBJECT VALUES (1, 1, 1, 'Relative', 'Nick', '{"name":"Nick","age":34}', 3, 0, 0, NULL);
            INSERT INTO ZGSCOREDATAOBJECT VALUES (2, 1, 1, 'GSMemo', 'm1', '{"id":"m1","title":"Nick"}', 3, 0, 0, NULL);
            """)
        let garage = try Garage.inMemory()
        #expect(try garage.importGarageStorageStore(at: URL(fileURLWithPath: path)).importedCount == 2)
        #expect(try garage.referrers(of: Relative.self, identifier: "Nick") == [ObjectKey(typeName: "GSMemo", identifier: "m1")])
        #expect(throws: GarageError.self) { try garage.delete(Relative.self, identifier: "Nick") }
        try garage.delete(Relative.self, identifier: "Nick", rule: .nullify(in: GSMemo.self))
        let memo = try #require(try garage.metadata(GSMemo.self, identifier: "m1"))
        #expect(memo.revision == 1 && memo.syncStatus == .synced)
        #expect(try garage.retrieve(GSMemo.self, identifier: "m1")?.title == "Nick")
        #expect(try garage.check().problems.isEmpty)
    }

    /// Without the delegate, encrypted rows are imported as they are, and read once it is set.
    @Test func encryptedRowsImportWithoutTheDelegateToo() throws {
        let source = try Source()
        let directory = try TemporaryDirectory()
        let garage = try Garage(path: directory.path("garage.sqlite"))
        let report = try garage.importGarageStorageStore(at: source.url)
        #expect(report.encrypted == 1 && report.encryptedUnchecked)
        #expect(report.description.contains("1 of them encrypted (not checked: no dataEncryptionDelegate was set)"))
        #expect(throws: GarageError.missingEncryptionDelegate(typeName: "Diary", identifier: "d1")) {
            try garage.retrieve(Diary.self, identifier: "d1")
        }
        garage.dataEncryptionDelegate = TestEncryptor(key: SymmetricKey(data: FixtureV1.encryptionKey))
        #expect(try garage.retrieve(Diary.self, identifier: "d1") != nil)
        // With a wrong key, the import checks and refuses the row.
        let other = try Garage.inMemory()
        other.dataEncryptionDelegate = TestEncryptor()
        let refused = try other.importGarageStorageStore(at: source.url)
        #expect(refused.failures.contains { $0.key?.typeName == "Diary" && $0.reason.contains("can't decrypt it") })
        #expect(refused.imported["Diary"] == nil)
    }

    @Test func aFileThatIsNotAGarageStorageStoreIsRefusedUntouched() throws {
        let directory = try TemporaryDirectory()
        let garage = try Garage.inMemory()
        let text = directory.path("notes.txt")
        try Data("not a database".utf8).write(to: URL(fileURLWithPath: text))
        let lite = directory.path("lite.sqlite")
        try Garage(path: lite).park(Counter(id: 1, value: 1))
        let other = directory.path("other.sqlite")
        try SQLiteFile(other).execute("CREATE TABLE ZGSCOREDATAOBJECT (Z_PK INTEGER PRIMARY KEY, ZGS_TYPE VARCHAR)")
        for (path, reason) in [(text, "can't be read as an SQLite database"), (lite, "has no table ZGSCOREDATAOBJECT"),
                               (other, "lacks the columns ZGS_IDENTIFIER, ZGS_DATA"),
                               (directory.path("missing.sqlite"), "there is no file there")] {
            let before = try? Data(contentsOf: URL(fileURLWithPath: path))
            let error = #expect(throws: GarageError.self) { try garage.importGarageStorageStore(at: URL(fileURLWithPath: path)) }
            guard case .notAGarageStorageStore(path, let found)? = error else {
                Issue.record("expected notAGarageStorageStore for \(path), got \(String(describing: error))")
                continue
            }
            #expect(found.contains(reason), "\(found)")
            #expect((try? Data(contentsOf: URL(fileURLWithPath: path))) == before)
        }
        #expect(try garage.count(Counter.self) == 0)
    }
}
