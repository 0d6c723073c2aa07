import Crypto
import Foundation
import GarageFixtureModels
import GarageLite

/// The delegate that wrote encrypted.garage: AES-256-GCM with the fixed key
/// `FixtureV1.encryptionKey`, each row stored as the base64 of the combined nonce, ciphertext
/// and tag. It is a copy of the tests' `TestEncryptor` (this program can't import the test
/// target); the tests read the file with `TestEncryptor(key:)` and the same key. Keep the two
/// schemes and the key as they are, or encrypted.garage becomes unreadable.
final class FixtureEncryptor: DataEncryptionDelegate, @unchecked Sendable {
    struct Failure: Error {}

    let key = SymmetricKey(data: FixtureV1.encryptionKey)

    func encrypt(_ data: Data) throws -> String {
        guard let combined = try AES.GCM.seal(data, using: key).combined else { throw Failure() }
        return combined.base64EncodedString()
    }

    func decrypt(_ string: String) throws -> Data {
        guard let combined = Data(base64Encoded: string) else { throw Failure() }
        return try AES.GCM.open(AES.GCM.SealedBox(combined: combined), using: key)
    }
}
