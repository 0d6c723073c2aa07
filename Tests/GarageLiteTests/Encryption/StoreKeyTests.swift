import Crypto
import Foundation
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

    /// Whether `error` says the key is wrong for the store of `path`.
    func isWrongKey(_ error: any Error, _ path: String) -> Bool {
        if case GarageError.wrongEncryptionKey(TestEngine.storeName(path: path), _) = error { return true }
        return false
    }

    /// Whether `error` says the garage's key of the store of `path` is stale.
    func isStale(_ error: any Error, _ path: String) -> Bool {
        if case GarageError.staleEncryptionKey(TestEngine.storeName(path: path), _) = error { return true }
        return false
    }

    /// The data of every committed row of `garage`'s store (tombstones too), as stored: by identifier.
    func storedData(_ garage: Garage) throws -> [String: String] {
        Dictionary(uniqueKeysWithValues: try garage.store.allStoredRows().map { ($0.key.identifier, $0.data) })
    }

    @Test func aStoreLockedWithAPassphraseOpensWithItAndNothingElse() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("notes.sqlite")
        do {
            let garage = try TestEngine.garage(path: path, encryptionKey: Self.passphrase("open sesame"))
            try garage.park(SKFolder(id: "f1", title: "Folder-Marker", notes: [SKNote(id: "n1", text: "Note-Marker")]))
        }
        #expect(throws: GarageError.encryptionKeyRequired(path: TestEngine.storeName(path: path))) { try TestEngine.garage(path: path) }
        #expect { try TestEngine.garage(path: path, encryptionKey: Self.passphrase("open sesame!")) } throws: { isWrongKey($0, path) }
        #expect { try TestEngine.garage(path: path, encryptionKey: .key(SymmetricKey(size: .bits256))) } throws: { isWrongKey($0, path) }

        let garage = try TestEngine.garage(path: path, encryptionKey: Self.passphrase("open sesame"))
        let folder = try #require(try garage.retrieve(SKFolder.self, identifier: "f1"))
        #expect(folder.title == "Folder-Marker" && folder.notes == [SKNote(id: "n1", text: "Note-Marker")])
        let status = try garage.encryptionStatus()
        #expect(status.isEncrypted && !status.isUnfinished && status.keyIDs == [1] && status.currentKeyID == 1)
        #expect(status.keyDerivation == "PBKDF2-SHA256, \(StoreKey.minimumRounds) rounds")
        #expect(status.encryptions == 2)
        if TestEngine.hasFiles {            // PostgreSQL's files: PostgresEncryptionTests
            for marker in ["Folder-Marker", "Note-Marker", "open sesame"] {
                #expect(storeFileBytes(path).range(of: Data(marker.utf8)) == nil, "\(marker) is in the files")
            }
        }
    }

    @Test func aStoreLockedWithAKeyOpensWithThatKeyOnly() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("notes.sqlite")
        let key = SymmetricKey(size: .bits256)
        do {
            let garage = try TestEngine.garage(path: path, encryptionKey: .key(key))
            try await garage.park(SKNote(id: "n1", text: "hello"))
        }
        #expect { try TestEngine.garage(path: path, encryptionKey: Self.passphrase("hello")) } throws: { isWrongKey($0, path) }
        #expect { try TestEngine.garage(path: path, encryptionKey: .key(SymmetricKey(size: .bits256))) } throws: { isWrongKey($0, path) }
        #expect(throws: GarageError.self) { try TestEngine.garage(path: path, encryptionKey: .key(SymmetricKey(size: .bits128))) }
        let garage = try TestEngine.garage(path: path, encryptionKey: .key(key))
        #expect(try await garage.retrieve(SKNote.self, identifier: "n1")?.text == "hello")
        #expect(try await garage.encryptionStatus().keyDerivation == "HKDF-SHA256")
        #expect(throws: GarageError.self) { try TestEngine.garage(path: directory.path("weak.sqlite"), encryptionKey: .passphrase("x", rounds: 1_000)) }
    }

    @Test func changingThePassphraseRewritesNoObject() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("notes.sqlite")
        let garage = try TestEngine.garage(path: path, encryptionKey: Self.passphrase("old"))
        let before = try { () throws -> [String: String] in
            try garage.parkAll((0..<50).map { SKNote(id: "n\($0)", text: "text \($0)") })
            let before = try storedData(garage)
            try garage.changeEncryptionKey(to: Self.passphrase("new"))
            return before
        }()
        #expect(try storedData(garage) == before)
        try await garage.changeEncryptionKey(to: Self.passphrase("newer"))
        #expect(try storedData(garage) == before)
        try await garage.park(SKNote(id: "n50", text: "still parks"))
        #expect { try TestEngine.garage(path: path, encryptionKey: Self.passphrase("old")) } throws: { isWrongKey($0, path) }
        #expect { try TestEngine.garage(path: path, encryptionKey: Self.passphrase("new")) } throws: { isWrongKey($0, path) }
        let reopened = try TestEngine.garage(path: path, encryptionKey: Self.passphrase("newer"))
        #expect(try await reopened.count(SKNote.self) == 51)
        #expect(try await reopened.encryptionStatus().keyIDs == [1])
        // A garage without a key can't change it.
        await #expect(throws: GarageError.self) { try await TestEngine.garage().changeEncryptionKey(to: Self.passphrase("x")) }
    }

    @Test func rekeyRotatesTheDataKeyAndLeavesNoOldCiphertextOnDisk() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("notes.sqlite")
        let garage = try TestEngine.garage(path: path, encryptionKey: Self.passphrase("one"))
        let (tagID, oldData, rekeyed) = try { () throws -> (String, [String: String], Int) in
            try garage.parkAll((0..<1_200).map { SKNote(id: "n\($0)", text: "Rotated-Marker \($0)") })
            let tagID = try garage.identifier(for: SKTag(label: "pin 1234"))
            try garage.park(SKTag(label: "pin 1234"))
            let oldData = try storedData(garage)
            return (tagID, oldData, try garage.rekey(to: Self.passphrase("two")))
        }()
        #expect(rekeyed == 1_201)
        var status = try await garage.encryptionStatus()
        #expect(status.currentKeyID == 2 && status.keyIDs == [2] && !status.isUnfinished)
        #expect(status.encryptions == 1_201)
        let newData = try storedData(garage)
        #expect(newData.values.allSatisfy { AESGCMEncryptor.keyID(ofEnvelope: $0) == 2 })
        if TestEngine.hasFiles {            // PostgreSQL's files: PostgresEncryptionTests
            let files = storeFileBytes(path)
            for old in oldData.values.prefix(20) {
                #expect(files.range(of: Data(old.utf8)) == nil, "an old ciphertext is in the files")
            }
            #expect(files.range(of: Data("Rotated-Marker".utf8)) == nil)
        }

        #expect(try await garage.rekey(to: Self.passphrase("three")) == 1_201)
        status = try await garage.encryptionStatus()
        #expect(status.currentKeyID == 3 && status.keyIDs == [3])
        #expect { try TestEngine.garage(path: path, encryptionKey: Self.passphrase("two")) } throws: { isWrongKey($0, path) }
        let reopened = try TestEngine.garage(path: path, encryptionKey: Self.passphrase("three"))
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
        let stale = try TestEngine.garage(path: path, encryptionKey: .key(key))
        try stale.park(SKNote(id: "n1", text: "one"))
        #expect(try TestEngine.garage(path: path, encryptionKey: .key(key)).decryptAllObjects() == 1)
        #expect { try stale.park(SKNote(id: "n2", text: "two")) } throws: { isStale($0, path) }
        #expect(throws: GarageError.unencryptedRow(typeName: "SKNote", identifier: "n1")) {
            try stale.retrieve(SKNote.self, identifier: "n1")
        }
        #expect(try TestEngine.garage(path: path).retrieveAll(SKNote.self).map(\.id) == ["n1"])

        let relocked = try TestEngine.garage(path: path, encryptionKey: Self.passphrase("new"))
        #expect(try relocked.encryptionStatus().currentKeyID == 2)
        #expect { try stale.park(SKNote(id: "n3", text: "three")) } throws: { isStale($0, path) }
        #expect(try relocked.retrieveAll(SKNote.self).map(\.id) == ["n1"])
        // A cipher of one's own still writes into a decrypted store, with its own key ids.
        #expect(try relocked.decryptAllObjects() == 1)
        let custom = try TestEngine.garage(path: path)
        custom.dataEncryptionDelegate = try AESGCMEncryptor(key: SymmetricKey(size: .bits256), keyID: 7)
        try custom.park(SKNote(id: "n4", text: "four"))
        #expect(try custom.count(SKNote.self) == 2)
        #expect(throws: GarageError.self) { try TestEngine.garage(path: directory.path("empty.sqlite"), encryptionKey: .passphrase("")) }
    }

    @Test func hashableIdentifiersAreKeyedPerStore() throws {
        let directory = try TemporaryDirectory()
        let tag = SKTag(label: "pin 1234")
        let plain = try TestEngine.garage().identifier(for: tag)
        let first = try TestEngine.garage(path: directory.path("a.sqlite"), encryptionKey: Self.passphrase("same"))
        let second = try TestEngine.garage(path: directory.path("b.sqlite"), encryptionKey: Self.passphrase("same"))
        let firstID = try first.identifier(for: tag)
        #expect(firstID != plain)
        #expect(firstID != (try second.identifier(for: tag)))
        #expect(firstID.count == 64 && firstID.allSatisfy(\.isHexDigit))
        try first.park(tag)
        try first.changeEncryptionKey(to: Self.passphrase("other"))
        #expect(try first.identifiers(of: SKTag.self) == [firstID])
        #expect(try first.identifier(for: tag) == firstID)
    }

    @Test func aPassphraseOpensHoweverItsAccentsAreTypedAndImportsAreRefused() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("notes.sqlite")
        do {
            let garage = try TestEngine.garage(path: path, encryptionKey: Self.passphrase("caf\u{E9}"))       // é, one scalar
            try garage.park(SKNote(id: "n1", text: "one"))
            #expect(throws: GarageError.self) {
                try garage.importGarageStorageStore(at: SyncAsyncParityTests.garageStorageStore)
            }
        }
        let garage = try TestEngine.garage(path: path, encryptionKey: Self.passphrase("cafe\u{301}"))       // e and a combining accent
        #expect(try garage.count(SKNote.self) == 1)
    }

}
