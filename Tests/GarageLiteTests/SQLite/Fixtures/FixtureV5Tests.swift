import Foundation
import GarageFixtureModels
import Testing
@testable import GarageLite
import GarageLiteSQLite

/// The golden files of format version 5 (the sync index holds `isDeleted`), and
/// the move of every earlier file to version 5. Each test opens copies (see `FixtureFile`).
@Suite("Golden files of format version 5", .firstPassOnly)
struct FixtureV5Tests {
    static let names = FixtureV2Tests.names

    /// The store's version, its integrity, and the SQL of its indexes by name.
    private static func header(_ path: String) throws -> (version: Int?, integrity: [String], indexes: [String: String]) {
        let file = try SQLiteFile(path)
        defer { try? file.close() }
        let indexes = try file.rows("""
            SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = 'garage_object' AND sql IS NOT NULL
            """)
        return (try file.int("PRAGMA user_version"),
                try file.integrityCheck(),
                Dictionary(uniqueKeysWithValues: try indexes.map { (try #require($0[0]), try #require($0[1])) }))
    }

    /// The query plan of `sql`, as SQLite's EXPLAIN QUERY PLAN details.
    private static func plan(_ path: String, _ sql: String, _ arguments: SQLiteFile.Arguments) throws -> String {
        let file = try SQLiteFile(path)
        defer { try? file.close() }
        return try file.queryPlan(sql, arguments).joined(separator: "; ")
    }

    @Test(arguments: names + ["locked"])
    func eachFileIsAWholeVersion5Store(name: String) throws {
        let fixture = try FixtureFile("\(name).garage", version: 5)
        let header = try Self.header(fixture.path)
        #expect(header.version == 5)
        #expect(header.integrity == ["ok"])
        #expect(Set(header.indexes.keys) == ["garage_object_sync", "garage_object_claim"])
        #expect(header.indexes["garage_object_sync"]?.contains("(syncStatus, type, modificationDate, isDeleted)") == true)
        #expect(try FixtureV3Tests.index(fixture.path) == FixtureV3Tests.expectedIndex(fixture.path))
        fixture.expectOriginalUnchanged()
    }

    /// Each file of versions 1 to 4, moved to version 5 when opened, holds what the version 5
    /// file holds, with the same indexes.
    @Test(arguments: [1, 2, 3, 4], names)
    func earlierFilesMoveToWhatVersion5Holds(version: Int, name: String) throws {
        let old = try FixtureFile("\(name).garage", version: version)
        let new = try FixtureFile("\(name).garage", version: 5)
        let reports = try [old, new].map { try Garage(path: $0.path).check().description }
        #expect(reports[0] == reports[1].replacingOccurrences(of: new.path, with: old.path))
        #expect(try FixtureV3Tests.migratedContent(old.path, from: version, name: name) == FixtureV2Tests.content(new.path))
        #expect(try FixtureV3Tests.index(old.path) == FixtureV3Tests.index(new.path))
        let (oldHeader, newHeader) = (try Self.header(old.path), try Self.header(new.path))
        #expect(oldHeader.version == Schema.formatVersion && oldHeader.integrity == ["ok"])
        #expect(oldHeader.indexes == newHeader.indexes)
        old.expectOriginalUnchanged()
        new.expectOriginalUnchanged()
    }

    /// The counts a sync job and an app ask for read the sync index alone (a covering index: no
    /// row of the table is read), in a store moved from version 4 too.
    @Test(arguments: [4, 5])
    func countsReadTheSyncIndexOnly(version: Int) throws {
        let fixture = try FixtureFile("sync.garage", version: version)
        _ = try Garage(path: fixture.path)   // moves a version 4 file to version 5
        for sql in ["SELECT COUNT(*) FROM garage_object WHERE syncStatus = ? AND type = ? AND isDeleted = 0",
                    SQLiteConnection.countOfTypeSQL] {
            let arguments: SQLiteFile.Arguments = sql.contains("syncStatus = ?") ? [1, "Parcel"] : ["Parcel"]
            let plan = try Self.plan(fixture.path, sql, arguments)
            #expect(plan.contains("COVERING INDEX garage_object_sync"), "\(sql): \(plan)")
        }
        // And the counts are those of the live objects: the tombstone is not one.
        let garage = try Garage(path: fixture.path)
        let live = try garage.records(ofType: "Parcel").filter { !$0.isDeleted }
        #expect(try garage.count(FixtureV1.Parcel.self) == live.count)
        for status in SyncStatus.allCases {
            #expect(try garage.count(FixtureV1.Parcel.self, withStatus: status) == live.filter { $0.syncStatus == status }.count)
        }
    }

    /// locked.garage of version 5 opens with its passphrase only, as version 4's does.
    @Test func theLockedFileOpensWithItsPassphraseOnly() throws {
        let fixture = try FixtureFile("locked.garage", version: 5)
        #expect(throws: GarageError.encryptionKeyRequired(path: fixture.path)) { try Garage(path: fixture.path) }
        let garage = try Garage(path: fixture.path, encryptionKey: .passphrase(FixtureV4.passphrase))
        #expect(try garage.retrieveAll(FixtureV1.Secret.self).map(\.id).sorted() == ["s-1", "s-2"])
        fixture.expectOriginalUnchanged()
    }
}
