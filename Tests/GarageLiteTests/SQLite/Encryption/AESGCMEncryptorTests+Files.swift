import Crypto
import Foundation
import Testing
@testable import GarageLite

// Decrypting a store, as its SQLite file shows it: the plaintext back on disk. Moved from
// Encryption/AESGCMEncryptorTests.swift (issue 45).

extension AESGCMRewriteTests {
    @Test func decryptingTurnsEncryptionOffKeepingEveryObject() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("bank.sqlite")
        let garage = try Garage(path: path)   // its file is read below
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
