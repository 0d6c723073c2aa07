import Crypto
import Foundation
import GarageFixtureModels
import Testing
@testable import GarageLite
import GarageLiteSQLite

/// The golden files of format version 2 (tombstones), and the move of every version 1 file to
/// version 2. Each test opens copies (see `FixtureFile`).
@Suite("Golden files of format version 2", .firstPassOnly)
struct FixtureV2Tests {
    typealias V1 = FixtureV1

    static let names = ["plain", "graph", "sync", "hashable", "encrypted", "empty"]

    @Test(arguments: names)
    func eachFileIsAWholeVersion2Store(name: String) throws {
        let fixture = try FixtureFile("\(name).garage", version: 2)
        let file = try SQLiteFile(fixture.path)
        let (userVersion, integrity, columns) = (try file.int("PRAGMA user_version"), try file.integrityCheck(),
                                                 try file.columns(in: "garage_object"))
        try file.close()
        #expect(userVersion == 2)
        #expect(integrity == ["ok"])
        #expect(columns.suffix(5) == ["isDeleted", "isRemote", "attempts", "retryAt", "lastError"])
        fixture.expectOriginalUnchanged()
    }

    /// What a store holds, without what depends on the moment or the process that wrote it
    /// (dates, claim identifiers, ciphertexts, the order of a dictionary's members), nor
    /// whether a row may be on the server (see ``aMigratedStoreKnowsWhatMayBeOnTheServer()``).
    static func content(_ path: String) throws -> [String] {
        let rows = try SQLiteFile(path).rows("""
            SELECT type || '|' || identifier, data, isEncrypted,
                syncStatus || '|' || revision || '|' || isRoot || '|' || refs || '|' || (claim IS NOT NULL)
            FROM garage_object WHERE isDeleted = 0 ORDER BY type, identifier
            """)
        return try rows.map { row in
            let key = try #require(row[0]), data = try #require(row[1]), rest = try #require(row[3])
            let isEncrypted = try #require(row[2]) != "0"
            guard !isEncrypted else { return "\(key)|encrypted|\(rest)" }
            let object = try JSONSerialization.jsonObject(with: Data(data.utf8), options: [.fragmentsAllowed])
            let sorted = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .fragmentsAllowed])
            return "\(key)|\(String(decoding: sorted, as: UTF8.self))|\(rest)"
        }
    }

    /// Each version 1 file, moved to version 2 when opened, holds what the version 2 file
    /// holds: the migration from version 1 is the format 2 writer's result.
    @Test(arguments: names)
    func version1FilesMoveToWhatVersion2Holds(name: String) throws {
        let old = try FixtureFile("\(name).garage", version: 1)
        let new = try FixtureFile("\(name).garage", version: 2)
        let reports = try [old, new].map { try Garage(path: $0.path).check().description }
        #expect(reports[0] == reports[1].replacingOccurrences(of: new.path, with: old.path))
        var migrated = try Self.content(old.path)
        let written = try Self.content(new.path)
        if name == "sync" {
            // Version 2 stores an object parked saying .syncing without a claim as .notSynced.
            let index = try #require(migrated.firstIndex { $0.hasPrefix("Parcel|p-syncing|") })
            #expect(migrated[index].hasSuffix("|2|1|1|[]|0"))
            migrated[index] = String(migrated[index].dropLast("|2|1|1|[]|0".count)) + "|1|1|1|[]|0"
        }
        #expect(migrated == written)
        #expect(try SQLiteFile(old.path).int("PRAGMA user_version") == Schema.formatVersion)
        old.expectOriginalUnchanged()
        new.expectOriginalUnchanged()
    }

    @Test func aMigratedStoreKnowsWhatMayBeOnTheServer() throws {
        let fixture = try FixtureFile("sync.garage", version: 1)
        let garage = try Garage(path: fixture.path)
        let remote = try SQLiteFile(fixture.path).strings("SELECT identifier FROM garage_object WHERE isRemote ORDER BY identifier")
        // Every row with a sync status: a version 1 row can't say whether it was ever uploaded.
        #expect(remote == ["7", "m-claimed", "m-waiting", "p-edited", "p-notSynced", "p-set", "p-synced", "p-syncing"])
        // A parcel that may be on the server leaves a tombstone; one that has no status goes.
        try garage.delete(Parcel.self, identifier: "p-synced")
        try garage.delete(Parcel.self, identifier: "p-undetermined")
        let claim = try garage.claim(Parcel.self, limit: 10)
        #expect(claim.deletions == ["p-synced"])
        #expect(try garage.count(Parcel.self) == 4)
        fixture.expectOriginalUnchanged()
    }

    @Test func theVersion2SyncFileHoldsATombstone() throws {
        let fixture = try FixtureFile("sync.garage", version: 2)
        let garage = try Garage(path: fixture.path)
        #expect(try garage.retrieve(Parcel.self, identifier: "p-deleted") == nil)
        #expect(try garage.count(Parcel.self) == 6)
        #expect(!(try garage.identifiers(of: Parcel.self).contains("p-deleted")))
        let claim = try garage.claim(Parcel.self, limit: 10)
        #expect(claim.deletions == ["p-deleted"])
        #expect(claim.identifiers.sorted() == ["p-edited", "p-notSynced", "p-syncing"])
        try garage.complete(claim)
        let rows = try SQLiteFile(fixture.path).int("SELECT COUNT(*) FROM garage_object WHERE identifier = 'p-deleted'")
        #expect(rows == 0)
        fixture.expectOriginalUnchanged()
    }

    @Test func theVersion2EncryptedFileReadsWithItsKey() throws {
        let fixture = try FixtureFile("encrypted.garage", version: 2)
        let garage = try Garage(path: fixture.path)
        garage.dataEncryptionDelegate = TestEncryptor(key: SymmetricKey(data: V1.encryptionKey))
        let secrets = try garage.retrieveAll(V1.Secret.self)
        let plaintext = try SQLiteFile(fixture.path).int("SELECT COUNT(*) FROM garage_object WHERE type = 'Secret' AND isEncrypted = 0")
        #expect(secrets.count == 3)
        #expect(plaintext == 1)
        fixture.expectOriginalUnchanged()
    }

    typealias Parcel = FixtureV1.Parcel
}
