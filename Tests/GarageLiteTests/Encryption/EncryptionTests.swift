import Crypto
import Foundation
import Testing
@testable import GarageLite

@Suite("Encryption hook")
struct EncryptionTests {
    @Test func readingAnEncryptedRowWithoutADelegateIsAClearError() throws {
        let garage = try TestEngine.garage()
        garage.dataEncryptionDelegate = TestEncryptor()
        try garage.park(Counter(id: 1, value: 1))
        garage.dataEncryptionDelegate = nil
        #expect(throws: GarageError.missingEncryptionDelegate(typeName: "Counter", identifier: "1")) {
            try garage.retrieve(Counter.self, identifier: 1)
        }
    }

    @Test func theDelegatesErrorsPropagateAndAFailedEncryptionWritesNothing() throws {
        let garage = try TestEngine.garage()
        let encryptor = TestEncryptor()
        garage.dataEncryptionDelegate = encryptor
        try garage.park(Counter(id: 1, value: 1))
        encryptor.failsToEncrypt = true
        let sam = Person(name: "Sam")
        sam.brother = Person(name: "Max")
        #expect(throws: TestEncryptor.Failure()) {
            try garage.park(sam)
        }
        #expect(try garage.count(Person.self) == 0)

        garage.dataEncryptionDelegate = TestEncryptor() // another key
        let error = try #require(throws: GarageError.self) {
            try garage.retrieve(Counter.self, identifier: 1)
        }
        guard case .decryptionFailed(typeName: "Counter", identifier: "1", let reason) = error else {
            Issue.record("expected decryptionFailed, got \(error)")
            return
        }
        #expect(reason.contains("CryptoKitError"))
    }

    @Test func plaintextRowsStayReadableOnceADelegateIsSet() throws {
        let garage = try TestEngine.garage()
        try garage.park(Counter(id: 1, value: 1))
        garage.dataEncryptionDelegate = TestEncryptor()
        #expect(try garage.retrieve(Counter.self, identifier: 1)?.value == 1)
    }

    @Test func theDelegateIsHeldStrongly() throws {
        let garage = try TestEngine.garage()
        garage.dataEncryptionDelegate = TestEncryptor()   // no other reference
        try garage.park(Counter(id: 1, value: 1))
        let row = try #require(try garage.store.storedRow(ObjectKey(typeName: "Counter", identifier: "1")))
        #expect(row.isEncrypted)
        #expect(!row.data.contains("value"))
    }
}
