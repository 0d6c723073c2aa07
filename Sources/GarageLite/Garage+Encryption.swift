import Foundation

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

    /// Encrypts the unencrypted rows, then marks a store with a key encrypted.
    private func encryptingUnencrypted() -> StoreCall<Int> {
        guard let installed = keyring else { return encrypting(finishing: nil) }
        return StoreCall(store.readingMetadata(Keyring.recordName)) { text in
            let current = try self.refreshed(installed, storeText: text)
            switch current.record.state {
            case .encrypting:
                return self.encrypting(finishing: current)
            case .encrypted:
                // Counted only here, so that a store being decrypted, read-only or busy gets
                // the errors below rather than the count's.
                return StoreCall(self.store.countingRows(encrypted: false)) { unencrypted in
                    guard unencrypted == 0 else {
                        throw GarageError.invalidEncryptionKey(
                            reason: "the store was encrypted when it was opened with its key, so GarageLite wrote none of its "
                                + "unencrypted rows: they were put in the file by someone else; delete them instead")
                    }
                    return .done(0)
                }
            case .decrypting:
                throw GarageError.invalidEncryptionKey(
                    reason: "the store is being decrypted (decryptAllObjects() was interrupted): call decryptAllObjects() again, "
                        + "then open it with a key to encrypt it")
            }
        }
    }

    /// Encrypts the unencrypted rows; then, when `keyring` (the store's, `.encrypting`) is
    /// given, marks the store encrypted. Returns how many rows it encrypted.
    private func encrypting(finishing keyring: Keyring?) -> StoreCall<Int> {
        .starting {
            rewriting(encrypted: false, Self.encrypting(try encryptionForRewriting())).then { count in
                guard let keyring, let done = try self.finishedEncrypting(keyring) else { return .done(count) }
                return StoreCall(self.store.replacingKeyRecord(previous: keyring.text, with: done.text, resetsCount: false, guard: .keep)) {
                    try self.install(done, after: $0, replacing: keyring, sameWork: { $0.record.state == .encrypted })
                    return .done(count)
                }
            }
        }
    }

    /// `keyring` in the state `.encrypted`, or `nil` when it is not `.encrypting`.
    private func finishedEncrypting(_ keyring: Keyring) throws -> Keyring? {
        keyring.record.state == .encrypting ? try keyring.setting(.encrypted) : nil
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

    /// Re-encrypts the encrypted rows, then drops the keyring's previous data keys.
    func reencrypting() -> StoreCall<Int> {
        .starting {
            rewriting(encrypted: true, Self.reencrypting(try encryptionForRewriting())).then { count in
                guard let keyring = self.keyring, keyring.dataKeys.count > 1 else { return .done(count) }
                let done = try keyring.droppingPreviousKeys()
                return StoreCall(self.store.replacingKeyRecord(previous: keyring.text, with: done.text, resetsCount: false, guard: .keep)) {
                    try self.install(done, after: $0, replacing: keyring, sameWork: { $0.dataKeys.count == 1 })
                    return .done(count)
                }
            }
        }
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

    /// Marks the store being decrypted, decrypts its rows, then forgets its key.
    private func decryptingAll() -> StoreCall<Int> {
        .starting {
            let encryption = try startDecrypting()
            return markingDecrypting().then { _ in
                self.rewriting(encrypted: true, Self.decrypting(encryption)).then { count in
                    StoreCall(self.store.countingRows(encrypted: true)) { remaining in
                        try self.finishDecrypting(encryption, remaining: remaining)
                        // The keyring installed by markingDecrypting().
                        guard let keyring = self.keyring else { return .done(count) }
                        return StoreCall(self.store.replacingKeyRecord(
                            previous: keyring.text, with: nil, resetsCount: false, guard: keyring.retiringGuard,
                            isCancellable: false)) {
                            try self.install(nil, after: $0)
                            return .done(count)
                        }
                    }
                }.catching { error in
                    throw self.unfinishedKeyChange(error, operation: "decryptAllObjects()", opensWith: self.decryptingStoreKey)
                }
            }.always { self.state.write { $0.isDecryptingStore = $0.keyring?.record.state == .decrypting } }
        }
    }

    /// Marks a store with a key `.decrypting` (unless it is already), and installs that keyring.
    private func markingDecrypting() -> StoreCall<Void> {
        guard let keyring else { return .done(()) }
        return StoreCall(store.readingMetadata(Keyring.recordName)) { text in
            guard let (current, decrypting) = try self.decrypting(keyring, storeText: text) else { return .done(()) }
            return StoreCall(self.store.replacingKeyRecord(
                previous: current.text, with: decrypting.text, resetsCount: false, guard: current.retiringGuard)) {
                try self.install(decrypting, after: $0)
                return .done(())
            }
        }
    }

    /// Which key opens a store whose decryption stopped part-way (the `opensWith` of
    /// ``GarageError/keyChangeUnfinished(path:operation:opensWith:reason:)``).
    private var decryptingStoreKey: String {
        keyring == nil
            ? "the dataEncryptionDelegate it was decrypted with, which stays set to read the objects still encrypted"
            : "its key, as before: it holds objects encrypted and unencrypted until the decryption finishes"
    }

    /// `installed`, refreshed from the store's record `storeText`, and it in the state
    /// `.decrypting` (the store's triggers then let rows be written unencrypted, and refuse its
    /// keys' envelopes); `nil` when it is already.
    private func decrypting(_ installed: Keyring, storeText: String?) throws -> (Keyring, Keyring)? {
        let current = try refreshed(installed, storeText: storeText)
        return current.record.state == .decrypting ? nil : (current, try current.setting(.decrypting))
    }

    /// From now on, this garage parks objects unencrypted (reading both kinds), so that none
    /// parked while the rows are decrypted is left encrypted.
    private func startDecrypting() throws -> EncryptionStage {
        let encryption = try encryptionForRewriting()
        state.write { $0.isDecryptingStore = true }
        return encryption
    }

    /// Turns encryption off, if no encrypted row is left (`remaining`) and the delegate is still
    /// the one the rows were decrypted with.
    ///
    /// - throws: ``GarageError/invalidEncryptionKey(reason:)`` when objects were encrypted
    ///   meanwhile, by another garage or process: the delegate stays, to read them.
    private func finishDecrypting(_ encryption: EncryptionStage, remaining: Int) throws {
        guard remaining == 0 else {
            throw GarageError.invalidEncryptionKey(
                reason: "\(remaining) objects were parked encrypted while the store was decrypted, by another garage "
                    + "or process; the dataEncryptionDelegate stays set: call decryptAllObjects() again once they "
                    + "no longer encrypt")
        }
        state.write { state in
            if state.dataEncryptionDelegate === encryption.delegate { state.dataEncryptionDelegate = nil }
        }
    }

    /// How many objects the rewrites encrypt, re-encrypt or decrypt per transaction.
    static let encryptionBatchSize = 500

    /// A new data for each row: its data and whether it is encrypted, or `nil` to leave it.
    typealias Rewrite = @Sendable (String, ObjectKey) throws -> (data: String, isEncrypted: Bool)?

    private static func encrypting(_ encryption: EncryptionStage) -> Rewrite {
        { json, key in (try encryption.encrypt(json, for: key), true) }
    }

    private static func reencrypting(_ encryption: EncryptionStage) -> Rewrite {
        { data, key in
            if encryption.isCurrent(data) { return nil }
            return (try encryption.encrypt(try decryptedJSON(data, key, encryption), for: key), true)
        }
    }

    private static func decrypting(_ encryption: EncryptionStage) -> Rewrite {
        { data, key in (try decryptedJSON(data, key, encryption), false) }
    }

    /// The JSON a row's data holds, checked: a delegate with the wrong key may decrypt to
    /// something else, which must not be stored in its place.
    private static func decryptedJSON(_ data: String, _ key: ObjectKey, _ encryption: EncryptionStage) throws -> String {
        let json = try encryption.decrypt(data, sealedFor: key, naming: key)
        do {
            _ = try JSONReader.parse(json)
        } catch {
            throw GarageError.corruptData(typeName: key.typeName, identifier: key.identifier,
                                          reason: "its decrypted JSON is invalid (was it decrypted with another key?): \(error)")
        }
        return String(decoding: json, as: UTF8.self)
    }

    /// Rewrites every row stored `encrypted` (or not) with `rewrite`, batch after batch, from
    /// the row after `after`; returns how many it rewrote, and `total`.
    private func rewriting(encrypted: Bool, _ rewrite: @escaping Rewrite, after: ObjectKey? = nil, total: Int = 0) -> StoreCall<Int> {
        StoreCall(store.rewritingData(encrypted: encrypted, after: after, limit: Self.encryptionBatchSize, rewrite)) { batch in
            guard let next = batch.next else { return .done(total + batch.count) }
            return self.rewriting(encrypted: encrypted, rewrite, after: next, total: total + batch.count)
        }
    }

    /// The encryption the rewrites use.
    ///
    /// - throws: ``GarageError/invalidEncryptionKey(reason:)`` without a delegate;
    ///   ``GarageError/transactionMisuse(operation:reason:)`` when the garage has unsaved changes
    ///   or a transaction in progress: their objects were encrypted (or not) when parked, and
    ///   written after the rewrite they would undo it for those objects.
    private func encryptionForRewriting() throws -> EncryptionStage {
        let encryption = configuration().encryption
        guard encryption.delegate != nil else {
            throw GarageError.invalidEncryptionKey(reason: "the garage has no dataEncryptionDelegate")
        }
        try checkNoPendingChanges("rewrite the stored objects' encryption")
        return encryption
    }

    /// - throws: ``GarageError/transactionMisuse(operation:reason:)`` when the garage has unsaved
    ///   changes or a transaction in progress: their objects were encrypted (or not) when
    ///   parked, and written after a change of the store's encryption they would undo it.
    func checkNoPendingChanges(_ operation: String) throws {
        if hasUnsavedChanges || transactionChanges() != nil {
            throw GarageError.transactionMisuse(
                operation: operation,
                reason: "the garage has unsaved changes or a transaction in progress, encrypted as they were when "
                    + "parked; save them (or end the transaction) first")
        }
    }
}
