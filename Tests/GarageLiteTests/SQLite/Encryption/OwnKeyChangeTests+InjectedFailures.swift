import Foundation
import Testing
@testable import GarageLite

// A rotation or a decryption stopped part-way by a storage failure, injected as an SQLite
// trigger that fails the rewrite of one object. Moved from Encryption/OwnKeyChangeTests.swift
// (issue 25).

extension OwnKeyChangeTests {
    /// A rotation stopped after the store switched to the new key (a storage failure in the
    /// second batch of re-encryptions) says that the new key opens the store and that calling
    /// again finishes; the old key is refused, the new one reads everything, and the call
    /// repeated finishes the rotation.
    @Test(arguments: [false, true])
    func aRekeyStoppedPartWaySaysWhichKeyOpensTheStore(async: Bool) async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("notes.sqlite")
        let garage = try Garage(path: path, encryptionKey: Self.passphrase("old"))
        let id = { (index: Int) in "n" + String(1_000 + index).dropFirst() }     // n000 ... n599, in key order
        try await garage.parkAll((0..<600).map { SKNote(id: id($0), text: "text \($0)") })
        try injectFailure(path, atIdentifier: "n550")

        let error = await #expect(throws: GarageError.self) {
            if async {
                try await garage.rekey(to: Self.passphrase("new"))
            } else {
                try onAnotherThread { Result { try garage.rekey(to: Self.passphrase("new")) } }.get()
            }
        }
        guard case .keyChangeUnfinished(path, "rekey(to:)", _, _)? = error else {
            Issue.record("rekey threw \(String(describing: error))")
            return
        }
        let message = "\(error!)"
        #expect(message.contains("now opens with the key given to rekey(to:)"), "\(message)")
        #expect(message.contains("Call rekey(to:) again"), "\(message)")
        #expect(message.contains("injected I/O failure"), "\(message)")
        #expect(!message.contains("Nothing of that operation was written"), "\(message)")

        try finishStoppedRekey(garage, path: path)
    }

    /// What a rotation stopped part-way leaves: the old key refused, the new one reading
    /// everything, and the call repeated finishing it.
    func finishStoppedRekey(_ garage: Garage, path: String) throws {
        #expect { try Garage(path: path, encryptionKey: Self.passphrase("old")) } throws: { error in
            if case GarageError.wrongEncryptionKey = error { return true }
            return false
        }
        let reopened = try Garage(path: path, encryptionKey: Self.passphrase("new"))
        #expect(try reopened.retrieveAll(SKNote.self).count == 600)
        #expect(try reopened.encryptionStatus().isUnfinished)
        try rawWrite(path, "DROP TRIGGER test_injected_failure")
        #expect(try garage.rekey(to: Self.passphrase("new")) == 100)     // the batch that failed, and the rest
        #expect(try !garage.encryptionStatus().isUnfinished)
        let final = try Garage(path: path, encryptionKey: Self.passphrase("new"))
        #expect(try final.retrieveAll(SKNote.self).count == 600)
        #expect(try final.check().isOK)
    }

    /// A decryption stopped part-way by a storage failure says that the store still opens with
    /// its key, and that calling again finishes it.
    @Test(arguments: [false, true])
    func aDecryptionStoppedPartWaySaysWhichKeyOpensTheStore(async: Bool) async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("notes.sqlite")
        let garage = try Garage(path: path, encryptionKey: Self.passphrase("pw"))
        let id = { (index: Int) in "n" + String(1_000 + index).dropFirst() }
        try await garage.parkAll((0..<600).map { SKNote(id: id($0), text: "text \($0)") })
        try injectFailure(path, atIdentifier: "n550")

        let error = await #expect(throws: GarageError.self) {
            if async {
                try await garage.decryptAllObjects()
            } else {
                try onAnotherThread { Result { try garage.decryptAllObjects() } }.get()
            }
        }
        guard case .keyChangeUnfinished(path, "decryptAllObjects()", _, _)? = error else {
            Issue.record("decryptAllObjects threw \(String(describing: error))")
            return
        }
        let message = "\(error!)"
        #expect(message.contains("now opens with its key, as before"), "\(message)")
        #expect(message.contains("Call decryptAllObjects() again"), "\(message)")
        #expect(!message.contains("Nothing of that operation was written"), "\(message)")

        try finishStoppedDecryption(path: path)
    }

    /// On a store whose decryption stopped part-way, opened read-only, encrypting the
    /// unencrypted objects throws the same error sync and `async` (issue 25: the `async` form
    /// counted first, as a write, and threw `readOnlyStore`).
    @Test func encryptingADecryptingStoreThrowsTheSameBothWays() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("notes.sqlite")
        let garage = try Garage(path: path, encryptionKey: Self.passphrase("pw"))
        let id = { (index: Int) in "n" + String(1_000 + index).dropFirst() }
        try await garage.parkAll((0..<600).map { SKNote(id: id($0), text: "text \($0)") })
        try injectFailure(path, atIdentifier: "n550")
        await #expect(throws: GarageError.self) { try await garage.decryptAllObjects() }
        let readOnly = try Garage.readOnly(path: path, encryptionKey: Self.passphrase("pw"))
        let syncError = try onAnotherThread { Result { try readOnly.encryptUnencryptedObjects() } }
        var asyncError: (any Error)?
        do { try await readOnly.encryptUnencryptedObjects() } catch { asyncError = error }
        guard case .failure(let error) = syncError, case .invalidEncryptionKey? = error as? GarageError else {
            Issue.record("sync threw \(syncError)")
            return
        }
        #expect((asyncError as? GarageError)?.description == (error as? GarageError)?.description)
        try finishStoppedDecryption(path: path)
    }

    /// What a decryption stopped part-way leaves: the key reading everything, and the call
    /// repeated finishing it.
    func finishStoppedDecryption(path: String) throws {
        let reopened = try Garage(path: path, encryptionKey: Self.passphrase("pw"))
        #expect(try reopened.retrieveAll(SKNote.self).count == 600)
        try rawWrite(path, "DROP TRIGGER test_injected_failure")
        #expect(try reopened.decryptAllObjects() == 100)
        #expect(try Garage(path: path).count(SKNote.self) == 600)
    }

    /// Makes the store fail the rewrite of the object `identifier`'s data, as an I/O error
    /// would: SQLite's error becomes ``GarageError/storageFailure(operation:reason:)``, as an
    /// I/O error's does.
    func injectFailure(_ path: String, atIdentifier identifier: String) throws {
        try rawWrite(path, """
            CREATE TRIGGER test_injected_failure BEFORE UPDATE OF data ON garage_object
            WHEN new.identifier = '\(identifier)'
            BEGIN SELECT RAISE(ABORT, 'injected I/O failure'); END
            """)
    }
}
