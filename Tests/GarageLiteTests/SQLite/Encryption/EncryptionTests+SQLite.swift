import Foundation
import Testing
@testable import GarageLite

// The encryption hook as the SQLite store file shows it: no plaintext in the file or its
// `-wal`. Moved from Encryption/EncryptionTests.swift (issue 45).

extension EncryptionTests {
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
}
