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
    /// and called again, goes on. Nothing of the data replaced stays on disk: the rows are
    /// rewritten with SQLite's `secure_delete` on, and at the end the store is compacted
    /// (`VACUUM`, which also drops what was deleted before, in free pages) and its write-ahead
    /// log emptied. That takes a while on a large store, and room for a copy of it. A reader of
    /// another process keeping an old snapshot keeps the log from being emptied: call again
    /// when that is done.
    ///
    /// - throws: ``GarageError/invalidEncryptionKey(reason:)`` when no delegate is set; the
    ///   delegate's errors (the batch then writes nothing).
    @discardableResult
    public func encryptUnencryptedObjects() throws -> Int {
        let keyring = try keyringToFinishEncrypting(storeText: try keyring.map { _ in try run(store.readingMetadata(Keyring.recordName)) },
                                                    unencryptedRows: { try self.run(self.store.countingRows(encrypted: false)) })
        if let keyring, keyring.record.state == .encrypted { return 0 }
        let count = try rewriting(encrypted: false, Self.encrypting(try encryptionForRewriting()))
        if let keyring, let done = try finishedEncrypting(keyring) {
            try install(done, after: try run(store.replacingKeyRecord(previous: keyring.text, with: done.text, resetsCount: false, guard: .keep)),
                        replacing: keyring, sameWork: { $0.record.state == .encrypted })
        }
        return count
    }

    /// Encrypts every object stored unencrypted (see ``encryptUnencryptedObjects()-6b6nq``)
    /// without blocking the calling thread.
    @discardableResult
    public nonisolated(nonsending) func encryptUnencryptedObjects() async throws -> Int {
        var text: String??
        if keyring != nil { text = try await run(store.readingMetadata(Keyring.recordName)) }
        // Counted only where the sync variant counts (an encrypted store), so that both throw
        // the same error on a store being decrypted, read-only or busy.
        var unencrypted = 0
        if let text, let installed = keyring, try refreshed(installed, storeText: text).record.state == .encrypted {
            unencrypted = try await run(store.countingRows(encrypted: false))
        }
        let keyring = try keyringToFinishEncrypting(storeText: text, unencryptedRows: { unencrypted })
        if let keyring, keyring.record.state == .encrypted { return 0 }
        let count = try await rewriting(encrypted: false, Self.encrypting(try encryptionForRewriting()))
        if let keyring, let done = try finishedEncrypting(keyring) {
            try install(done, after: try await run(store.replacingKeyRecord(previous: keyring.text, with: done.text, resetsCount: false, guard: .keep)),
                        replacing: keyring, sameWork: { $0.record.state == .encrypted })
        }
        return count
    }

    /// The garage's keyring when it has one (the store's record being `storeText`), to mark
    /// the store encrypted once its rows are (nothing to do when it is already, and no row is
    /// stored unencrypted); `nil` without one.
    ///
    /// - throws: ``GarageError/invalidEncryptionKey(reason:)`` when the store, opened with its
    ///   key, was already encrypted and holds unencrypted rows: GarageLite wrote none (its
    ///   triggers refuse them), so they were put there by someone else, and are not adopted;
    ///   when it is being decrypted.
    private func keyringToFinishEncrypting(storeText: String??, unencryptedRows: () throws -> Int) throws -> Keyring? {
        guard let installed = keyring, let storeText else { return nil }
        let current = try refreshed(installed, storeText: storeText)
        if current.record.state == .decrypting {
            throw GarageError.invalidEncryptionKey(
                reason: "the store is being decrypted (decryptAllObjects() was interrupted): call decryptAllObjects() again, "
                    + "then open it with a key to encrypt it")
        }
        if current.record.state == .encrypted, try unencryptedRows() == 0 { return current }
        guard current.record.state == .encrypting else {
            throw GarageError.invalidEncryptionKey(
                reason: "the store was encrypted when it was opened with its key, so GarageLite wrote none of its "
                    + "unencrypted rows: they were put in the file by someone else; delete them instead")
        }
        return current
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
        let count = try rewriting(encrypted: true, Self.reencrypting(try encryptionForRewriting()))
        if let keyring, keyring.dataKeys.count > 1 {
            let done = try keyring.droppingPreviousKeys()
            try install(done, after: try run(store.replacingKeyRecord(previous: keyring.text, with: done.text, resetsCount: false, guard: .keep)),
                        replacing: keyring, sameWork: { $0.dataKeys.count == 1 })
        }
        return count
    }

    /// Re-encrypts every encrypted object with the current key (see ``reencryptObjects()-bhgs``)
    /// without blocking the calling thread.
    @discardableResult
    public nonisolated(nonsending) func reencryptObjects() async throws -> Int {
        let count = try await rewriting(encrypted: true, Self.reencrypting(try encryptionForRewriting()))
        if let keyring, keyring.dataKeys.count > 1 {
            let done = try keyring.droppingPreviousKeys()
            try install(done, after: try await run(store.replacingKeyRecord(previous: keyring.text, with: done.text, resetsCount: false, guard: .keep)),
                        replacing: keyring, sameWork: { $0.dataKeys.count == 1 })
        }
        return count
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
        let encryption = try startDecrypting()
        defer { state.write { $0.isDecryptingStore = $0.keyring?.record.state == .decrypting } }
        if let keyring, let (current, decrypting) = try decrypting(keyring, storeText: try run(store.readingMetadata(Keyring.recordName))) {
            try install(decrypting, after: try run(store.replacingKeyRecord(
                previous: current.text, with: decrypting.text, resetsCount: false, guard: current.retiringGuard)))
        }
        do {
            let count = try rewriting(encrypted: true, Self.decrypting(encryption))
            try finishDecrypting(encryption, remaining: try run(store.countingRows(encrypted: true)))
            if let keyring {
                try install(nil, after: try run(store.replacingKeyRecord(
                    previous: keyring.text, with: nil, resetsCount: false, guard: keyring.retiringGuard)))
            }
            return count
        } catch {
            throw unfinishedKeyChange(error, operation: "decryptAllObjects()", opensWith: decryptingStoreKey)
        }
    }

    /// Decrypts every encrypted object and turns encryption off (see
    /// ``decryptAllObjects()-7ed1d``) without blocking the calling thread.
    @discardableResult
    public nonisolated(nonsending) func decryptAllObjects() async throws -> Int {
        let encryption = try startDecrypting()
        defer { state.write { $0.isDecryptingStore = $0.keyring?.record.state == .decrypting } }
        if let keyring, let (current, decrypting) = try decrypting(keyring, storeText: try await run(store.readingMetadata(Keyring.recordName))) {
            try install(decrypting, after: try await run(store.replacingKeyRecord(
                previous: current.text, with: decrypting.text, resetsCount: false, guard: current.retiringGuard)))
        }
        do {
            let count = try await rewriting(encrypted: true, Self.decrypting(encryption))
            try finishDecrypting(encryption, remaining: try await run(store.countingRows(encrypted: true)))
            if let keyring {
                try install(nil, after: try await run(store.replacingKeyRecord(
                    previous: keyring.text, with: nil, resetsCount: false, guard: keyring.retiringGuard)))
            }
            return count
        } catch {
            throw unfinishedKeyChange(error, operation: "decryptAllObjects()", opensWith: decryptingStoreKey)
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

    /// Rewrites every row stored `encrypted` (or not) with `rewrite`, batch after batch.
    private func rewriting(encrypted: Bool, _ rewrite: @escaping Rewrite) throws -> Int {
        var total = 0
        var after: ObjectKey?
        repeat {
            let batch = try run(store.rewritingData(encrypted: encrypted, after: after, limit: Self.encryptionBatchSize, rewrite))
            total += batch.count
            after = batch.next
        } while after != nil
        return total
    }

    private nonisolated(nonsending) func rewriting(encrypted: Bool, _ rewrite: @escaping Rewrite) async throws -> Int {
        var total = 0
        var after: ObjectKey?
        repeat {
            let batch = try await run(store.rewritingData(encrypted: encrypted, after: after, limit: Self.encryptionBatchSize, rewrite))
            total += batch.count
            after = batch.next
        } while after != nil
        return total
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
