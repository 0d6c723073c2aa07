import Crypto
import GRDB
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
    private func encryptedGarage(_ path: String, key: SymmetricKey) throws -> Garage {
        let garage = try Garage(path: path)
        garage.dataEncryptionDelegate = try AESGCMEncryptor(key: key)
        return garage
    }

    private func decryptionFailure(_ error: any Error, _ identifier: String) -> String? {
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
        let bytes = storeFileBytes(path)
        for marker in ["Alice-Marker", "Bob-Marker", "Ledger-Marker", "\"owner\""] {
            #expect(bytes.range(of: Data(marker.utf8)) == nil, "\(marker) is in the files")
        }
        let again = try encryptedGarage(path, key: key)
        #expect(try await again.retrieve(EAccount.self, identifier: "bob")?.balance == 5)
    }

    @Test func aCiphertextMovedToAnotherRowOrTypeFailsNamingTheObject() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("bank.sqlite")
        let garage = try encryptedGarage(path, key: SymmetricKey(size: .bits256))
        try garage.parkAll([EAccount(id: "alice", owner: "Alice", balance: 100),
                            EAccount(id: "bob", owner: "Bob", balance: 5)])
        try garage.park(ELedger(id: "bob", note: "x"))
        // Bob's ciphertext in Alice's row: without the binding, it would read as Bob's account under Alice's id.
        try rawWrite(path, """
            UPDATE garage_object SET data = (SELECT data FROM garage_object WHERE type = 'EAccount' AND identifier = 'bob')
            WHERE type = 'EAccount' AND identifier = 'alice'
            """)
        let moved = try #require(throws: GarageError.self) { try garage.retrieve(EAccount.self, identifier: "alice") }
        #expect(decryptionFailure(moved, "alice")?.contains("another row") == true, "\(moved)")
        // Bob's account in the row of a ledger with the same identifier: another type.
        try rawWrite(path, """
            UPDATE garage_object SET data = (SELECT data FROM garage_object WHERE type = 'EAccount' AND identifier = 'bob')
            WHERE type = 'ELedger' AND identifier = 'bob'
            """)
        let retyped = try #require(throws: GarageError.self) { try garage.retrieve(ELedger.self, identifier: "bob") }
        #expect(decryptionFailure(retyped, "bob") != nil, "\(retyped)")
        #expect(try garage.retrieve(EAccount.self, identifier: "bob")?.owner == "Bob")
        let lossy = try garage.retrieveAllLossy(EAccount.self)
        #expect(lossy.objects.map(\.id) == ["bob"] && lossy.failures.map(\.identifier) == ["alice"])
        // check() decrypts every row, and reports both.
        let report = try garage.check()
        let unreadable = report.problems.compactMap { problem -> String? in
            guard case .unreadableEncryptedRow(let type, let identifier, _) = problem else { return nil }
            return "\(type)(\(identifier))"
        }
        #expect(unreadable == ["EAccount(alice)", "ELedger(bob)"], "\(report)")
        // A plaintext row slipped in is reported too; without a delegate, the JSON check reads it.
        try rawWrite(path, "UPDATE garage_object SET isEncrypted = 0, data = '{\"id\":\"bob\",\"owner\":\"Eve\",\"balance\":9}' WHERE type = 'EAccount' AND identifier = 'bob'")
        #expect(try garage.check().problems.count == 3)
        garage.dataEncryptionDelegate = nil
        #expect(try garage.check().isOK)
    }

    @Test func tamperedTruncatedAndWrongKeyCiphertextsFail() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("bank.sqlite")
        let key = SymmetricKey(size: .bits256)
        let garage = try encryptedGarage(path, key: key)
        try garage.parkAll((1...3).map { EAccount(id: "a\($0)", owner: "O\($0)", balance: $0) })
        let stored = try DatabaseReader.string(path, "SELECT data FROM garage_object WHERE identifier = 'a1'")
        var envelope = try #require(Data(base64Encoded: stored))
        envelope[envelope.count - 20] ^= 0x01
        try rawWrite(path, "UPDATE garage_object SET data = '\(envelope.base64EncodedString())' WHERE identifier = 'a1'")
        let tampered = try #require(throws: GarageError.self) { try garage.retrieve(EAccount.self, identifier: "a1") }
        #expect(decryptionFailure(tampered, "a1") != nil, "\(tampered)")

        try rawWrite(path, "UPDATE garage_object SET data = '\(Data(envelope.prefix(20)).base64EncodedString())' WHERE identifier = 'a2'")
        let truncated = try #require(throws: GarageError.self) { try garage.retrieve(EAccount.self, identifier: "a2") }
        #expect(decryptionFailure(truncated, "a2")?.contains("truncated") == true, "\(truncated)")

        let wrongKey = try encryptedGarage(path, key: SymmetricKey(size: .bits256))
        let wrong = try #require(throws: GarageError.self) { try wrongKey.retrieve(EAccount.self, identifier: "a3") }
        #expect(decryptionFailure(wrong, "a3") != nil, "\(wrong)")
        #expect(try garage.retrieve(EAccount.self, identifier: "a3")?.owner == "O3")
    }

    @Test func plaintextRowsAreRefusedUntilEncryptedInPlace() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("bank.sqlite")
        let plain = try Garage(path: path)
        try plain.parkAll((1...1_200).map { EAccount(id: String(format: "a%04d", $0), owner: "Plain-\($0)", balance: $0) })
        try plain.setSyncStatus(.synced, for: EAccount(id: "a0001", owner: "Plain-1", balance: 1))
        let before = try #require(try plain.metadata(EAccount.self, identifier: "a0001"))

        let garage = try encryptedGarage(path, key: SymmetricKey(size: .bits256))
        #expect(throws: GarageError.unencryptedRow(typeName: "EAccount", identifier: "a0001")) {
            try garage.retrieve(EAccount.self, identifier: "a0001")
        }
        #expect(try garage.encryptUnencryptedObjects() == 1_200)
        #expect(try garage.encryptUnencryptedObjects() == 0)
        let account = try #require(try garage.retrieve(EAccount.self, identifier: "a0001"))
        #expect(account.owner == "Plain-1" && account.syncStatus == .synced)
        let after = try #require(try garage.metadata(EAccount.self, identifier: "a0001"))
        #expect(after.revision == before.revision && after.modificationDate == before.modificationDate)
        #expect(try garage.retrieveAll(EAccount.self).count == 1_200)
        // A plaintext row written into the file later is refused again, naming it.
        try rawWrite(path, "UPDATE garage_object SET isEncrypted = 0, data = '{\"id\":\"a0002\",\"owner\":\"Mallory\",\"balance\":1000000}' WHERE identifier = 'a0002'")
        #expect(throws: GarageError.unencryptedRow(typeName: "EAccount", identifier: "a0002")) {
            try garage.retrieve(EAccount.self, identifier: "a0002")
        }
        #expect(throws: GarageError.self) { try plain.encryptUnencryptedObjects() }   // no delegate
    }

    @Test func afterEncryptingAStoreNoPlaintextIsLeftInItsFiles() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("bank.sqlite")
        let plain = try Garage(path: path)
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
        let bytes = storeFileBytes(path)
        for marker in ["Plaintext-Owner", "Deleted-Plaintext-Note", "Replaced-Plaintext", "New-Secret-Owner", "Ledger-Secret"] {
            #expect(bytes.range(of: Data(marker.utf8)) == nil, "\(marker) is in the files")
        }
        #expect(try garage.retrieve(EAccount.self, identifier: "a300")?.owner == "Plaintext-Owner-300")
    }

    @Test func parkingAnUnchangedObjectChangesNothingAsWithoutEncryption() throws {
        let garage = try Garage.inMemory()
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
        let garage = try Garage(path: path)
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
func storeFileBytes(_ path: String) -> Data {
    var bytes = Data()
    for suffix in ["", "-wal", "-shm"] {
        if let data = FileManager.default.contents(atPath: path + suffix) { bytes.append(data) }
    }
    return bytes
}

enum DatabaseReader {
    /// The first column of the first row `sql` returns, read from the file at `path` by a
    /// connection of its own.
    static func string(_ path: String, _ sql: String) throws -> String {
        try DatabaseQueue(path: path).read { db in try #require(try String.fetchOne(db, sql: sql)) }
    }
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
        let garage = try Garage(path: directory.path("ward.sqlite"))
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

    @Test func aRowThatCantBeReencryptedStopsTheMoveNamingIt() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("ward.sqlite")
        let garage = try Garage(path: path)
        garage.dataEncryptionDelegate = try AESGCMEncryptor(key: SymmetricKey(size: .bits256))
        try garage.park(EWard(id: "w1", patients: [EPatient(id: "p1", diagnosis: "flu"), EPatient(id: "p2", diagnosis: "cold")]))
        try rawWrite(path, """
            UPDATE garage_object SET data = (SELECT data FROM garage_object WHERE identifier = 'p1') WHERE identifier = 'p2'
            """)
        #expect(throws: GarageError.self) { try garage.migrateAll(fromOldClassName: "EPatient", to: EClient.self) }
        #expect(try garage.retrieve(EPatient.self, identifier: "p1")?.diagnosis == "flu")   // nothing moved
        #expect(try garage.count(EClient.self) == 0)
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
        let garage = try Garage(path: path)
        garage.dataEncryptionDelegate = try AESGCMEncryptor(key: old, keyID: 1)
        try garage.parkAll((1...700).map { EAccount(id: String(format: "a%04d", $0), owner: "O\($0)", balance: $0) })
        let oldEnvelope = try DatabaseReader.string(path, "SELECT data FROM garage_object WHERE identifier = 'a0001'")
        garage.dataEncryptionDelegate = try AESGCMEncryptor(key: new, keyID: 2, previousKeys: [1: old])
        try garage.park(EAccount(id: "a0002", owner: "Edited", balance: 2))     // on the new key already
        #expect(try garage.reencryptObjects() == 699)
        #expect(try garage.reencryptObjects() == 0)
        garage.dataEncryptionDelegate = try AESGCMEncryptor(key: new, keyID: 2)
        #expect(try garage.retrieveAll(EAccount.self).count == 700)
        #expect(try garage.retrieve(EAccount.self, identifier: "a0002")?.owner == "Edited")
        #expect(try garage.check().isOK)
        #expect(storeFileBytes(path).range(of: Data(oldEnvelope.utf8)) == nil, "an old ciphertext is still on disk")
    }

    @Test func decryptingTurnsEncryptionOffKeepingEveryObject() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("bank.sqlite")
        let garage = try Garage(path: path)
        garage.dataEncryptionDelegate = try AESGCMEncryptor(key: SymmetricKey(size: .bits256))
        try garage.parkAll((1...600).map { EAccount(id: "a\($0)", owner: "Owner-Marker-\($0)", balance: $0) })
        try garage.setSyncStatus(.synced, for: EAccount(id: "a1", owner: "", balance: 0))
        #expect(try garage.decryptAllObjects() == 600)
        #expect(garage.dataEncryptionDelegate == nil)
        #expect(try garage.retrieve(EAccount.self, identifier: "a1")?.syncStatus == .synced)
        #expect(try garage.retrieveAll(EAccount.self).count == 600)
        #expect(try garage.check().isOK)
        #expect(storeFileBytes(path).range(of: Data("Owner-Marker-600".utf8)) != nil)
        #expect(throws: GarageError.self) { try garage.decryptAllObjects() }       // no delegate now
    }
}

/// What a security review found in renames, checks and paths (issue 14).
@Suite("AES-GCM encryptor: review")
struct AESGCMReviewTests {
    @Test func aRenameWithoutTheDelegateIsRefusedAndOneWithAnUnreadableRowIsRefusedWhenRecorded() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("ward.sqlite")
        let key = SymmetricKey(size: .bits256)
        do {
            let garage = try Garage(path: path)
            garage.dataEncryptionDelegate = try AESGCMEncryptor(key: key)
            try garage.park(EWard(id: "w1", patients: [EPatient(id: "p1", diagnosis: "flu"), EPatient(id: "p2", diagnosis: "cold")]))
        }
        // At launch, before the delegate is set: refused, nothing moves (moved unsealed, the rows could never be read).
        let early = try Garage(path: path)
        #expect(throws: GarageError.missingEncryptionDelegate(typeName: "EPatient", identifier: "p1")) {
            try early.migrateAll(fromOldClassName: "EPatient", to: EClient.self)
        }
        early.dataEncryptionDelegate = try AESGCMEncryptor(key: key)
        #expect(try early.retrieve(EPatient.self, identifier: "p1")?.diagnosis == "flu")

        // A row that can't be re-encrypted: refused when recorded, with autosave off too, so
        // the unsaved changes after it still save.
        try rawWrite(path, "UPDATE garage_object SET data = (SELECT data FROM garage_object WHERE identifier = 'p1') WHERE identifier = 'p2'")
        early.isAutosaveEnabled = false
        #expect(throws: GarageError.self) { try early.migrateAll(fromOldClassName: "EPatient", to: EClient.self) }
        try early.park(EAccount(id: "x", owner: "X", balance: 1))
        try early.save()
        #expect(try early.retrieve(EAccount.self, identifier: "x")?.owner == "X")
    }

    @Test func aPendingRenameReencryptsWithTheDelegateOfTheSave() throws {
        let directory = try TemporaryDirectory()
        let garage = try Garage(path: directory.path("ward.sqlite"))
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
        let garage = try Garage.inMemory()
        let patient = ETPatient(id: "x", diagnosis: "old")
        try garage.park(patient)
        try garage.setSyncStatus(.synced, for: patient)
        #expect(try garage.delete(ETPatient.self, identifier: "x", rule: .rowOnly))   // a tombstone: it was synced
        try garage.park(ETClient(id: "x", diagnosis: "live"))
        #expect(try garage.migrateAll(fromOldClassName: "ETPatient", to: ETClient.self) == 0)
        #expect(try garage.retrieve(ETClient.self, identifier: "x")?.diagnosis == "live")
    }

    @Test func checkGoesOnPastAnUnreadableRowAtTheEndOfAPage() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("bank.sqlite")
        let garage = try Garage(path: path)
        garage.dataEncryptionDelegate = try AESGCMEncryptor(key: SymmetricKey(size: .bits256))
        try garage.parkAll((1...1_500).map { EAccount(id: String(format: "a%05d", $0), owner: "O", balance: $0) })
        try rawWrite(path, "UPDATE garage_object SET syncStatus = 'x' WHERE identifier = 'a01000'")
        try rawWrite(path, "UPDATE garage_object SET data = (SELECT data FROM garage_object WHERE identifier = 'a00001') WHERE identifier = 'a01200'")
        let report = try garage.check()
        #expect(report.problems.contains { problem in
            if case .unreadableEncryptedRow(_, "a01200", _) = problem { return true }
            return false
        }, "\(report)")
    }

    @Test func aStorePathBeginningWithTwoSlashesOpens() throws {
        let directory = try TemporaryDirectory()
        let path = "/" + directory.path("slashes.sqlite")
        let garage = try Garage(path: path)
        try garage.park(EAccount(id: "a", owner: "A", balance: 1))
        #expect(try Garage(path: path).retrieve(EAccount.self, identifier: "a")?.owner == "A")
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
        let garage = try Garage.inMemory()
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
        let garage = try Garage(path: path)
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
        #expect(try DatabaseReader.string(path, "SELECT CAST(COUNT(*) AS TEXT) FROM garage_object WHERE isEncrypted <> 0") == "0")
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
        let plain = try Garage.inMemory()
        #expect(try plain.identifier(for: pin) == unkeyed)

        let identityKey = SymmetricKey(size: .bits256)
        let garage = try Garage.inMemory()
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
