import Foundation
import GarageLiteCore

/// The encryption step of an object's path: the rows the graph encoder produced become the
/// payloads the store writes, and the rows the store reads become the JSON the graph decoder
/// reads. Without a delegate, JSON passes through as it is.
struct EncryptionStage: Sendable {
    let delegate: (any DataEncryptionDelegate)?
    /// Set while ``Garage/decryptAllObjects()-7ed1d`` runs: rows are written unencrypted, and
    /// read unencrypted too, whatever the delegate.
    var writesPlaintext = false
    /// The store's path when the garage was opened with its key (its encryptor is the store's).
    var keyedStorePath: String?

    /// What `row` writes: its JSON, encrypted when there is a delegate.
    ///
    /// - throws: The delegate's errors, unchanged; ``GarageError/encryptionFailed(typeName:identifier:reason:)``
    ///   when its output contains U+0000, which the store would cut the data at (the object
    ///   would be lost without an error).
    func seal(_ row: EncodedRow) throws -> (key: ObjectKey, payload: RowPayload) {
        let encrypts = delegate != nil && !writesPlaintext
        let data = encrypts ? try encrypt(row.json, for: row.key) : row.json
        return (row.key, RowPayload(
            data: data, isEncrypted: encrypts, syncStatus: row.syncStatus,
            references: ReferenceList.encode(row.references), isRoot: row.isRoot))
    }

    /// The stored form of `json`, the JSON of the object `key`, encrypted by the delegate (for
    /// its row, when the delegate binds its ciphertext to it).
    ///
    /// - throws: The delegate's errors, unchanged; ``GarageError/encryptionFailed(typeName:identifier:reason:)``
    ///   when its output contains U+0000.
    func encrypt(_ json: String, for key: ObjectKey) throws -> String {
        guard let delegate else { return json }
        let data: String
        if let bound = delegate as? any RowBoundEncryptionDelegate {
            data = try bound.encrypt(Data(json.utf8), for: key.encryptionContext)
        } else {
            data = try delegate.encrypt(Data(json.utf8))
        }
        if data.containsNUL {
            throw GarageError.encryptionFailed(
                typeName: key.typeName, identifier: key.identifier,
                reason: "the dataEncryptionDelegate returned text containing U+0000 (NUL), which the store "
                    + "would cut short; encode the ciphertext as text without NUL, such as base64")
        }
        return data
    }

    /// The JSON `data` holds, encrypted for the row `sealedFor`; errors name the object `key`.
    ///
    /// - throws: ``GarageError/missingEncryptionDelegate(typeName:identifier:)`` without a
    ///   delegate; ``GarageError/decryptionFailed(typeName:identifier:reason:)`` when the
    ///   delegate fails (its own `GarageError`s pass unchanged).
    func decrypt(_ data: String, sealedFor: ObjectKey, naming key: ObjectKey) throws -> Data {
        guard let delegate else {
            throw GarageError.missingEncryptionDelegate(typeName: key.typeName, identifier: key.identifier)
        }
        do {
            if let bound = delegate as? any RowBoundEncryptionDelegate {
                return try bound.decrypt(data, for: sealedFor.encryptionContext)
            }
            return try delegate.decrypt(data)
        } catch let error as GarageError {
            throw error
        } catch AESGCMEncryptor.EnvelopeError.unknownKey(let id) where keyedStorePath != nil && isNewerStoreKey(id) {
            throw GarageError.staleEncryptionKey(
                path: keyedStorePath ?? "", reason: "\(key) is encrypted with the store's data key \(id), which the store "
                    + "got after this garage opened it (another garage or process rotated the key)")
        } catch {
            throw GarageError.decryptionFailed(typeName: key.typeName, identifier: key.identifier,
                                               reason: String(reflecting: error))
        }
    }

    /// Whether `id` may be a data key the store got after the garage opened it: a store's key ids
    /// grow by one per rotation, so a newer one is a little above the current one (an envelope
    /// of another cipher may carry any number there).
    private func isNewerStoreKey(_ id: UInt32) -> Bool {
        guard let encryptor = delegate as? AESGCMEncryptor else { return false }
        return id > encryptor.keyID && id - encryptor.keyID < 1 << 16
    }

    /// The JSON `row` holds, decrypted if need be, for the graph decoder.
    ///
    /// - throws: ``GarageError/storageDataIsNil(_:)`` for a row without data (as GarageStorage
    ///   for a row whose data is nil; only a store imported from one holds such rows).
    func open(_ row: StoredRow) throws -> DecodableRow {
        let key = row.key
        if row.data.isEmpty { throw GarageError.storageDataIsNil(key.description) }
        if !row.isEncrypted, !writesPlaintext, delegate is any RowBoundEncryptionDelegate {
            throw GarageError.unencryptedRow(typeName: key.typeName, identifier: key.identifier)
        }
        do {
            let json: JSONDocument
            if row.isEncrypted {
                json = try JSONDocument(parsing: try decrypt(row.data, sealedFor: row.sealedFor ?? key, naming: key))
            } else {
                json = try JSONDocument(parsing: row.data)
            }
            return DecodableRow(key: key, json: json.root, syncStatus: row.syncStatus, revision: row.copyRevision)
        } catch let failure as JSONReader.Failure {
            throw GarageError.corruptData(
                typeName: key.typeName, identifier: key.identifier,
                reason: row.isEncrypted
                    ? "its decrypted JSON is invalid (was it decrypted with another key?): \(failure)"
                    : "its JSON is invalid: \(failure)")
        }
    }
}

extension EncryptionStage {
    /// The data of the encrypted row `old` for the key `new` (a renamed type): re-encrypted
    /// when the delegate binds each ciphertext to its row; as it is when it doesn't (it reads
    /// the same under any key).
    ///
    /// - throws: ``GarageError/missingEncryptionDelegate(typeName:identifier:)`` without a
    ///   delegate: whether the data is bound to its row can't be told, and moved unsealed it
    ///   might never be read again; ``GarageError/decryptionFailed(typeName:identifier:reason:)``
    ///   naming the row when it doesn't decrypt.
    func reseal(_ data: String, from old: ObjectKey, to new: ObjectKey) throws -> String {
        guard let delegate else {
            throw GarageError.missingEncryptionDelegate(typeName: old.typeName, identifier: old.identifier)
        }
        guard delegate is any RowBoundEncryptionDelegate else { return data }
        let json = try decrypt(data, sealedFor: old, naming: old)
        return try encrypt(String(decoding: json, as: UTF8.self), for: new)
    }

    /// The identifier of a `Hashable` object from its canonical JSON: the delegate's keyed one
    /// when it gives one, otherwise the garage's (``Identity/contentIdentifier(ofJSON:)``).
    var contentIdentifier: @Sendable ([UInt8]) -> String {
        guard let bound = delegate as? any RowBoundEncryptionDelegate else { return Identity.contentIdentifier(ofJSON:) }
        return { json in bound.contentIdentifier(ofCanonicalJSON: Data(json)) ?? Identity.contentIdentifier(ofJSON: json) }
    }

    /// Whether `data`, stored encrypted, is encrypted with the key the delegate encrypts with
    /// now; `false` when that can't be told (every row is then re-encrypted).
    func isCurrent(_ data: String) -> Bool {
        guard let encryptor = delegate as? AESGCMEncryptor else { return false }
        return AESGCMEncryptor.keyID(ofEnvelope: data) == encryptor.keyID
    }
}

extension ObjectKey {
    /// The row this key names, as a ``RowBoundEncryptionDelegate`` binds a ciphertext to it.
    var encryptionContext: EncryptionContext {
        EncryptionContext(typeName: typeName, identifier: identifier)
    }
}
