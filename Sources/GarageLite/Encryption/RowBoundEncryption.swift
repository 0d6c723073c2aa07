import Foundation
import GarageLiteCore

/// The row an encrypted object is stored in: what a ``RowBoundEncryptionDelegate`` binds its
/// ciphertext to, so that a ciphertext copied into another row, of another object or type,
/// fails to decrypt instead of being read as that row's object.
public struct EncryptionContext: Sendable, Hashable {
    /// The stored type name of the row.
    public let typeName: String
    /// The identifier of the row.
    public let identifier: String

    /// A context for the row of `typeName` and `identifier`.
    public init(typeName: String, identifier: String) {
        self.typeName = typeName
        self.identifier = identifier
    }

    /// The bytes that name the row unambiguously, for an AEAD cipher's associated data: a
    /// label, the type name and the identifier, each preceded by its length.
    ///
    /// ```swift
    /// let box = try AES.GCM.seal(data, using: key, authenticating: context.associatedData)
    /// ```
    public var associatedData: Data {
        // Built in an array, then made `Data` once: appending to `Data` part by part cost a
        // fifth of an encryption.
        var bytes: [UInt8] = []
        bytes.reserveCapacity(associatedDataCount)
        appendAssociatedData(to: &bytes)
        return Data(bytes)
    }

    /// The number of bytes of ``associatedData``.
    var associatedDataCount: Int { 12 + Self.label.utf8.count + typeName.utf8.count + identifier.utf8.count }

    /// Appends ``associatedData`` to `bytes`, whose capacity the caller reserved: the garage's
    /// encryptor builds each cipher's input in one array, without a `Data` between (each costs
    /// about 2,000 instructions).
    func appendAssociatedData(to bytes: inout [UInt8]) {
        for part in [Self.label, typeName, identifier] {
            withUnsafeBytes(of: UInt32(part.utf8.count).bigEndian) { bytes.append(contentsOf: $0) }
            bytes.append(contentsOf: part.utf8)
        }
    }

    private static let label = "GarageLite row"
}

/// A ``DataEncryptionDelegate`` whose ciphertext is bound to its row: the garage calls the
/// `for:` forms, with the row's ``EncryptionContext``, to encrypt and decrypt each object.
///
/// ```swift
/// final class Sealer: RowBoundEncryptionDelegate {
///     let key: SymmetricKey
///     init(key: SymmetricKey) { self.key = key }
///     func encrypt(_ data: Data, for context: EncryptionContext) throws -> String {
///         try AES.GCM.seal(data, using: key, authenticating: context.associatedData).combined!.base64EncodedString()
///     }
///     func decrypt(_ string: String, for context: EncryptionContext) throws -> Data {
///         guard let combined = Data(base64Encoded: string) else { throw SealerError.notBase64 }
///         return try AES.GCM.open(AES.GCM.SealedBox(combined: combined), using: key,
///                                 authenticating: context.associatedData)
///     }
/// }
/// ```
///
/// A garage with a row-bound delegate also refuses rows stored unencrypted
/// (``GarageError/unencryptedRow(typeName:identifier:)``): a plaintext row written into the
/// file would otherwise be read as the object. Encrypt the rows parked before the delegate
/// was set with ``Garage/encryptUnencryptedObjects()-6b6nq``. ``AESGCMEncryptor`` is a ready one.
public protocol RowBoundEncryptionDelegate: DataEncryptionDelegate {
    /// Returns the stored form of the JSON of the object in the row `context` names.
    func encrypt(_ data: Data, for context: EncryptionContext) throws -> String
    /// Returns the JSON that ``encrypt(_:for:)`` was given for the same row; throws when
    /// `string` was encrypted for another row, or with another key.
    func decrypt(_ string: String, for context: EncryptionContext) throws -> Data
    /// The identifier of a `Hashable` object (one that is not `Identifiable`) whose canonical
    /// JSON is `json`, or `nil` for the garage's own: the SHA-256 of the JSON, which anyone can
    /// compute, so that a small object's content can be guessed from its identifier. Return a
    /// keyed hash (an HMAC) to hide it; the same for the same JSON, always: the identifier is
    /// how the object is found again. `nil` by default.
    func contentIdentifier(ofCanonicalJSON json: Data) -> String?
}

extension RowBoundEncryptionDelegate {
    /// `nil`: the garage's identifier (the SHA-256 of the JSON).
    public func contentIdentifier(ofCanonicalJSON json: Data) -> String? {
        nil
    }

    /// Refuses: the garage encrypts each object for its row (``encrypt(_:for:)``).
    public func encrypt(_ data: Data) throws -> String {
        throw RowBindingRequired()
    }

    /// Refuses: the garage decrypts each object for its row (``decrypt(_:for:)``). (The garage
    /// calls the unbound form only for the nested objects GarageStorage's Objective-C side
    /// encrypted, which a row-bound cipher never wrote.)
    public func decrypt(_ string: String) throws -> Data {
        throw RowBindingRequired()
    }
}

/// A row-bound cipher was asked to encrypt or decrypt without a row.
struct RowBindingRequired: Error, CustomStringConvertible {
    var description: String { "this cipher encrypts and decrypts an object only for its row" }
}
