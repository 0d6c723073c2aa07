import Foundation
import GarageLiteCore

// Encryption beyond the delegate's per-row work (Encryption/): rewriting every object's stored
// data in place, to encrypt a store, to move it to the current key, or to decrypt it.
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
    /// a store that was not encrypted become readable with it. Run it once, under the app's
    /// control, not at every launch: it encrypts any unencrypted row, one written into the file
    /// by someone else too.
    ///
    /// The rewrites of this call, ``reencryptObjects()-bhgs`` and ``decryptAllObjects()-7ed1d``:
    /// each object's content, revision, dates and sync status stay as they are (nothing is
    /// uploaded again, and observers see no change); they write in transactions of 500
    /// objects, committed at once (not part of a transaction in progress), so a call
    /// interrupted, by an error or a killed process, leaves each object as it was or rewritten,
    /// and called again, goes on. Nothing of the data replaced stays in the store's files: on
    /// SQLite the rows are rewritten with `secure_delete` on, and at the end the store is
    /// compacted (`VACUUM`, which also drops what was deleted before, in free pages) and its
    /// write-ahead log emptied; a reader of another process keeping an old snapshot keeps the
    /// log from being emptied: call again when that is done. On PostgreSQL the end is
    /// `VACUUM (FULL, ANALYZE)` of the object table, which writes its rows and indexes into new
    /// files and drops the old ones (plain `VACUUM` leaves the old row versions' bytes in the
    /// pages): the schema's garages wait meanwhile, and the server's write-ahead log, archives,
    /// replicas and backups still hold the old values until they are recycled (the article
    /// *Encryption* says more). Either takes a while on a large store, and room for a copy of
    /// it. (On an engine that can't erase what it frees, see ``GarageEngine``, the rows are
    /// rewritten all the same, and what they held before stays wherever that engine leaves
    /// freed data.)
    ///
    /// Encrypting first drops the store's indexes (`indexes()`: text and query indexes),
    /// which hold the objects' words and values in clear and can't read encrypted rows: a garage
    /// that encrypts refuses them, and the queries that would read them.
    ///
    /// An `async` call whose task is cancelled stops between two transactions, with
    /// `CancellationError`: each object is as it was or rewritten, and the next call goes on.
    ///
    /// - throws: ``GarageError/invalidEncryptionKey(reason:)`` when no delegate is set; the
    ///   delegate's errors (the batch then writes nothing).
    @discardableResult
    public func encryptUnencryptedObjects() throws -> Int {
        try run(encryptingUnencrypted())
    }

    /// Encrypts every object stored unencrypted (see ``encryptUnencryptedObjects()-6b6nq``)
    /// without blocking the calling thread.
    @discardableResult
    public nonisolated(nonsending) func encryptUnencryptedObjects() async throws -> Int {
        try await run(encryptingUnencrypted())
    }

    /// Re-encrypts every encrypted object with the key the ``dataEncryptionDelegate`` encrypts
    /// with now; returns how many it re-encrypted. The end of a key rotation: afterwards the
    /// previous keys are no longer needed, and their ciphertexts are gone from the disk.
    ///
    /// ```swift
    /// garage.dataEncryptionDelegate = try AESGCMEncryptor(key: newKey, keyID: 2, previousKeys: [1: oldKey])
    /// try garage.reencryptObjects()
    /// garage.dataEncryptionDelegate = try AESGCMEncryptor(key: newKey, keyID: 2)    // the old key can go
    /// ```
    ///
    /// With an ``AESGCMEncryptor``, the objects already on the current key are left as they
    /// are; with another delegate, every object is decrypted and encrypted again. Interrupted
    /// (a killed process too), the store holds objects of both keys, all readable with the
    /// delegate above: call it again to finish. See ``encryptUnencryptedObjects()-6b6nq`` for
    /// how it writes.
    ///
    /// - throws: ``GarageError/invalidEncryptionKey(reason:)`` when no delegate is set;
    ///   ``GarageError/decryptionFailed(typeName:identifier:reason:)`` naming an object that
    ///   doesn't decrypt (delete it, or park it again, then call again).
    @discardableResult
    public func reencryptObjects() throws -> Int {
        try run(reencrypting())
    }

    /// Re-encrypts every encrypted object with the current key (see ``reencryptObjects()-bhgs``)
    /// without blocking the calling thread.
    @discardableResult
    public nonisolated(nonsending) func reencryptObjects() async throws -> Int {
        try await run(reencrypting())
    }

    /// Decrypts every encrypted object, with the ``dataEncryptionDelegate``, and stores it
    /// unencrypted, then turns encryption off (sets the delegate to `nil`); returns how many
    /// it decrypted.
    ///
    /// ```swift
    /// try garage.decryptAllObjects()
    /// ```
    ///
    /// Until it returns, the store holds objects of both kinds, which a garage with a delegate
    /// that binds its rows refuses to read unencrypted: call it again to finish. See
    /// ``encryptUnencryptedObjects()-6b6nq`` for how it writes.
    ///
    /// - throws: ``GarageError/invalidEncryptionKey(reason:)`` when no delegate is set;
    ///   ``GarageError/decryptionFailed(typeName:identifier:reason:)`` naming an object that
    ///   doesn't decrypt; ``GarageError/keyChangeUnfinished(path:operation:opensWith:reason:)``
    ///   when the storage failed (a full disk, an I/O error) part-way: call it again to finish.
    @discardableResult
    public func decryptAllObjects() throws -> Int {
        try run(decryptingAll())
    }

    /// Decrypts every encrypted object and turns encryption off (see
    /// ``decryptAllObjects()-7ed1d``) without blocking the calling thread.
    @discardableResult
    public nonisolated(nonsending) func decryptAllObjects() async throws -> Int {
        try await run(decryptingAll())
    }
}
