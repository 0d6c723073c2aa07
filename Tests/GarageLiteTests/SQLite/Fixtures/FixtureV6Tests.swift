import Crypto
import Foundation
import GarageFixtureModels
import Testing
@testable import GarageLite

/// The golden files of format version 6 (the rows' bases, for three-way merges), and the move
/// of every earlier file to version 6. Each test opens copies (see `FixtureFile`).
@Suite("Golden files of format version 6", .firstPassOnly)
struct FixtureV6Tests {
    static let names = FixtureV2Tests.names

    /// The store's version, its integrity, and its object table's columns.
    private static func header(_ path: String) throws -> (version: Int?, integrity: [String], columns: [String]) {
        let file = try SQLiteFile(path)
        defer { try? file.close() }
        return (try file.int("PRAGMA user_version"), try file.integrityCheck(),
                try file.strings("SELECT name FROM pragma_table_info('garage_object') ORDER BY cid"))
    }

    /// Each row's identifier, status, and its base's content (its `contents`, or `text`), "-" without one.
    private static func bases(_ path: String) throws -> [String] {
        let file = try SQLiteFile(path)
        defer { try? file.close() }
        return try file.rows("""
            SELECT identifier, syncStatus, isDeleted, CASE WHEN base IS NULL THEN '-' WHEN isEncrypted THEN 'sealed'
                ELSE json_extract(base, '$.contents') END
            FROM garage_object WHERE type = 'Parcel' ORDER BY identifier
            """).map { $0.map { $0 ?? "nil" }.joined(separator: " ") }
    }

    @Test(arguments: names + ["locked", "bases"])
    func eachFileIsAWholeVersion6Store(name: String) throws {
        let fixture = try FixtureFile("\(name).garage", version: 6)
        let header = try Self.header(fixture.path)
        #expect(header.version == 6)
        #expect(header.integrity == ["ok"])
        #expect(header.columns.suffix(2) == ["base", "serverVersion"])
        #expect(try FixtureV3Tests.index(fixture.path) == FixtureV3Tests.expectedIndex(fixture.path))
        fixture.expectOriginalUnchanged()
    }

    /// Each file of versions 1 to 5, moved to version 6 when opened, holds what the version 6
    /// file holds, with the same columns; its rows have no base (an older store kept none).
    @Test(arguments: [1, 2, 3, 4, 5], names)
    func earlierFilesMoveToWhatVersion6Holds(version: Int, name: String) throws {
        let old = try FixtureFile("\(name).garage", version: version)
        let new = try FixtureFile("\(name).garage", version: 6)
        // Read before a garage opens it: the claim in sync.garage is the generator's, a process
        // that ended, which a garage releases at open (older files' claims name no process).
        let written = try FixtureV2Tests.content(new.path)
        let reports = try [old, new].map { try Garage(path: $0.path).check().description }
        #expect(reports[0] == reports[1].replacingOccurrences(of: new.path, with: old.path))
        #expect(try FixtureV3Tests.migratedContent(old.path, from: version, name: name) == written)
        #expect(try FixtureV3Tests.index(old.path) == FixtureV3Tests.index(new.path))
        let (oldHeader, newHeader) = (try Self.header(old.path), try Self.header(new.path))
        #expect(oldHeader.version == 6 && oldHeader.integrity == ["ok"])
        #expect(oldHeader.columns == newHeader.columns)
        let file = try SQLiteFile(old.path)
        #expect(try file.int("SELECT COUNT(*) FROM garage_object WHERE base IS NOT NULL") == 0)
        try file.close()
        old.expectOriginalUnchanged()
        new.expectOriginalUnchanged()
    }

    /// bases.garage holds the base of each kind of local change, as the rules say: a downloaded
    /// object edited (the downloaded version), one edited during its upload (the version
    /// uploaded), one deleted (its tombstone's), none for an unchanged one; and sync.garage's
    /// edited `.synced` parcel and tombstone have theirs.
    @Test func theBasesAreThoseOfTheRules() throws {
        let bases = try FixtureFile("bases.garage", version: 6)
        #expect(try Self.bases(bases.path) == [
            "p-deleted 1 1 Vase", "p-downloaded 3 0 -", "p-during 1 0 Clock", "p-edited 1 0 Kettle", "p-synced 3 0 -",
            "p-uploaded 3 0 -",
        ])
        let sync = try FixtureFile("sync.garage", version: 6)
        #expect(try Self.bases(sync.path).filter { !$0.hasSuffix(" -") } == ["p-deleted 1 1 Umbrella", "p-edited 1 0 Chair"])
        bases.expectOriginalUnchanged()
        sync.expectOriginalUnchanged()
    }

    /// The server versions a sync engine recorded: of an upload it accepted, of a download.
    @Test func theServerVersionsAreThoseTheEngineRecorded() throws {
        let fixture = try FixtureFile("bases.garage", version: 6)
        let garage = try Garage(path: fixture.path)
        #expect(try garage.metadata(FixtureV1.Parcel.self, identifier: "p-uploaded")?.serverVersion == "v1")
        #expect(try garage.metadata(FixtureV1.Parcel.self, identifier: "p-downloaded")?.serverVersion == "s7")
        #expect(try garage.metadata(FixtureV1.Parcel.self, identifier: "p-synced")?.serverVersion == nil)
        fixture.expectOriginalUnchanged()
    }

    /// An encrypted base reads with the row's key, and a re-encryption rewrites it with the
    /// data, so that it still reads once the old key is gone.
    @Test func anEncryptedBaseFollowsItsRow() throws {
        let fixture = try FixtureFile("bases.garage", version: 6)
        let key = ObjectKey(typeName: "Secret", identifier: "s-edited")
        func base() throws -> String {
            let file = try SQLiteFile(fixture.path)
            defer { try? file.close() }
            return try #require(try file.string("SELECT base FROM garage_object WHERE type = 'Secret' AND identifier = 's-edited'"))
        }
        func decrypted(_ garage: Garage) throws -> String {
            String(decoding: try garage.configuration().encryption.decrypt(try base(), sealedFor: key, naming: key), as: UTF8.self)
        }
        let garage = try Garage(path: fixture.path)
        garage.dataEncryptionDelegate = TestEncryptor(key: SymmetricKey(data: FixtureV1.encryptionKey))
        #expect(try decrypted(garage).contains("First draft"))
        let before = try base()
        let other = TestEncryptor()
        garage.dataEncryptionDelegate = other
        #expect(throws: (any Error).self) { try decrypted(garage) }
        garage.dataEncryptionDelegate = TestEncryptor(key: SymmetricKey(data: FixtureV1.encryptionKey))
        _ = try garage.decryptAllObjects()
        #expect(try base() != before)
        #expect(try base().contains("First draft"))   // decrypted with its row
        fixture.expectOriginalUnchanged()
    }
}
