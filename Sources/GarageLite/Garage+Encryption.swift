import Foundation

// Encryption beyond the delegate's per-row work (Encryption/): encrypting the objects a store
// holds unencrypted.
extension Garage {
    /// Encrypts, with the garage's ``dataEncryptionDelegate``, every object stored unencrypted
    /// (parked before the delegate was set); returns how many it encrypted.
    ///
    /// ```swift
    /// garage.dataEncryptionDelegate = try AESGCMEncryptor(key: key)
    /// try garage.encryptUnencryptedObjects()        // once, when turning encryption on
    /// ```
    ///
    /// A garage whose delegate binds each ciphertext to its row (``RowBoundEncryptionDelegate``,
    /// such as ``AESGCMEncryptor``) refuses to read unencrypted rows; this is how the objects of
    /// a store that was not encrypted become readable with it. Each object's content, revision,
    /// dates and sync status stay as they are: nothing is uploaded again, and observers see no
    /// change. It writes in transactions of 500 objects, committed at once (not part of a
    /// transaction in progress); run again after an interruption, it encrypts what is left.
    ///
    /// Nothing of the plaintext stays on disk: the rows are rewritten with SQLite's
    /// `secure_delete` on, and at the end the store is compacted (`VACUUM`, which also drops
    /// what was deleted before, in free pages) and its write-ahead log emptied. That takes a
    /// while on a large store, and room for a copy of it. A reader of another process keeping
    /// an old snapshot keeps the log from being emptied: call it again when that is done.
    ///
    /// - throws: ``GarageError/invalidEncryptionKey(reason:)`` when no delegate is set; the
    ///   delegate's errors (the batch then writes nothing).
    @discardableResult
    public func encryptUnencryptedObjects() throws -> Int {
        let encryption = try encryptionForMigrating()
        var (total, position): (Int, Int64?) = (0, 0)
        while let after = position {
            let batch = try run(store.encryptingUnencrypted(after: after, limit: Self.encryptionBatchSize, encryption.encrypt))
            total += batch.count
            position = batch.next
        }
        return total
    }

    /// Encrypts every object stored unencrypted (see ``encryptUnencryptedObjects()-6b6nq``)
    /// without blocking the calling thread.
    @discardableResult
    public nonisolated(nonsending) func encryptUnencryptedObjects() async throws -> Int {
        let encryption = try encryptionForMigrating()
        var (total, position): (Int, Int64?) = (0, 0)
        while let after = position {
            let batch = try await run(store.encryptingUnencrypted(after: after, limit: Self.encryptionBatchSize, encryption.encrypt))
            total += batch.count
            position = batch.next
        }
        return total
    }

    /// How many objects ``encryptUnencryptedObjects()-6b6nq`` encrypts per transaction.
    static let encryptionBatchSize = 500

    private func encryptionForMigrating() throws -> EncryptionStage {
        let encryption = configuration().encryption
        guard encryption.delegate != nil else {
            throw GarageError.invalidEncryptionKey(reason: "the garage has no dataEncryptionDelegate to encrypt with")
        }
        return encryption
    }
}
