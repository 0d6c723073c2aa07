import Crypto
import Foundation
import GarageLite

/// AES-GCM with a key of the test's own, as an app would write its delegate.
final class TestEncryptor: DataEncryptionDelegate, @unchecked Sendable {
    struct Failure: Error, Equatable {}

    let key: SymmetricKey
    /// Makes `encrypt` throw, to test that a failing delegate writes nothing.
    var failsToEncrypt = false

    init(key: SymmetricKey = SymmetricKey(size: .bits256)) {
        self.key = key
    }

    func encrypt(_ data: Data) throws -> String {
        if failsToEncrypt { throw Failure() }
        guard let combined = try AES.GCM.seal(data, using: key).combined else { throw Failure() }
        return combined.base64EncodedString()
    }

    func decrypt(_ string: String) throws -> Data {
        guard let combined = Data(base64Encoded: string) else { throw Failure() }
        return try AES.GCM.open(AES.GCM.SealedBox(combined: combined), using: key)
    }
}
