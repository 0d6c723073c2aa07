import Foundation
import GarageFixtureModels
import Testing
@testable import GarageLite
import GarageLiteSQLite

/// The golden files of format version 4 (the store's facts, `garage_meta`, which an encrypted
/// store keeps its key record in), and the move of every earlier file to version 4. Each test
/// opens copies (see `FixtureFile`).
@Suite("Golden files of format version 4", .firstPassOnly)
struct FixtureV4Tests {
    static let names = FixtureV2Tests.names
    static let referenceTriggers = ["garage_reference_delete", "garage_reference_insert", "garage_reference_update"]
    static let encryptionTriggers = ["garage_encrypted_insert", "garage_encrypted_update",
                                     "garage_encryption_count_insert", "garage_encryption_count_update"]

    private static func header(_ path: String) throws -> (version: Int?, integrity: [String], triggers: [String], meta: [String]) {
        let file = try SQLiteFile(path)
        defer { try? file.close() }
        return (try file.int("PRAGMA user_version"),
                try file.integrityCheck(),
                try file.strings("SELECT name FROM sqlite_master WHERE type = 'trigger' ORDER BY name"),
                try file.strings("SELECT name FROM garage_meta ORDER BY name"))
    }

    @Test(arguments: names + ["locked"])
    func eachFileIsAWholeVersion4Store(name: String) throws {
        let fixture = try FixtureFile("\(name).garage", version: 4)
        let header = try Self.header(fixture.path)
        #expect(header.version == 4)
        #expect(header.integrity == ["ok"])
        if name == "locked" {
            #expect(header.triggers == (Self.encryptionTriggers + Self.referenceTriggers).sorted())
            #expect(header.meta == ["encryption", "encryptions", "lastKeyID"])
        } else {
            #expect(header.triggers == Self.referenceTriggers)
            #expect(header.meta == [])
        }
        #expect(try FixtureV3Tests.index(fixture.path) == FixtureV3Tests.expectedIndex(fixture.path))
        fixture.expectOriginalUnchanged()
    }

    /// Each file of versions 1 to 3, moved to version 4 when opened, holds what the version 4
    /// file holds, and has no key record.
    @Test(arguments: [1, 2, 3], names)
    func earlierFilesMoveToWhatVersion4Holds(version: Int, name: String) throws {
        let old = try FixtureFile("\(name).garage", version: version)
        let new = try FixtureFile("\(name).garage", version: 4)
        let reports = try [old, new].map { try Garage(path: $0.path).check().description }
        #expect(reports[0] == reports[1].replacingOccurrences(of: new.path, with: old.path))
        #expect(try FixtureV3Tests.migratedContent(old.path, from: version, name: name) == FixtureV2Tests.content(new.path))
        #expect(try FixtureV3Tests.index(old.path) == FixtureV3Tests.index(new.path))
        let header = try Self.header(old.path)
        #expect(header.version == Schema.formatVersion && header.meta == [] && header.triggers == Self.referenceTriggers)
        #expect(try Garage(path: old.path).encryptionStatus().isEncrypted == false)
        old.expectOriginalUnchanged()
        new.expectOriginalUnchanged()
    }

    /// locked.garage opens with its passphrase only, and reads every object, its rotated key
    /// and its keyed identifier as they were written.
    @Test func theLockedFileOpensWithItsPassphraseOnly() throws {
        let fixture = try FixtureFile("locked.garage", version: 4)
        #expect(throws: GarageError.encryptionKeyRequired(path: fixture.path)) { try Garage(path: fixture.path) }
        #expect {
            try Garage(path: fixture.path, encryptionKey: .passphrase(FixtureV4.firstPassphrase))
        } throws: { error in
            if case GarageError.wrongEncryptionKey(fixture.path, _) = error { return true }
            return false
        }
        let garage = try Garage(path: fixture.path, encryptionKey: .passphrase(FixtureV4.passphrase))
        let secrets = try garage.retrieveAll(FixtureV1.Secret.self).sorted { $0.id < $1.id }
        #expect(secrets.map(\.id) == ["s-1", "s-2"])
        #expect(secrets.map(\.text) == ["The treasure is under the old oak 🌳", "Ünïcödé sécret"])
        #expect(secrets.map(\.pin) == [1234, 987_654])
        #expect(secrets.allSatisfy { $0.keeper.codename == "Nightjar" })
        #expect(try garage.retrieve(FixtureV1.Secret.self, identifier: "s-gone") == nil)

        // The tag's identifier is an HMAC with the store's identity key, not the SHA-256 that
        // hashable.garage holds for the same tag.
        let tag = FixtureV1.Tag(label: "urgent", color: "red")
        let keyed = "defd72bfbd1c79379e9efe72fc588e80e9bcf1b63c40432471a00fe628b11fbf"
        #expect(try garage.identifiers(of: FixtureV1.Tag.self) == [keyed])
        #expect(try garage.identifier(for: tag) == keyed)
        #expect(try garage.retrieve(FixtureV1.Tag.self, identifier: keyed)?.label == "urgent")
        let hashable = try FixtureFile("hashable.garage", version: 4)
        #expect(try Garage(path: hashable.path).identifier(for: tag) != keyed)

        let status = try garage.encryptionStatus()
        #expect(status.isEncrypted && !status.isUnfinished)
        #expect(status.keyDerivation == "PBKDF2-SHA256, 210000 rounds")
        #expect(status.currentKeyID == 2 && status.keyIDs == [2])
        #expect(status.encryptions == 4)
        #expect(try garage.check().isOK)
        fixture.expectOriginalUnchanged()
    }
}
