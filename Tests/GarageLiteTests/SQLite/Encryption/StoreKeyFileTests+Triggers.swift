import Crypto
import Foundation
import Testing
@testable import GarageLite
import GarageLiteSQLite

// The store's key as the SQLite store keeps it: its record and counts in `garage_meta`, and
// the triggers that refuse rows no key could read, tried by writing through SQLite below the
// library. Moved from Encryption/StoreKeyTests.swift (issue 25); a part of `StoreKeyFileTests`
// since issue 45, which runs `StoreKeyTests` on both engines.

extension StoreKeyFileTests {
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
        let file = try SQLiteFile(path)
        #expect(try file.int("SELECT COUNT(*) FROM garage_object WHERE isEncrypted = 0") == 0)
        try file.close()
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
        #expect(throws: SQLiteError.self) {
            try rawWrite(path, """
                INSERT INTO garage_object (type, identifier, data, creationDate, modificationDate) VALUES ('SKNote', 'n4', '{"id":"n4","text":"x"}', 0, 0)
                """)
        }
        #expect(throws: SQLiteError.self) {
            try rawWrite(path, #"UPDATE garage_object SET data = '{"id":"n2","text":"x"}', isEncrypted = 0 WHERE identifier = 'n2'"#)
        }
        try locked.setSyncStatus(.synced, for: SKNote(id: "n2", text: "after"))
        try locked.delete(SKNote.self, identifier: "n2")
        #expect(try locked.retrieveAll(SKNote.self).map(\.id) == ["n1"])
        #expect(storeFileBytes(path).range(of: Data("Leak-Marker".utf8)) == nil)
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
        let data = try #require(try storedData(foreign)["n3"])
        #expect(throws: SQLiteError.self) {
            try rawWrite(path, "INSERT INTO garage_object (type, identifier, data, isEncrypted, creationDate, modificationDate) VALUES ('SKNote', 'n3', '\(data)', 1, 0, 0)")
        }
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
        let file = try SQLiteFile(path)
        let (triggers, facts) = (try file.int("SELECT COUNT(*) FROM sqlite_master WHERE type = 'trigger' AND name NOT LIKE 'garage_reference%'"),
                                 try file.int("SELECT COUNT(*) FROM garage_meta"))
        try file.close()
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
