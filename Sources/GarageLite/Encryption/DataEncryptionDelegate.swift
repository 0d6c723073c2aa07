import Foundation
import GarageLiteCore

/// Encrypts each object's JSON before it is written, and decrypts it when it is read.
///
/// Set it as the garage's ``Garage/dataEncryptionDelegate``. Every row parked while it is
/// set is stored as the string ``encrypt(_:)`` returns, and marked as encrypted; reading
/// an encrypted row calls ``decrypt(_:)``. Rows parked without a delegate stay readable
/// after one is set.
///
/// ```swift
/// final class Sealer: DataEncryptionDelegate {
///     let key: SymmetricKey
///     init(key: SymmetricKey) { self.key = key }
///     func encrypt(_ data: Data) throws -> String {
///         try AES.GCM.seal(data, using: key).combined!.base64EncodedString()
///     }
///     func decrypt(_ string: String) throws -> Data {
///         guard let combined = Data(base64Encoded: string) else { throw SealerError.notBase64 }
///         return try AES.GCM.open(AES.GCM.SealedBox(combined: combined), using: key)
///     }
/// }
/// garage.dataEncryptionDelegate = Sealer(key: key)
/// ```
///
/// The garage holds its delegate strongly (GarageStorage holds it weakly, so a released
/// delegate silently turns encryption off), and may call it from several threads at once,
/// so it is `Sendable`. Errors it throws reach the caller of `park` or `retrieve` unchanged; its
/// output must not contain U+0000 (see ``GarageError/encryptionFailed(typeName:identifier:reason:)``).
///
/// A park of an object as it is stored changes nothing (its revision and sync status stay)
/// only when ``encrypt(_:)`` returns the same string for the same data: with a random nonce,
/// every park counts as a change. ``AESGCMEncryptor`` derives its nonce from the content.
public protocol DataEncryptionDelegate: AnyObject, Sendable {
    /// Returns the stored form of an object's JSON.
    func encrypt(_ data: Data) throws -> String
    /// Returns the JSON that ``encrypt(_:)`` was given.
    func decrypt(_ string: String) throws -> Data
}
