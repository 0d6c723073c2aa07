import Foundation
import GarageFixtureModels
import GRDB
import Testing
@testable import GarageLite
import GarageLiteSQLite

/// The format version of a store, its migrations, and the refusal of newer versions, on copies
/// of the golden files of format version 1.
@Suite("Format versions and migrations", .firstPassOnly)
struct SchemaMigrationTests {
    @Test func theMigrationsLeadFromVersion1ToTheFormatVersion() {
        #expect(Schema.migrations.map(\.version) == Array(1...Schema.formatVersion))
    }

    /// The next format version, as a future GarageLite could add it: a column and an index.
    static func nextVersion(countingRunsIn runs: Protected<Int>) -> Schema.Migration {
        (Schema.formatVersion + 1, { db in
            runs.write { $0 += 1 }
            try db.execute(sql: """
                ALTER TABLE garage_object ADD COLUMN note TEXT;
                CREATE INDEX garage_object_note ON garage_object (note) WHERE note IS NOT NULL;
                """)
        })
    }

    @Test func aVersion1StoreMovesThroughEveryVersionToTheNextOne() throws {
        let fixture = try FixtureFile("graph.garage")
        let runs = Protected(0)
        let migrations = Schema.migrations + [Self.nextVersion(countingRunsIn: runs)]
        do {
            let garage = Garage(store: try Store.open(path: fixture.path, busyTimeout: 10, migrations: migrations))
            #expect(runs.read { $0 } == 1)
            let fleet = try #require(try garage.retrieve(FixtureV1.Fleet.self, identifier: "Black Flag"))
            #expect(fleet.flagship.captain.name == "Anne Bonny")
            #expect(fleet.flagship.captain.parrot?.words == ["hello", "pieces of eight"])
            #expect(fleet.ships.map(\.id) == ["Revenge", "Fortune"])
            #expect(fleet.ships[1].crew[0] === fleet.flagship.crew[1])
            #expect(try garage.retrieve(FixtureV1.Ship.self, identifier: "Ghost")?.firstMate == nil)
            #expect(try garage.count(FixtureV1.Sailor.self) == 6)
            try garage.park(FixtureV1.Sailor(id: "s-new", name: "New Hand", rank: 6))
            #expect(try garage.retrieve(FixtureV1.Sailor.self, identifier: "s-new")?.name == "New Hand")
        }
        let migrated = try Self.inspect(fixture.path)
        #expect(migrated.userVersion == Schema.formatVersion + 1)
        #expect(migrated.applicationID == Schema.applicationID)
        #expect(migrated.columns.last == "note")
        #expect(migrated.indexes.contains("garage_object_note"))
        #expect(migrated.integrity == ["ok"])

        // Opening it again runs nothing.
        do {
            let garage = Garage(store: try Store.open(path: fixture.path, busyTimeout: 10, migrations: migrations))
            #expect(try garage.count(FixtureV1.Sailor.self) == 7)
            #expect(try garage.retrieve(FixtureV1.Fleet.self, identifier: "Black Flag")?.flagship.crew.count == 2)
        }
        #expect(runs.read { $0 } == 1)
        let reopened = try Self.inspect(fixture.path)
        #expect(reopened.userVersion == Schema.formatVersion + 1)
        #expect(reopened.schema == migrated.schema)

        // This GarageLite reads up to its format version: it refuses the migrated store, untouched.
        let before = try fixture.bytes()
        #expect(throws: GarageError.newerFormatVersion(path: fixture.path, version: Schema.formatVersion + 1, supportedVersion: Schema.formatVersion)) {
            try Garage(path: fixture.path)
        }
        #expect(try fixture.bytes() == before)
        #expect(try FileManager.default.contentsOfDirectory(atPath: fixture.directory.url.path) == ["graph.garage"])
        fixture.expectOriginalUnchanged()
    }

    @Test func aFailingMigrationLeavesTheStoreAtItsVersion() throws {
        struct Interrupted: Error {}
        let fixture = try FixtureFile("plain.garage")
        let original = try Self.inspect(fixture.path)
        let version2: Schema.Migration = (Schema.formatVersion + 1, { db in
            try db.execute(sql: "ALTER TABLE garage_object ADD COLUMN note TEXT")
            try db.execute(sql: "UPDATE garage_object SET data = '{}'")
            throw Interrupted()
        })
        let migrations = Schema.migrations + [version2]
        #expect(throws: GarageError.cannotOpenStore(path: fixture.path, reason: "Interrupted()")) {
            try Store.open(path: fixture.path, busyTimeout: 10, migrations: migrations)
        }
        let after = try Self.inspect(fixture.path)
        #expect(after.userVersion == 1)
        #expect(after.columns == original.columns)
        #expect(after.schema == original.schema)
        let garage = try Garage(path: fixture.path)
        let gadget = try #require(try garage.retrieve(FixtureV1.Gadget.self, identifier: "g-full"))
        #expect(gadget.cost.description == "12345.678901234567890123")
        fixture.expectOriginalUnchanged()
    }

    @Test(arguments: [Schema.formatVersion + 1, 99])
    func aStoreOfANewerVersionIsRefusedUntouched(version: Int) throws {
        let fixture = try FixtureFile("sync.garage")
        do {
            let queue = try DatabaseQueue(path: fixture.path)
            try queue.writeWithoutTransaction { db in
                try db.execute(sql: "PRAGMA user_version = \(version)")
                try db.checkpoint(.truncate)
            }
            try queue.close()
        }
        let folder = fixture.directory.url.path
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder) == ["sync.garage"])
        let before = try fixture.bytes()

        #expect(throws: GarageError.newerFormatVersion(path: fixture.path, version: version, supportedVersion: Schema.formatVersion)) {
            try Garage(path: fixture.path)
        }
        #expect(try fixture.bytes() == before)
        // Refused from the file's header, before SQLite opened it: no -wal or -shm.
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder) == ["sync.garage"])
        fixture.expectOriginalUnchanged()
    }

    @Test func aNewerVersionStillInTheWALIsRefusedUntouched() throws {
        let fixture = try FixtureFile("sync.garage")
        let wal = URL(fileURLWithPath: fixture.path + "-wal")
        // The newer version is committed to the WAL only: while this connection stays open,
        // nothing checkpoints it, and the main file's header still says version 1.
        let queue = try DatabaseQueue(path: fixture.path)
        try queue.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA user_version = \(Schema.formatVersion + 1)")
        }
        let before = try fixture.bytes()
        let walBefore = try Data(contentsOf: wal)
        #expect(before == fixture.originalBytes)
        #expect(!walBefore.isEmpty)

        #expect(throws: GarageError.newerFormatVersion(path: fixture.path, version: Schema.formatVersion + 1, supportedVersion: Schema.formatVersion)) {
            try Garage(path: fixture.path)
        }
        #expect(try fixture.bytes() == before)
        #expect(try Data(contentsOf: wal) == walBefore)
        try queue.close()
        let after = try Self.inspect(fixture.path)
        #expect(after.userVersion == Schema.formatVersion + 1)
        #expect(after.rowCount == 10)
        fixture.expectOriginalUnchanged()
    }

    /// Reads the store's format with plain GRDB, after checkpointing its WAL into the file.
    static func inspect(_ path: String) throws -> (
        userVersion: Int, applicationID: Int32, schema: [String], columns: [String], indexes: [String],
        integrity: [String], rowCount: Int
    ) {
        let queue = try DatabaseQueue(path: path)
        defer { try? queue.close() }
        return try queue.writeWithoutTransaction { db in
            try db.checkpoint(.truncate)
            return (try Int.fetchOne(db, sql: "PRAGMA user_version") ?? -1,
                    try Int32.fetchOne(db, sql: "PRAGMA application_id") ?? 0,
                    try String.fetchAll(db, sql: "SELECT type || ' ' || name || ': ' || ifnull(sql, '') FROM sqlite_master ORDER BY name"),
                    try db.columns(in: "garage_object").map(\.name),
                    try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'index' ORDER BY name"),
                    try String.fetchAll(db, sql: "PRAGMA integrity_check"),
                    try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM garage_object") ?? -1)
        }
    }
}
