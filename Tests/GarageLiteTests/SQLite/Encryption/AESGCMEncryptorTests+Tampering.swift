import Crypto
import Foundation
import Testing
@testable import GarageLite

// The AES-GCM encryptor against rows tampered with through SQLite below the library:
// ciphertexts moved, cut, replaced by plaintext. Moved from Encryption/AESGCMEncryptorTests.swift
// (issue 25): each is an extension of the suite it belongs to.

extension AESGCMEncryptorTests {
    /// An encrypted garage on the SQLite file at `path`, which these tests change below the library.
    func sqliteEncryptedGarage(_ path: String, key: SymmetricKey) throws -> Garage {
        let garage = try Garage(path: path)
        garage.dataEncryptionDelegate = try AESGCMEncryptor(key: key)
        return garage
    }

    @Test func aCiphertextMovedToAnotherRowOrTypeFailsNamingTheObject() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("bank.sqlite")
        let garage = try sqliteEncryptedGarage(path, key: SymmetricKey(size: .bits256))
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
        let garage = try sqliteEncryptedGarage(path, key: key)
        try garage.parkAll((1...3).map { EAccount(id: "a\($0)", owner: "O\($0)", balance: $0) })
        let stored = try #require(try SQLiteFile(path).string("SELECT data FROM garage_object WHERE identifier = 'a1'"))
        var envelope = try #require(Data(base64Encoded: stored))
        envelope[envelope.count - 20] ^= 0x01
        try rawWrite(path, "UPDATE garage_object SET data = '\(envelope.base64EncodedString())' WHERE identifier = 'a1'")
        let tampered = try #require(throws: GarageError.self) { try garage.retrieve(EAccount.self, identifier: "a1") }
        #expect(decryptionFailure(tampered, "a1") != nil, "\(tampered)")

        try rawWrite(path, "UPDATE garage_object SET data = '\(Data(envelope.prefix(20)).base64EncodedString())' WHERE identifier = 'a2'")
        let truncated = try #require(throws: GarageError.self) { try garage.retrieve(EAccount.self, identifier: "a2") }
        #expect(decryptionFailure(truncated, "a2")?.contains("truncated") == true, "\(truncated)")

        let wrongKey = try sqliteEncryptedGarage(path, key: SymmetricKey(size: .bits256))
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

        let garage = try sqliteEncryptedGarage(path, key: SymmetricKey(size: .bits256))
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
}

extension AESGCMRenameTests {
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

extension AESGCMReviewTests {
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
}
