// The work behind the entry points of Garage+Encryption.swift (the façade, at the root): the store
// calls they run and their helpers. Nothing here is public; the root files hold the API.
import Foundation
import GarageLiteCore

extension Garage {
    /// Encrypts the unencrypted rows, then marks a store with a key encrypted.
    func encryptingUnencrypted() -> StoreCall<Int> {
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
    func encrypting(finishing keyring: Keyring?) -> StoreCall<Int> {
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
    func finishedEncrypting(_ keyring: Keyring) throws -> Keyring? {
        keyring.record.state == .encrypting ? try keyring.setting(.encrypted) : nil
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

    /// Marks the store being decrypted, decrypts its rows, then forgets its key.
    func decryptingAll() -> StoreCall<Int> {
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
    func markingDecrypting() -> StoreCall<Void> {
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
    var decryptingStoreKey: String {
        keyring == nil
            ? "the dataEncryptionDelegate it was decrypted with, which stays set to read the objects still encrypted"
            : "its key, as before: it holds objects encrypted and unencrypted until the decryption finishes"
    }

    /// `installed`, refreshed from the store's record `storeText`, and it in the state
    /// `.decrypting` (the store's triggers then let rows be written unencrypted, and refuse its
    /// keys' envelopes); `nil` when it is already.
    func decrypting(_ installed: Keyring, storeText: String?) throws -> (Keyring, Keyring)? {
        let current = try refreshed(installed, storeText: storeText)
        return current.record.state == .decrypting ? nil : (current, try current.setting(.decrypting))
    }

    /// From now on, this garage parks objects unencrypted (reading both kinds), so that none
    /// parked while the rows are decrypted is left encrypted.
    func startDecrypting() throws -> EncryptionStage {
        let encryption = try encryptionForRewriting()
        state.write { $0.isDecryptingStore = true }
        return encryption
    }

    /// Turns encryption off, if no encrypted row is left (`remaining`) and the delegate is still
    /// the one the rows were decrypted with.
    ///
    /// - throws: ``GarageError/invalidEncryptionKey(reason:)`` when objects were encrypted
    ///   meanwhile, by another garage or process: the delegate stays, to read them.
    func finishDecrypting(_ encryption: EncryptionStage, remaining: Int) throws {
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

    static func encrypting(_ encryption: EncryptionStage) -> Rewrite {
        { json, key in (try encryption.encrypt(json, for: key), true) }
    }

    static func reencrypting(_ encryption: EncryptionStage) -> Rewrite {
        { data, key in
            if encryption.isCurrent(data) { return nil }
            return (try encryption.encrypt(try decryptedJSON(data, key, encryption), for: key), true)
        }
    }

    static func decrypting(_ encryption: EncryptionStage) -> Rewrite {
        { data, key in (try decryptedJSON(data, key, encryption), false) }
    }

    /// The JSON a row's data holds, checked: a delegate with the wrong key may decrypt to
    /// something else, which must not be stored in its place.
    static func decryptedJSON(_ data: String, _ key: ObjectKey, _ encryption: EncryptionStage) throws -> String {
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
    func rewriting(encrypted: Bool, _ rewrite: @escaping Rewrite, after: ObjectKey? = nil, total: Int = 0) -> StoreCall<Int> {
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
    func encryptionForRewriting() throws -> EncryptionStage {
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
