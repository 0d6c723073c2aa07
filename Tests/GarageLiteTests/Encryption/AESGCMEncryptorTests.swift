import Crypto
import Foundation
@testable import GarageLite
import Testing

struct EAccount: Codable, Identifiable, Sendable, Equatable, Syncable {
    var id: String
    var owner: String
    var balance: Int
    var syncStatus: SyncStatus = .notSynced
}

struct ELedger: Codable, Identifiable, Sendable {
    var id: String
    var note: String
}

/// Issue 14: the ready AES-GCM encryptor, whose ciphertexts are bound to their rows.
@Suite("AES-GCM encryptor")
struct AESGCMEncryptorTests {
    func encryptedGarage(_ path: String, key: SymmetricKey) throws -> Garage {
        let garage = try TestEngine.garage(path: path)
        garage.dataEncryptionDelegate = try AESGCMEncryptor(key: key)
        return garage
    }

    func decryptionFailure(_ error: any Error, _ identifier: String) -> String? {
        guard case GarageError.decryptionFailed(_, let failed, let reason) = error, failed == identifier else { return nil }
        return reason
    }

    @Test func objectsRoundTripAndTheFilesHoldNoPlaintext() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("bank.sqlite")
        let key = SymmetricKey(size: .bits256)
        do {
            let garage = try encryptedGarage(path, key: key)
            try await garage.parkAll([EAccount(id: "alice", owner: "Alice-Marker", balance: 100),
                                EAccount(id: "bob", owner: "Bob-Marker", balance: 5)])
            try await garage.park(ELedger(id: "l1", note: "Ledger-Marker"))
            #expect(try await garage.retrieve(EAccount.self, identifier: "alice")?.owner == "Alice-Marker")
            #expect(try await garage.retrieve(ELedger.self, identifier: "l1")?.note == "Ledger-Marker")
        }
        if TestEngine.hasFiles {            // PostgreSQL's files: PostgresEncryptionTests
            let bytes = storeFileBytes(path)
            for marker in ["Alice-Marker", "Bob-Marker", "Ledger-Marker", "\"owner\""] {
                #expect(bytes.range(of: Data(marker.utf8)) == nil, "\(marker) is in the files")
            }
        }
        let again = try encryptedGarage(path, key: key)
        #expect(try await again.retrieve(EAccount.self, identifier: "bob")?.balance == 5)
    }

    @Test func afterEncryptingAStoreNoPlaintextIsLeftInItsFiles() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("bank.sqlite")
        let plain = try TestEngine.garage(path: path)
        try plain.parkAll((1...300).map { EAccount(id: "a\($0)", owner: "Plaintext-Owner-\($0)", balance: $0) })
        try plain.park(ELedger(id: "gone", note: "Deleted-Plaintext-Note"))
        _ = try plain.delete(ELedger.self, identifier: "gone", rule: .rowOnly)     // its bytes in a free page
        try plain.park(EAccount(id: "a1", owner: "Replaced-Plaintext-Owner", balance: 0))
        try plain.park(EAccount(id: "a1", owner: "Plaintext-Owner-1", balance: 1))  // an older version in the log

        let garage = try encryptedGarage(path, key: SymmetricKey(size: .bits256))
        #expect(try garage.encryptUnencryptedObjects() == 300)
        // Encrypted garages' own writes: parks, re-parks, deletes, deleteAll, garbage collection.
        try garage.park(EAccount(id: "a2", owner: "New-Secret-Owner", balance: 2))
        _ = try garage.delete(EAccount.self, identifier: "a3", rule: .rowOnly)
        try garage.park(ELedger(id: "l1", note: "Ledger-Secret"))
        _ = try garage.deleteAll(ELedger.self)
        _ = try garage.collectGarbage(dryRun: false)
        if TestEngine.hasFiles {            // PostgreSQL's files: PostgresEncryptionTests
            let bytes = storeFileBytes(path)
            for marker in ["Plaintext-Owner", "Deleted-Plaintext-Note", "Replaced-Plaintext", "New-Secret-Owner", "Ledger-Secret"] {
                #expect(bytes.range(of: Data(marker.utf8)) == nil, "\(marker) is in the files")
            }
        }
        #expect(try garage.retrieve(EAccount.self, identifier: "a300")?.owner == "Plaintext-Owner-300")
    }

    @Test func parkingAnUnchangedObjectChangesNothingAsWithoutEncryption() throws {
        let garage = try TestEngine.garage()
        garage.dataEncryptionDelegate = try AESGCMEncryptor(key: SymmetricKey(size: .bits256))
        let bob = EAccount(id: "bob", owner: "Bob", balance: 5)
        try garage.park(bob)
        try garage.setSyncStatus(.synced, for: bob)
        let stored = try #require(try garage.retrieve(EAccount.self, identifier: "bob"))
        try garage.park(stored)                                   // unchanged
        let metadata = try #require(try garage.metadata(EAccount.self, identifier: "bob"))
        #expect(metadata.revision == 1 && metadata.syncStatus == .synced)
        var edited = stored
        edited.balance = 6
        try garage.park(edited)                                   // changed: a new ciphertext
        let after = try #require(try garage.metadata(EAccount.self, identifier: "bob"))
        #expect(after.revision == 2 && after.syncStatus == .notSynced)
        // The same content in two rows: two ciphertexts (each bound to its row).
        let encryptor = try AESGCMEncryptor(key: SymmetricKey(size: .bits256))
        let json = Data(#"{"balance":1}"#.utf8)
        let one = try encryptor.encrypt(json, for: EncryptionContext(typeName: "EAccount", identifier: "a"))
        let two = try encryptor.encrypt(json, for: EncryptionContext(typeName: "EAccount", identifier: "b"))
        let again = try encryptor.encrypt(json, for: EncryptionContext(typeName: "EAccount", identifier: "a"))
        #expect(one != two && one == again)
    }

    @Test func keysChangeWithThePreviousOnesKeptByID() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("bank.sqlite")
        let old = SymmetricKey(size: .bits256)
        let new = SymmetricKey(size: .bits256)
        let garage = try TestEngine.garage(path: path)
        garage.dataEncryptionDelegate = try AESGCMEncryptor(key: old, keyID: 1)
        try garage.park(EAccount(id: "alice", owner: "Alice", balance: 1))
        garage.dataEncryptionDelegate = try AESGCMEncryptor(key: new, keyID: 2, previousKeys: [1: old])
        try garage.park(EAccount(id: "bob", owner: "Bob", balance: 2))
        #expect(try garage.retrieveAll(EAccount.self).map(\.owner) == ["Alice", "Bob"])
        garage.dataEncryptionDelegate = try AESGCMEncryptor(key: new, keyID: 2)
        let missing = try #require(throws: GarageError.self) { try garage.retrieve(EAccount.self, identifier: "alice") }
        #expect(decryptionFailure(missing, "alice")?.contains("id 1") == true, "\(missing)")
        #expect(throws: GarageError.self) { try AESGCMEncryptor(key: SymmetricKey(size: .bits128)) }
        #expect(throws: GarageError.self) { try AESGCMEncryptor(key: new, keyID: 1, previousKeys: [1: old]) }
    }
}

/// The bytes of the store at `path` and of its `-wal` and `-shm` files, one after the other: what
/// a reader of the disk sees.
/// The bytes of a SQLite store's files (the store, its `-wal` and `-shm`), for a test that looks
/// for what they must not hold. A store without a file is a test that would pass without
/// looking: it is recorded as an issue (on PostgreSQL, read the relation files, as
/// `PostgresEncryptionTests` does, or skip the check unless `TestEngine.hasFiles`).
func storeFileBytes(_ path: String, sourceLocation: SourceLocation = #_sourceLocation) -> Data {
    if !FileManager.default.fileExists(atPath: path) {
        Issue.record("no store file at \(path): the check would pass without looking", sourceLocation: sourceLocation)
    }
    var bytes = Data()
    for suffix in ["", "-wal", "-shm"] {
        if let data = FileManager.default.contents(atPath: path + suffix) { bytes.append(data) }
    }
    return bytes
}


struct EPatient: Codable, Identifiable, Sendable {
    var id: String
    var diagnosis: String
}

struct EWard: Codable, Identifiable, Sendable {
    var id: String
    var patients: [EPatient]
}

struct EClient: Codable, Identifiable, Sendable {
    var id: String
    var diagnosis: String
}

struct EWardV2: Codable, Identifiable, Sendable, StoredTypeNamed {
    static let storedTypeName = "EWard"
    static let sharesStoredTypeName = true
    var id: String
    var patients: [EClient]
}

/// A renamed type's objects are re-encrypted for their new type (their ciphertexts are bound
/// to the type name).
@Suite("AES-GCM encryptor: renamed types")
struct AESGCMRenameTests {
    @Test func migrateAllReencryptsTheMovedRowsWrittenOrPending() throws {
        let directory = try TemporaryDirectory()
        let garage = try TestEngine.garage(path: directory.path("ward.sqlite"))
        garage.dataEncryptionDelegate = try AESGCMEncryptor(key: SymmetricKey(size: .bits256))
        try garage.park(EWard(id: "w1", patients: [EPatient(id: "p1", diagnosis: "flu"), EPatient(id: "p2", diagnosis: "cold")]))
        // Pending (autosave off): read through the unsaved changes, sealed for the old type.
        garage.isAutosaveEnabled = false
        #expect(try garage.migrateAll(fromOldClassName: "EPatient", to: EClient.self) == 2)
        #expect(try garage.retrieve(EClient.self, identifier: "p1")?.diagnosis == "flu")
        try garage.save()
        garage.isAutosaveEnabled = true
        #expect(try garage.retrieve(EClient.self, identifier: "p2")?.diagnosis == "cold")
        #expect(try garage.retrieve(EWardV2.self, identifier: "w1")?.patients.map(\.id) == ["p1", "p2"])
        #expect(try garage.check().isOK)
        // And back, as written at once.
        #expect(try garage.migrateAll(fromOldClassName: "EClient", to: EPatient.self) == 2)
        #expect(try garage.retrieve(EPatient.self, identifier: "p1")?.diagnosis == "flu")
    }

}

/// Rotating keys to the end, and turning encryption off.
@Suite("AES-GCM encryptor: re-encrypting and decrypting")
struct AESGCMRewriteTests {
    @Test func reencryptingMovesEveryObjectToTheCurrentKeyAndErasesTheOldCiphertexts() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("bank.sqlite")
        let old = SymmetricKey(size: .bits256)
        let new = SymmetricKey(size: .bits256)
        let garage = try TestEngine.garage(path: path)
        garage.dataEncryptionDelegate = try AESGCMEncryptor(key: old, keyID: 1)
        try garage.parkAll((1...700).map { EAccount(id: String(format: "a%04d", $0), owner: "O\($0)", balance: $0) })
        let oldEnvelope = try #require(try garage.store.storedRow(ObjectKey(typeName: "EAccount", identifier: "a0001"))).data
        garage.dataEncryptionDelegate = try AESGCMEncryptor(key: new, keyID: 2, previousKeys: [1: old])
        try garage.park(EAccount(id: "a0002", owner: "Edited", balance: 2))     // on the new key already
        #expect(try garage.reencryptObjects() == 699)
        #expect(try garage.reencryptObjects() == 0)
        garage.dataEncryptionDelegate = try AESGCMEncryptor(key: new, keyID: 2)
        #expect(try garage.retrieveAll(EAccount.self).count == 700)
        #expect(try garage.retrieve(EAccount.self, identifier: "a0002")?.owner == "Edited")
        #expect(try garage.check().isOK)
        #expect(try garage.store.storedRow(ObjectKey(typeName: "EAccount", identifier: "a0001"))?.data != oldEnvelope)
        if TestEngine.hasFiles {            // PostgreSQL's files: PostgresEncryptionTests
            #expect(storeFileBytes(path).range(of: Data(oldEnvelope.utf8)) == nil, "an old ciphertext is still on disk")
        }
    }
}

/// What a security review found in renames, checks and paths (issue 14).
@Suite("AES-GCM encryptor: review")
struct AESGCMReviewTests {
    @Test func aPendingRenameReencryptsWithTheDelegateOfTheSave() throws {
        let directory = try TemporaryDirectory()
        let garage = try TestEngine.garage(path: directory.path("ward.sqlite"))
        let old = SymmetricKey(size: .bits256)
        let new = SymmetricKey(size: .bits256)
        garage.dataEncryptionDelegate = try AESGCMEncryptor(key: old, keyID: 1)
        try garage.park(EWard(id: "w1", patients: [EPatient(id: "p1", diagnosis: "flu")]))
        garage.isAutosaveEnabled = false
        try garage.migrateAll(fromOldClassName: "EPatient", to: EClient.self)
        garage.dataEncryptionDelegate = try AESGCMEncryptor(key: new, keyID: 2, previousKeys: [1: old])
        try garage.save()
        garage.isAutosaveEnabled = true
        #expect(try garage.reencryptObjects() >= 1)
        garage.dataEncryptionDelegate = try AESGCMEncryptor(key: new, keyID: 2)
        #expect(try garage.retrieve(EClient.self, identifier: "p1")?.diagnosis == "flu")
    }

    @Test func aTombstoneOfTheOldTypeDoesNotReplaceALiveObjectOfTheNewOne() throws {
        let garage = try TestEngine.garage()
        let patient = ETPatient(id: "x", diagnosis: "old")
        try garage.park(patient)
        try garage.setSyncStatus(.synced, for: patient)
        #expect(try garage.delete(ETPatient.self, identifier: "x", rule: .rowOnly))   // a tombstone: it was synced
        try garage.park(ETClient(id: "x", diagnosis: "live"))
        #expect(try garage.migrateAll(fromOldClassName: "ETPatient", to: ETClient.self) == 0)
        #expect(try garage.retrieve(ETClient.self, identifier: "x")?.diagnosis == "live")
    }

    @Test func aStorePathBeginningWithTwoSlashesOpens() throws {
        let directory = try TemporaryDirectory()
        let path = "/" + directory.path("slashes.sqlite")
        let garage = try TestEngine.garage(path: path)
        try garage.park(EAccount(id: "a", owner: "A", balance: 1))
        #expect(try TestEngine.garage(path: path).retrieve(EAccount.self, identifier: "a")?.owner == "A")
    }
}

struct ETPatient: Codable, Identifiable, Syncable, Sendable {
    var id: String
    var diagnosis: String
    var syncStatus: SyncStatus = .notSynced
}

struct ETClient: Codable, Identifiable, Syncable, Sendable {
    var id: String
    var diagnosis: String
    var syncStatus: SyncStatus = .notSynced
}

/// The rewrites and the garage's other writers (issue 14, a security review).
@Suite("AES-GCM encryptor: rewrites and other writes")
struct AESGCMRewriteConcurrencyTests {
    @Test func rewritesRefuseUnsavedChangesAndTransactions() throws {
        let garage = try TestEngine.garage()
        garage.dataEncryptionDelegate = try AESGCMEncryptor(key: SymmetricKey(size: .bits256))
        garage.isAutosaveEnabled = false
        try garage.park(EAccount(id: "b", owner: "B", balance: 1))
        #expect(throws: GarageError.self) { try garage.reencryptObjects() }
        try garage.save()
        garage.isAutosaveEnabled = true
        try garage.beginTransaction()
        #expect(throws: GarageError.self) { try garage.decryptAllObjects() }
        try garage.rollbackTransaction()
        #expect(try garage.reencryptObjects() == 0)
    }

    @Test func objectsParkedWhileTheStoreIsDecryptedAreStoredUnencrypted() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("bank.sqlite")
        let garage = try TestEngine.garage(path: path)
        garage.dataEncryptionDelegate = try AESGCMEncryptor(key: SymmetricKey(size: .bits256))
        try await garage.parkAll((0..<3_000).map { EAccount(id: String(format: "a%05d", $0), owner: "O", balance: $0) })
        let parker = Task.detached {
            for round in 0..<200 {
                try garage.park(EAccount(id: "a00000", owner: "Edited \(round)", balance: round))
            }
        }
        do {
            _ = try await garage.decryptAllObjects()
        } catch GarageError.invalidEncryptionKey {
            // A park sealed just before the call began, and written after the call passed its
            // row: the call says so and keeps the delegate; once the parker is done, again.
            try await parker.value
            _ = try await garage.decryptAllObjects()
        }
        try await parker.value
        #expect(garage.dataEncryptionDelegate == nil)
        #expect(try await garage.retrieveAll(EAccount.self).count == 3_000)
        #expect(try garage.store.allStoredRows().filter(\.isEncrypted).count == 0)
    }
}

struct EPin: Codable, Hashable, Sendable {
    var pin: String
}

/// Issue 14: a `Hashable` object's identifier keyed with the encryptor's identity key.
@Suite("AES-GCM encryptor: keyed identifiers")
struct AESGCMKeyedIdentifierTests {
    @Test func aHashableObjectsIdentifierIsAnHMACWithTheIdentityKey() throws {
        let pin = EPin(pin: "4821")
        let unkeyed = SHA256.hash(data: Data(#"{"pin":"4821"}"#.utf8)).map { String(format: "%02x", $0) }.joined()
        let plain = try TestEngine.garage()
        #expect(try plain.identifier(for: pin) == unkeyed)

        let identityKey = SymmetricKey(size: .bits256)
        let garage = try TestEngine.garage()
        garage.dataEncryptionDelegate = try AESGCMEncryptor(key: SymmetricKey(size: .bits256), identityKey: identityKey)
        try garage.park(pin)
        let identifier = try garage.identifier(for: pin)
        #expect(identifier != unkeyed && identifier.count == 64)
        #expect(try garage.identifiers(of: EPin.self) == [identifier])
        #expect(try garage.retrieve(EPin.self, identifier: identifier) == pin)
        // The same identity key with a new encryption key: the same identifier.
        garage.dataEncryptionDelegate = try AESGCMEncryptor(key: SymmetricKey(size: .bits256), keyID: 2, identityKey: identityKey)
        #expect(try garage.identifier(for: pin) == identifier)
    }
}
