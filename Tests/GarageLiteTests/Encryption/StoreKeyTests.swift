import Crypto
import Foundation
import GRDB
@testable import GarageLite
import Testing

struct SKNote: Codable, Identifiable, Sendable, Equatable, Syncable {
    var id: String
    var text: String
    var syncStatus: SyncStatus = .notSynced
}

final class SKFolder: Codable, Identifiable, @unchecked Sendable {
    // (A class model, as apps write them; the tests use it from one task at a time.)
    var id: String
    var title: String
    var notes: [SKNote]

    init(id: String, title: String, notes: [SKNote]) {
        self.id = id
        self.title = title
        self.notes = notes
    }
}

struct SKTag: Codable, Hashable, Sendable {
    var label: String
}

/// Issue 14: a store locked with a key: the key check at open, the store's memory of being
/// encrypted, passphrase changes, rotations, the nonce budget, keyed identifiers.
@Suite("Encryption: the store's key")
struct StoreKeyTests {
    /// The smallest iteration count, so that the tests open stores quickly.
    static func passphrase(_ text: String) -> StoreKey { .passphrase(text, rounds: StoreKey.minimumRounds) }

    private func isWrongKey(_ error: any Error, _ path: String) -> Bool {
        if case GarageError.wrongEncryptionKey(path, _) = error { return true }
        return false
    }

    private func isStale(_ error: any Error, _ path: String) -> Bool {
        if case GarageError.staleEncryptionKey(path, _) = error { return true }
        return false
    }

    private func storedData(_ path: String) throws -> [String: String] {
        let queue = try DatabaseQueue(path: path)
        defer { try? queue.close() }
        return try queue.read { db in
            Dictionary(uniqueKeysWithValues: try Row.fetchAll(db, sql: "SELECT identifier, data FROM garage_object").map {
                (($0["identifier"] as String?) ?? "", ($0["data"] as String?) ?? "")
            })
        }
    }

    @Test func aStoreLockedWithAPassphraseOpensWithItAndNothingElse() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("notes.sqlite")
        do {
            let garage = try Garage(path: path, encryptionKey: Self.passphrase("open sesame"))
            try garage.park(SKFolder(id: "f1", title: "Folder-Marker", notes: [SKNote(id: "n1", text: "Note-Marker")]))
        }
        #expect(throws: GarageError.encryptionKeyRequired(path: path)) { try Garage(path: path) }
        #expect(throws: GarageError.encryptionKeyRequired(path: path)) { try Garage.readOnly(path: path) }
        #expect { try Garage(path: path, encryptionKey: Self.passphrase("open sesame!")) } throws: { isWrongKey($0, path) }
        #expect { try Garage(path: path, encryptionKey: .key(SymmetricKey(size: .bits256))) } throws: { isWrongKey($0, path) }

        let garage = try Garage(path: path, encryptionKey: Self.passphrase("open sesame"))
        let folder = try #require(try garage.retrieve(SKFolder.self, identifier: "f1"))
        #expect(folder.title == "Folder-Marker" && folder.notes == [SKNote(id: "n1", text: "Note-Marker")])
        let reader = try Garage.readOnly(path: path, encryptionKey: Self.passphrase("open sesame"))
        #expect(try reader.retrieve(SKNote.self, identifier: "n1")?.text == "Note-Marker")
        let status = try garage.encryptionStatus()
        #expect(status.isEncrypted && !status.isUnfinished && status.keyIDs == [1] && status.currentKeyID == 1)
        #expect(status.keyDerivation == "PBKDF2-SHA256, \(StoreKey.minimumRounds) rounds")
        #expect(status.encryptions == 2)
        for marker in ["Folder-Marker", "Note-Marker", "open sesame"] {
            #expect(storeFileBytes(path).range(of: Data(marker.utf8)) == nil, "\(marker) is in the files")
        }
    }

    @Test func aStoreLockedWithAKeyOpensWithThatKeyOnly() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("notes.sqlite")
        let key = SymmetricKey(size: .bits256)
        do {
            let garage = try Garage(path: path, encryptionKey: .key(key))
            try await garage.park(SKNote(id: "n1", text: "hello"))
        }
        #expect { try Garage(path: path, encryptionKey: Self.passphrase("hello")) } throws: { isWrongKey($0, path) }
        #expect { try Garage(path: path, encryptionKey: .key(SymmetricKey(size: .bits256))) } throws: { isWrongKey($0, path) }
        #expect(throws: GarageError.self) { try Garage(path: path, encryptionKey: .key(SymmetricKey(size: .bits128))) }
        let garage = try Garage(path: path, encryptionKey: .key(key))
        #expect(try await garage.retrieve(SKNote.self, identifier: "n1")?.text == "hello")
        #expect(try await garage.encryptionStatus().keyDerivation == "HKDF-SHA256")
        #expect(throws: GarageError.self) { try Garage(path: directory.path("weak.sqlite"), encryptionKey: .passphrase("x", rounds: 1_000)) }
    }

    @Test func aPlaintextStoreOpenedWithAKeyIsEncryptedAndKeepsNoPlaintext() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("notes.sqlite")
        do {
            let garage = try Garage(path: path)
            try garage.parkAll((0..<700).map { SKNote(id: "n\($0)", text: "Plain-Marker-\($0)") })
            try garage.delete(SKNote.self, identifier: "n0")
            #expect(try garage.encryptionStatus().isEncrypted == false)
        }
        #expect(storeFileBytes(path).range(of: Data("Plain-Marker-1".utf8)) != nil, "the test must start from plaintext")
        let garage = try Garage(path: path, encryptionKey: Self.passphrase("pw"))
        #expect(try garage.count(SKNote.self) == 699)
        #expect(try garage.retrieve(SKNote.self, identifier: "n699")?.text == "Plain-Marker-699")
        #expect(try garage.encryptionStatus().isUnfinished == false)
        let queue = try DatabaseQueue(path: path)
        #expect(try queue.read { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM garage_object WHERE isEncrypted = 0") } == 0)
        try queue.close()
        for marker in ["Plain-Marker-0", "Plain-Marker-1", "Plain-Marker-699"] {
            #expect(storeFileBytes(path).range(of: Data(marker.utf8)) == nil, "\(marker) is in the files")
        }
        // Already encrypted: nothing to do; an unencrypted row found later is not adopted.
        #expect(try garage.encryptUnencryptedObjects() == 0)
        try rawWrite(path, Schema.dropEncryptionGuard + #"INSERT INTO garage_object (type, identifier, data, creationDate, modificationDate) VALUES ('SKNote', 'slipped', '{"id":"slipped","text":"x"}', 0, 0)"#)
        #expect(throws: GarageError.self) { try garage.encryptUnencryptedObjects() }
        #expect(throws: GarageError.unencryptedRow(typeName: "SKNote", identifier: "slipped")) {
            try garage.retrieve(SKNote.self, identifier: "slipped")
        }
    }

    @Test func aGarageWithoutTheKeyCanNeitherReadNorWritePlaintextInAnEncryptedStore() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("notes.sqlite")
        let plain = try Garage(path: path)
        try plain.park(SKNote(id: "n1", text: "before"))
        let locked = try Garage(path: path, encryptionKey: Self.passphrase("pw"))
        try locked.park(SKNote(id: "n2", text: "after"))
        // The garage opened before the store was encrypted.
        #expect(throws: GarageError.encryptionKeyRequired(path: path)) { try plain.park(SKNote(id: "n3", text: "Leak-Marker")) }
        #expect(throws: GarageError.missingEncryptionDelegate(typeName: "SKNote", identifier: "n2")) {
            try plain.retrieve(SKNote.self, identifier: "n2")
        }
        // Nor can anything else write a plaintext row; a tombstone (no data) is fine.
        #expect(throws: DatabaseError.self) {
            try rawWrite(path, """
                INSERT INTO garage_object (type, identifier, data, creationDate, modificationDate) VALUES ('SKNote', 'n4', '{"id":"n4","text":"x"}', 0, 0)
                """)
        }
        #expect(throws: DatabaseError.self) {
            try rawWrite(path, #"UPDATE garage_object SET data = '{"id":"n2","text":"x"}', isEncrypted = 0 WHERE identifier = 'n2'"#)
        }
        try locked.setSyncStatus(.synced, for: SKNote(id: "n2", text: "after"))
        try locked.delete(SKNote.self, identifier: "n2")
        #expect(try locked.retrieveAll(SKNote.self).map(\.id) == ["n1"])
        #expect(storeFileBytes(path).range(of: Data("Leak-Marker".utf8)) == nil)
    }

    /// Parks, re-parks, deletes, `deleteAll`, garbage collection, a setting and a rotation in a
    /// locked store: none of the objects' content ever reaches the three files.
    @Test func noPlaintextReachesTheFilesWhateverTheStoreDoes() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("notes.sqlite")
        let garage = try Garage(path: path, encryptionKey: Self.passphrase("pw"))
        func expectNoMarker(_ step: String) {
            let bytes = storeFileBytes(path)
            for marker in ["Marker-A", "Marker-B", "Marker-C", "Marker-D", "Setting-Marker"] {
                #expect(bytes.range(of: Data(marker.utf8)) == nil, "\(marker) is in the files after \(step)")
            }
        }
        try garage.parkAll((0..<300).map { SKNote(id: "n\($0)", text: "Marker-A \($0)") })
        expectNoMarker("parks")
        try garage.parkAll((0..<300).map { SKNote(id: "n\($0)", text: "Marker-B \($0)") })
        expectNoMarker("re-parks")
        try garage.park(SKFolder(id: "f", title: "Marker-C", notes: [SKNote(id: "child", text: "Marker-D")]))
        try garage.park(SKFolder(id: "f", title: "Marker-C", notes: []))        // the child is now unreachable
        _ = try garage.collectGarbage(dryRun: false)
        expectNoMarker("garbage collection")
        try garage.set("Setting-Marker", for: SettingsKey<GlobalSettings, String>(id: "secret", defaultValue: ""))
        for index in 0..<100 { try garage.delete(SKNote.self, identifier: "n\(index)") }
        _ = try garage.deleteAll(SKNote.self)
        expectNoMarker("deletes and deleteAll")
        try garage.rekey(to: Self.passphrase("pw2"))
        expectNoMarker("rekey")
        #expect(try garage.value(for: SettingsKey<GlobalSettings, String>(id: "secret", defaultValue: "")) == "Setting-Marker")
    }

    @Test func changingThePassphraseRewritesNoObject() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("notes.sqlite")
        let garage = try Garage(path: path, encryptionKey: Self.passphrase("old"))
        let before = try { () throws -> [String: String] in
            try garage.parkAll((0..<50).map { SKNote(id: "n\($0)", text: "text \($0)") })
            let before = try storedData(path)
            try garage.changeEncryptionKey(to: Self.passphrase("new"))
            return before
        }()
        #expect(try storedData(path) == before)
        try await garage.changeEncryptionKey(to: Self.passphrase("newer"))
        #expect(try storedData(path) == before)
        try await garage.park(SKNote(id: "n50", text: "still parks"))
        #expect { try Garage(path: path, encryptionKey: Self.passphrase("old")) } throws: { isWrongKey($0, path) }
        #expect { try Garage(path: path, encryptionKey: Self.passphrase("new")) } throws: { isWrongKey($0, path) }
        let reopened = try Garage(path: path, encryptionKey: Self.passphrase("newer"))
        #expect(try await reopened.count(SKNote.self) == 51)
        #expect(try await reopened.encryptionStatus().keyIDs == [1])
        // A garage without a key can't change it.
        await #expect(throws: GarageError.self) { try await Garage.inMemory().changeEncryptionKey(to: Self.passphrase("x")) }
    }

    @Test func rekeyRotatesTheDataKeyAndLeavesNoOldCiphertextOnDisk() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("notes.sqlite")
        let garage = try Garage(path: path, encryptionKey: Self.passphrase("one"))
        let (tagID, oldData, rekeyed) = try { () throws -> (String, [String: String], Int) in
            try garage.parkAll((0..<1_200).map { SKNote(id: "n\($0)", text: "Rotated-Marker \($0)") })
            let tagID = try garage.identifier(for: SKTag(label: "pin 1234"))
            try garage.park(SKTag(label: "pin 1234"))
            let oldData = try storedData(path)
            return (tagID, oldData, try garage.rekey(to: Self.passphrase("two")))
        }()
        #expect(rekeyed == 1_201)
        var status = try await garage.encryptionStatus()
        #expect(status.currentKeyID == 2 && status.keyIDs == [2] && !status.isUnfinished)
        #expect(status.encryptions == 1_201)
        let newData = try storedData(path)
        #expect(newData.values.allSatisfy { AESGCMEncryptor.keyID(ofEnvelope: $0) == 2 })
        let files = storeFileBytes(path)
        for old in oldData.values.prefix(20) {
            #expect(files.range(of: Data(old.utf8)) == nil, "an old ciphertext is in the files")
        }
        #expect(files.range(of: Data("Rotated-Marker".utf8)) == nil)

        #expect(try await garage.rekey(to: Self.passphrase("three")) == 1_201)
        status = try await garage.encryptionStatus()
        #expect(status.currentKeyID == 3 && status.keyIDs == [3])
        #expect { try Garage(path: path, encryptionKey: Self.passphrase("two")) } throws: { isWrongKey($0, path) }
        let reopened = try Garage(path: path, encryptionKey: Self.passphrase("three"))
        #expect(try await reopened.retrieve(SKNote.self, identifier: "n1199")?.text == "Rotated-Marker 1199")
        // The identity key stays: the tag keeps its identifier.
        #expect(try reopened.identifier(for: SKTag(label: "pin 1234")) == tagID)
        #expect(try await reopened.retrieve(SKTag.self, identifier: tagID) == SKTag(label: "pin 1234"))
        #expect(try await reopened.check().isOK)
    }

    /// Garages opened before another decrypted the store, or decrypted it and locked it again
    /// with another key, can't write what no one could read (a newcomer's trial lost objects so).
    @Test func aGarageThatMissedADecryptionIsRefusedItsEncryptedWrites() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("notes.sqlite")
        let key = SymmetricKey(size: .bits256)
        let stale = try Garage(path: path, encryptionKey: .key(key))
        try stale.park(SKNote(id: "n1", text: "one"))
        #expect(try Garage(path: path, encryptionKey: .key(key)).decryptAllObjects() == 1)
        #expect { try stale.park(SKNote(id: "n2", text: "two")) } throws: { isStale($0, path) }
        #expect(throws: GarageError.unencryptedRow(typeName: "SKNote", identifier: "n1")) {
            try stale.retrieve(SKNote.self, identifier: "n1")
        }
        #expect(try Garage(path: path).retrieveAll(SKNote.self).map(\.id) == ["n1"])

        let relocked = try Garage(path: path, encryptionKey: Self.passphrase("new"))
        #expect(try relocked.encryptionStatus().currentKeyID == 2)
        #expect { try stale.park(SKNote(id: "n3", text: "three")) } throws: { isStale($0, path) }
        #expect(try relocked.retrieveAll(SKNote.self).map(\.id) == ["n1"])
        // A cipher of one's own still writes into a decrypted store, with its own key ids.
        #expect(try relocked.decryptAllObjects() == 1)
        let custom = try Garage(path: path)
        custom.dataEncryptionDelegate = try AESGCMEncryptor(key: SymmetricKey(size: .bits256), keyID: 7)
        try custom.park(SKNote(id: "n4", text: "four"))
        #expect(try custom.count(SKNote.self) == 2)
        #expect(throws: GarageError.self) { try Garage(path: directory.path("empty.sqlite"), encryptionKey: .passphrase("")) }
    }

    /// A garage that missed another garage's rotation can't write with the old data key: the
    /// end of the rotation would make its objects unreadable.
    @Test func aGarageThatMissedARotationIsRefusedItsWrites() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("notes.sqlite")
        let stale = try Garage(path: path, encryptionKey: Self.passphrase("pw"))
        try stale.park(SKNote(id: "n1", text: "one"))
        let rotating = try Garage(path: path, encryptionKey: Self.passphrase("pw"))
        try rotating.rekey(to: Self.passphrase("pw"))
        #expect { try stale.park(SKNote(id: "n2", text: "two")) } throws: { isStale($0, path) }
        #expect { try stale.retrieve(SKNote.self, identifier: "n1") } throws: { isStale($0, path) }
        #expect(try rotating.retrieveAll(SKNote.self).map(\.id) == ["n1"])
        let reopened = try Garage(path: path, encryptionKey: Self.passphrase("pw"))
        try reopened.park(SKNote(id: "n2", text: "two"))
        #expect(try rotating.count(SKNote.self) == 2)
        // A cipher of its own with key id 1 is refused too, once the store is on key 2.
        let foreign = try Garage(path: directory.path("other.sqlite"))
        foreign.dataEncryptionDelegate = try AESGCMEncryptor(key: SymmetricKey(size: .bits256))
        try foreign.park(SKNote(id: "n3", text: "three"))
        let data = try #require(try storedData(directory.path("other.sqlite"))["n3"])
        #expect(throws: DatabaseError.self) {
            try rawWrite(path, "INSERT INTO garage_object (type, identifier, data, isEncrypted, creationDate, modificationDate) VALUES ('SKNote', 'n3', '\(data)', 1, 0, 0)")
        }
    }

    @Test func hashableIdentifiersAreKeyedPerStore() throws {
        let directory = try TemporaryDirectory()
        let tag = SKTag(label: "pin 1234")
        let plain = try Garage.inMemory().identifier(for: tag)
        let first = try Garage(path: directory.path("a.sqlite"), encryptionKey: Self.passphrase("same"))
        let second = try Garage(path: directory.path("b.sqlite"), encryptionKey: Self.passphrase("same"))
        let firstID = try first.identifier(for: tag)
        #expect(firstID != plain)
        #expect(firstID != (try second.identifier(for: tag)))
        #expect(firstID.count == 64 && firstID.allSatisfy(\.isHexDigit))
        try first.park(tag)
        try first.changeEncryptionKey(to: Self.passphrase("other"))
        #expect(try first.identifiers(of: SKTag.self) == [firstID])
        #expect(try first.identifier(for: tag) == firstID)
    }

    @Test func theNonceBudgetRefusesEncryptionsBeyondItUntilTheKeyRotates() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("notes.sqlite")
        let garage = try Garage(path: path, encryptionKey: Self.passphrase("pw"))
        try garage.park(SKNote(id: "n0", text: "zero"))
        try rawWrite(path, "UPDATE garage_meta SET value = \(Keyring.encryptionLimit - 1) WHERE name = 'encryptions'")
        try garage.park(SKNote(id: "n1", text: "one"))          // the last one the key may encrypt
        #expect(try garage.encryptionStatus().encryptions == Keyring.encryptionLimit)
        #expect(throws: GarageError.encryptionLimitReached(path: path, encryptions: Keyring.encryptionLimit)) {
            try garage.park(SKNote(id: "n2", text: "two"))
        }
        // Parking an unchanged object encrypts nothing new (its ciphertext is the same).
        try garage.park(SKNote(id: "n1", text: "one"))
        #expect(try garage.retrieve(SKNote.self, identifier: "n2") == nil)
        try garage.rekey(to: Self.passphrase("pw2"))
        #expect(try garage.encryptionStatus().encryptions == 2)
        try garage.park(SKNote(id: "n2", text: "two"))
        #expect(try garage.count(SKNote.self) == 3)
    }

    @Test func decryptingALockedStoreForgetsItsKey() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("notes.sqlite")
        do {
            let garage = try Garage(path: path, encryptionKey: Self.passphrase("pw"))
            try await garage.parkAll((0..<20).map { SKNote(id: "n\($0)", text: "text \($0)") })
            #expect(try await garage.decryptAllObjects() == 20)
            #expect(try await garage.encryptionStatus().isEncrypted == false)
            try await garage.park(SKNote(id: "n20", text: "Plain-Again"))
        }
        let garage = try Garage(path: path)
        #expect(try await garage.count(SKNote.self) == 21)
        #expect(storeFileBytes(path).range(of: Data("Plain-Again".utf8)) != nil)
        let queue = try DatabaseQueue(path: path)
        let (triggers, facts) = try await queue.read { db in
            (try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM sqlite_master WHERE type = 'trigger' AND name NOT LIKE 'garage_reference%'"),
             try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM garage_meta"))
        }
        try queue.close()
        #expect(triggers == 2 && facts == 1)     // the retired keys' triggers, and the last key id
    }

    @Test func anInterruptedDecryptionResumesWithTheKey() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("notes.sqlite")
        let garage = try Garage(path: path, encryptionKey: Self.passphrase("pw"))
        try garage.parkAll((0..<10).map { SKNote(id: "n\($0)", text: "text \($0)") })
        // What a decryption killed after its first step leaves: the record says so, the
        // triggers are gone, rows of both kinds.
        let record = try #require(try garage.keyring?.setting(.decrypting))
        try rawWrite(path, "UPDATE garage_meta SET value = '\(record.text)' WHERE name = 'encryption'")
        try rawWrite(path, Schema.dropEncryptionGuard)
        try rawWrite(path, #"UPDATE garage_object SET data = '{"id":"n0","text":"text 0"}', isEncrypted = 0 WHERE identifier = 'n0'"#)

        let reopened = try Garage(path: path, encryptionKey: Self.passphrase("pw"))
        #expect(try reopened.encryptionStatus().isUnfinished)
        #expect(try reopened.retrieveAll(SKNote.self).count == 10)
        #expect(try reopened.decryptAllObjects() == 9)
        #expect(try Garage(path: path).count(SKNote.self) == 10)
    }

    /// A decryption that stops on an object it can't decrypt leaves the garage reading what
    /// it decrypted, refuses a rotation meanwhile, and finishes once the object is gone.
    @Test func aDecryptionStoppedByABadObjectLeavesTheOthersReadable() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("notes.sqlite")
        let garage = try Garage(path: path, encryptionKey: Self.passphrase("pw"))
        let id = { (index: Int) in "n" + String(1_000 + index).dropFirst() }     // n000 ... n599, in key order
        try garage.parkAll((0..<600).map { SKNote(id: id($0), text: "text \($0)") })
        // An envelope of the current key (id 1) that doesn't authenticate, in the second batch.
        try rawWrite(path, "UPDATE garage_object SET data = 'AQAAAAE\(String(repeating: "A", count: 45))' WHERE identifier = 'n550'")
        #expect(throws: GarageError.self) { try garage.decryptAllObjects() }
        // The first batch was decrypted, the second not: both read.
        #expect(try garage.retrieve(SKNote.self, identifier: "n001")?.text == "text 1")
        #expect(try garage.retrieve(SKNote.self, identifier: "n599")?.text == "text 599")
        #expect(try garage.encryptionStatus().isUnfinished)
        #expect(throws: GarageError.self) { try garage.rekey(to: Self.passphrase("other")) }
        #expect(throws: GarageError.self) { try garage.changeEncryptionKey(to: Self.passphrase("other")) }
        try garage.delete(SKNote.self, identifier: "n550")
        #expect(try garage.decryptAllObjects() == 99)    // the batch that failed wrote nothing
        #expect(try Garage(path: path).count(SKNote.self) == 599)
    }

    @Test func aPassphraseOpensHoweverItsAccentsAreTypedAndImportsAreRefused() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("notes.sqlite")
        do {
            let garage = try Garage(path: path, encryptionKey: Self.passphrase("caf\u{E9}"))       // é, one scalar
            try garage.park(SKNote(id: "n1", text: "one"))
            #expect(throws: GarageError.self) {
                try garage.importGarageStorageStore(at: SyncAsyncParityTests.garageStorageStore)
            }
        }
        let garage = try Garage(path: path, encryptionKey: Self.passphrase("cafe\u{301}"))       // e and a combining accent
        #expect(try garage.count(SKNote.self) == 1)
    }

    @Test func aDamagedKeyRecordIsReportedAsSuch() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("notes.sqlite")
        _ = try Garage(path: path, encryptionKey: Self.passphrase("pw"))
        try rawWrite(path, "UPDATE garage_meta SET value = 'not a record' WHERE name = 'encryption'")
        #expect {
            try Garage(path: path, encryptionKey: Self.passphrase("pw"))
        } throws: { error in
            if case GarageError.damagedStore(path, _, _) = error { return true }
            return false
        }
    }
}
