import Foundation
import GarageLite
import Testing

/// A delegate whose output contains U+0000: SQLite would have cut the text there.
final class NULEncryptor: DataEncryptionDelegate {
    func encrypt(_ data: Data) throws -> String { "cipher\u{0}text" }
    func decrypt(_ string: String) throws -> Data { Data() }
}

@Suite("Encryption stage")
struct EncryptionStageTests {
    /// A delegate whose output held U+0000 parked "successfully" an empty string: the object
    /// was lost. Now the park is refused, naming the object, and nothing is written.
    @Test func ciphertextWithNULIsRefusedNotTruncated() async throws {
        let garage = try TestEngine.garage()
        garage.dataEncryptionDelegate = NULEncryptor()
        let expected = GarageError.encryptionFailed(
            typeName: "Counter", identifier: "1",
            reason: "the dataEncryptionDelegate returned text containing U+0000 (NUL), which the store would cut "
                + "short; encode the ciphertext as text without NUL, such as base64")
        #expect(throws: expected) { try garage.park(Counter(id: 1, value: 1)) }
        await #expect(throws: expected) { try await garage.parkAll([Counter(id: 1, value: 1)]) }
        #expect(throws: expected) { try garage.parkAll((1...1_200).map { Counter(id: $0, value: $0) }) }
        garage.dataEncryptionDelegate = nil
        #expect(try await garage.count(Counter.self) == 0)
        #expect(expected.description.contains("Counter") && expected.description.contains("Nothing was parked"))
    }
}
