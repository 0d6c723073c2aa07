import Foundation
import GarageFixtureModels
import Testing
@testable import GarageLite

/// The golden files of format version 7 (the counts of live rows per status and type), and the
/// move of every earlier file to version 7. Each test opens copies (see `FixtureFile`).
@Suite("Golden files of format version 7", .firstPassOnly)
struct FixtureV7Tests {
    static let names = FixtureV2Tests.names + ["locked", "bases"]

    /// The counts `garage_count` holds, without zeros: "status|type|live", in order.
    static func counts(_ path: String) throws -> [String] {
        let file = try SQLiteFile(path)
        defer { try? file.close() }
        return try file.strings("""
            SELECT syncStatus || '|' || type || '|' || live FROM garage_count WHERE live <> 0 ORDER BY syncStatus, type
            """)
    }

    /// The counts the rows call for, computed from the rows themselves.
    static func expectedCounts(_ path: String) throws -> [String] {
        let file = try SQLiteFile(path)
        defer { try? file.close() }
        return try file.strings("""
            SELECT syncStatus || '|' || type || '|' || COUNT(*) FROM garage_object WHERE isDeleted = 0
            GROUP BY syncStatus, type ORDER BY syncStatus, type
            """)
    }

    @Test(arguments: names)
    func eachFileIsAWholeVersion7Store(name: String) throws {
        let fixture = try FixtureFile("\(name).garage", version: 7)
        let file = try SQLiteFile(fixture.path)
        let (version, integrity, triggers) = (
            try file.int("PRAGMA user_version"), try file.integrityCheck(),
            try file.strings("SELECT name FROM sqlite_master WHERE type = 'trigger' AND name LIKE 'garage_count%' ORDER BY name"))
        try file.close()
        #expect(version == 7)
        #expect(integrity == ["ok"])
        #expect(triggers == ["garage_count_delete", "garage_count_insert", "garage_count_update"])
        #expect(try Self.counts(fixture.path) == Self.expectedCounts(fixture.path))
        fixture.expectOriginalUnchanged()
    }

    /// sync.garage counts each status of its parcels, and not its tombstone.
    @Test func theCountsAreThoseOfTheLiveRows() throws {
        let fixture = try FixtureFile("sync.garage", version: 7)
        let garage = try Garage(path: fixture.path)
        let parcels = try garage.records(ofType: "Parcel")
        #expect(parcels.contains { $0.isDeleted })
        let live = parcels.filter { !$0.isDeleted }
        #expect(try garage.count(FixtureV1.Parcel.self) == live.count)
        for status in SyncStatus.allCases {
            #expect(try garage.count(FixtureV1.Parcel.self, withStatus: status) == live.filter { $0.syncStatus == status }.count)
        }
        fixture.expectOriginalUnchanged()
    }

    /// Each file of versions 1 to 6, moved to version 7 when opened, holds what the version 7
    /// file holds, and counts its rows. (Not the same counts as the version 7 file's in every
    /// case: sync.garage's claim names the version 7 generator's process, which opening the file
    /// releases, and no process in older files.)
    @Test(arguments: [1, 2, 3, 4, 5, 6], FixtureV2Tests.names)
    func earlierFilesMoveToWhatVersion7Holds(version: Int, name: String) throws {
        let old = try FixtureFile("\(name).garage", version: version)
        let new = try FixtureFile("\(name).garage", version: 7)
        let written = try FixtureV2Tests.content(new.path)
        let reports = try [old, new].map { try Garage(path: $0.path).check().description }
        #expect(reports[0] == reports[1].replacingOccurrences(of: new.path, with: old.path))
        #expect(try FixtureV3Tests.migratedContent(old.path, from: version, name: name) == written)
        #expect(try SQLiteFile(old.path).int("PRAGMA user_version") == 7)
        #expect(try Self.counts(old.path) == Self.expectedCounts(old.path))
        #expect(try Self.counts(new.path) == Self.expectedCounts(new.path))
        old.expectOriginalUnchanged()
        new.expectOriginalUnchanged()
    }

    /// The version 6 files of their own (locked, bases) move too.
    @Test(arguments: ["locked", "bases"])
    func version6OnlyFilesMoveToVersion7(name: String) throws {
        let old = try FixtureFile("\(name).garage", version: 6)
        _ = name == "locked" ? try Garage(path: old.path, encryptionKey: .passphrase(FixtureV4.passphrase))
            : try Garage(path: old.path)
        #expect(try SQLiteFile(old.path).int("PRAGMA user_version") == 7)
        #expect(try Self.counts(old.path) == Self.expectedCounts(old.path))
        #expect(try !Self.counts(old.path).isEmpty)
        old.expectOriginalUnchanged()
    }
}
