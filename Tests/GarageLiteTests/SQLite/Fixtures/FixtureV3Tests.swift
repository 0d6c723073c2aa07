import Foundation
import GarageFixtureModels
import Testing
@testable import GarageLite
import GarageLiteSQLite

/// The golden files of format version 3 (the index of references), and the move of every
/// version 1 and version 2 file to version 3. Each test opens copies (see `FixtureFile`).
@Suite("Golden files of format version 3", .firstPassOnly)
struct FixtureV3Tests {
    static let names = FixtureV2Tests.names

    /// The index of references of the store at `path`, as `to|from` lines in order.
    static func index(_ path: String) throws -> [String] {
        try SQLiteFile(path).strings("""
            SELECT toType || '(' || toIdentifier || ')|' || fromType || '(' || fromIdentifier || ')'
            FROM garage_reference ORDER BY 1
            """)
    }

    /// The content (`FixtureV2Tests.content`) of the file `name` of format `version` opened by
    /// today's GarageLite, as a file written by version 2 or later holds it.
    static func migratedContent(_ path: String, from version: Int, name: String) throws -> [String] {
        var migrated = try FixtureV2Tests.content(path)
        if version == 1, name == "sync" {
            // Version 2 stores an object parked saying .syncing without a claim as .notSynced.
            let index = try #require(migrated.firstIndex { $0.hasPrefix("Parcel|p-syncing|") })
            migrated[index] = String(migrated[index].dropLast("|2|1|1|[]|0".count)) + "|1|1|1|[]|0"
        }
        return migrated
    }

    /// The index the rows' reference lists call for, computed from the lists themselves.
    static func expectedIndex(_ path: String) throws -> [String] {
        try SQLiteFile(path).strings("""
            SELECT DISTINCT json_extract(reference.value, '$[0]') || '(' || json_extract(reference.value, '$[1]')
                || ')|' || row.type || '(' || row.identifier || ')'
            FROM garage_object AS row, json_each(row.refs) AS reference
            WHERE row.isDeleted = 0 ORDER BY 1
            """)
    }

    @Test(arguments: names)
    func eachFileIsAWholeVersion3Store(name: String) throws {
        let fixture = try FixtureFile("\(name).garage", version: 3)
        let file = try SQLiteFile(fixture.path)
        let (userVersion, integrity, triggers, columns, guessed) = (
            try file.int("PRAGMA user_version"),
            try file.integrityCheck(),
            try file.strings("SELECT name FROM sqlite_master WHERE type = 'trigger' ORDER BY name"),
            try file.columns(in: "garage_object"),
            try file.int("SELECT COUNT(*) FROM garage_object WHERE referencesKnown = 0"))
        try file.close()
        #expect(userVersion == 3)
        #expect(columns.last == "referencesKnown")
        #expect(guessed == 0)
        #expect(integrity == ["ok"])
        #expect(triggers == ["garage_reference_delete", "garage_reference_insert", "garage_reference_update"])
        #expect(try Self.index(fixture.path) == Self.expectedIndex(fixture.path))
        fixture.expectOriginalUnchanged()
    }

    @Test func theGraphFileIndexesEveryReference() throws {
        let fixture = try FixtureFile("graph.garage", version: 3)
        let index = try Self.index(fixture.path)
        #expect(index.count == 16)
        #expect(index.contains("Ship(Fortune)|Fleet(Black Flag)"))
        // The first mate whose row was deleted (GarageStorage's delete) is still referenced.
        #expect(index.contains("Sailor(s-deserter)|Ship(Ghost)"))
        let garage = try Garage(path: fixture.path)
        #expect(try garage.referrers(of: FixtureV1.Sailor.self, identifier: "s-will").map(\.description)
            == ["Ship(Fortune)", "Ship(Revenge)"])
        fixture.expectOriginalUnchanged()
    }

    /// Each version 1 and version 2 file, moved to version 3 when opened, holds what the
    /// version 3 file holds, its index of references included.
    @Test(arguments: [1, 2], names)
    func earlierFilesMoveToWhatVersion3Holds(version: Int, name: String) throws {
        let old = try FixtureFile("\(name).garage", version: version)
        let new = try FixtureFile("\(name).garage", version: 3)
        let reports = try [old, new].map { try Garage(path: $0.path).check().description }
        #expect(reports[0] == reports[1].replacingOccurrences(of: new.path, with: old.path))
        #expect(try Self.migratedContent(old.path, from: version, name: name) == FixtureV2Tests.content(new.path))
        #expect(try Self.index(old.path) == Self.index(new.path))
        #expect(try SQLiteFile(old.path).int("PRAGMA user_version") == Schema.formatVersion)
        old.expectOriginalUnchanged()
        new.expectOriginalUnchanged()
    }

    /// A migrated store keeps its index as the garage writes: deletes follow the rules.
    @Test func aMigratedStoreDeniesDeletingAReferencedObject() throws {
        let fixture = try FixtureFile("graph.garage", version: 1)
        let garage = try Garage(path: fixture.path)
        #expect(throws: GarageError.deleteDenied(
            typeName: "Sailor", identifier: "s-bart",
            referrers: [ObjectKey(typeName: "Ship", identifier: "Fortune"), ObjectKey(typeName: "Ship", identifier: "Ghost")])) {
            try garage.delete(FixtureV1.Sailor.self, identifier: "s-bart")
        }
        #expect(try garage.retrieve(FixtureV1.Sailor.self, identifier: "s-bart") != nil)
        fixture.expectOriginalUnchanged()
    }
}
