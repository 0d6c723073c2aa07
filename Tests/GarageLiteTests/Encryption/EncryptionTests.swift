import Crypto
import Foundation
import Testing
@testable import GarageLite

@Suite("Encryption hook")
struct EncryptionTests {
    @Test func anEncryptedStoreFileDoesNotContainThePlaintext() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("secret.sqlite")
        let encryptor = TestEncryptor()
        do {
            let garage = try Garage(path: path)
            garage.dataEncryptionDelegate = encryptor
            let sam = Person(name: "Samuel-Secret", address: Address(street: "Hidden Lane 7", city: "Nowhere", zip: "00000"))
            sam.brother = Person(name: "Maxwell-Secret")
            try garage.park(sam)
            let retrieved = try #require(try garage.retrieve(Person.self, identifier: "Samuel-Secret"))
            #expect(retrieved.address?.street == "Hidden Lane 7")
            #expect(retrieved.brother?.name == "Maxwell-Secret")
        }
        var bytes = Data()
        for suffix in ["", "-wal"] {
            if let data = FileManager.default.contents(atPath: path + suffix) { bytes.append(data) }
        }
        #expect(!bytes.isEmpty)
        for secret in ["Hidden Lane", "Nowhere", "\"address\""] {
            #expect(bytes.range(of: Data(secret.utf8)) == nil, "\(secret) is in the file")
        }
        let reopened = try Garage(path: path)
        reopened.dataEncryptionDelegate = encryptor
        #expect(try reopened.retrieve(Person.self, identifier: "Samuel-Secret")?.address?.city == "Nowhere")
    }

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
