// The work behind the entry points of Garage+StoreKey.swift (the façade, at the root): the store
// calls they run and their helpers. Nothing here is public; the root files hold the API.
import Foundation
import GarageLiteCore

extension Garage {
    /// The path in errors.
    var storeDescription: String { path ?? ":memory:" }

    /// Unlocks the store with `key`, or locks it with `key` if it is not encrypted (see
    /// ``init(path:busyTimeout:encryptionKey:)``); checks that a store opened without a key is
    /// not encrypted.
    func openKeyring(_ key: StoreKey?) throws {
        let text = try run(store.readingMetadata(Keyring.recordName))
        guard let key else {
            if text != nil { throw GarageError.encryptionKeyRequired(path: storeDescription) }
            return
        }
        var keyring: Keyring
        if text == nil, store.isReadOnly { return }     // a read-only garage can't lock a store
        if let text {
            keyring = try Keyring.unlock(text, with: key, path: storeDescription)
        } else {
            let last = try run(store.readingMetadata(Keyring.lastKeyIDName)).flatMap { UInt32($0) } ?? 0
            let made = try Keyring.make(with: key, keyID: last + 1, path: storeDescription)
            let write = try run(store.replacingKeyRecord(previous: nil, with: made.text, resetsCount: true, guard: made.guardForCurrentKey))
            if write.replaced {
                keyring = made
            } else {
                // Another garage encrypted it meanwhile: its key must be this one.
                guard let text = write.storeRecord else {
                    throw GarageError.invalidEncryptionKey(reason: "the store's key record changed while it was opened; open it again")
                }
                keyring = try Keyring.unlock(text, with: key, path: storeDescription)
            }
        }
        try install(keyring)
        switch keyring.record.state {
        case .encrypted: break
        case .decrypting: state.write { $0.isDecryptingStore = true }
        case .encrypting:
            if store.isReadOnly { break }
            try encryptUnencryptedObjects()
        }
    }

    /// Makes `keyring` the garage's: its encryptor becomes the ``dataEncryptionDelegate``.
    func install(_ keyring: Keyring?) throws {
        let encryptor = try keyring?.encryptor()
        state.write { state in
            state.keyring = keyring
            state.dataEncryptionDelegate = encryptor
        }
    }

    /// What installs `keyring` inside the write that puts its record in the store (the
    /// `whenReplaced` of ``Store/replacingKeyRecord(previous:with:resetsCount:guard:whenReplaced:)``):
    /// its encryptor is made beforehand, so that installing it can't fail there.
    func installing(_ keyring: Keyring) throws -> @Sendable () -> Void {
        let encryptor = try keyring.encryptor()
        return { [state] in
            state.write { state in
                state.keyring = keyring
                state.dataEncryptionDelegate = encryptor
            }
        }
    }

    /// The garage's keyring, if it was opened with a key.
    var keyring: Keyring? { state.read { $0.keyring } }

    /// The garage's keyring, for `operation`.
    ///
    /// - throws: ``GarageError/invalidEncryptionKey(reason:)`` when the garage was not opened
    ///   with a key.
    func requireKeyring(_ operation: String) throws -> Keyring {
        guard let keyring else {
            throw GarageError.invalidEncryptionKey(
                reason: "cannot \(operation): the garage was not opened with a key (Garage(path:encryptionKey:))")
        }
        return keyring
    }

    /// `installed`, or the store's newer record (`text`) when another garage rotated the key.
    ///
    /// - throws: ``GarageError/wrongEncryptionKey(path:reason:)`` when another garage changed
    ///   the key; ``GarageError/invalidEncryptionKey(reason:)`` when it decrypted the store.
    func refreshed(_ installed: Keyring, storeText text: String?) throws -> Keyring {
        guard let text else {
            throw GarageError.staleEncryptionKey(path: storeDescription, reason: "another garage or process decrypted the store after this garage opened it")
        }
        if text == installed.text { return installed }
        guard let newer = try installed.reread(text, path: storeDescription) else {
            throw GarageError.staleEncryptionKey(
                path: storeDescription, reason: "another garage or process locked the store with another key after this garage opened it")
        }
        try install(newer)
        return newer
    }

    /// Installs `new` once `write` replaced the store's record with it; when another garage
    /// changed the record meanwhile, installs the store's record instead if `sameWork` says it
    /// already did what `new` does.
    ///
    /// - throws: ``GarageError/invalidEncryptionKey(reason:)`` when the record changed meanwhile
    ///   (another garage or process changed it) otherwise: nothing was written, call again.
    func install(_ new: Keyring?, after write: Store.KeyRecordWrite, replacing old: Keyring? = nil,
                 sameWork: (Keyring) -> Bool = { _ in false }) throws {
        if write.replaced {
            // Installed already inside the write (see `installing(_:)`): not again, which would
            // make a new encryptor and have the garage's parks in flight sealed anew.
            if let new, keyring?.text == new.text { return }
            return try install(new)
        }
        if let new, let old, sameWork(new), try sameWork(refreshed(old, storeText: write.storeRecord)) { return }
        throw GarageError.invalidEncryptionKey(
            reason: "another garage or process changed the store's key record meanwhile; nothing was written, call again")
    }

    /// - throws: ``GarageError/invalidEncryptionKey(reason:)`` while the store is being decrypted.
    func checkNotDecrypting(_ keyring: Keyring) throws {
        if keyring.record.state == .decrypting {
            throw GarageError.invalidEncryptionKey(
                reason: "the store is being decrypted (decryptAllObjects() was interrupted): call decryptAllObjects() again "
                    + "first, then open the store with the key you want")
        }
    }

    func changingEncryptionKey(to key: StoreKey) -> StoreCall<Void> {
        .starting {
            let installed = try requireKeyring("change the key")
            return StoreCall(store.readingMetadata(Keyring.recordName)) { text in
                let current = try self.refreshed(installed, storeText: text)
                try self.checkNotDecrypting(current)
                let new = try current.locked(with: key, path: self.storeDescription)
                return StoreCall(self.store.replacingKeyRecord(previous: current.text, with: new.text, resetsCount: false, guard: .keep)) {
                    try self.install(new, after: $0)
                    return .done(())
                }
            }
        }
    }

    /// Switches the store to a new data key locked with `key` (unless it is switched already,
    /// the rotation being unfinished), then re-encrypts its rows.
    func rekeying(to key: StoreKey) -> StoreCall<Int> {
        .starting {
            // Before the switch: unsaved changes sealed with the old key could never be saved after it.
            try checkNoPendingChanges("rotate the key")
            let installed = try requireKeyring("rotate the key")
            return StoreCall(store.readingMetadata(Keyring.recordName)) { text in
                let current = try self.refreshed(installed, storeText: text)
                try self.checkNotDecrypting(current)
                // Made once the new key is installed: it encrypts with the garage's key then.
                let reencrypting = {
                    self.reencrypting().catching { error in
                        throw self.unfinishedKeyChange(error, operation: "rekey(to:)", opensWith: Self.rekeyedStoreKey)
                    }
                }
                guard let new = try self.rotation(of: current, to: key) else { return reencrypting() }
                return StoreCall(self.store.replacingKeyRecord(
                    previous: current.text, with: new.text, resetsCount: true, guard: new.guardForCurrentKey,
                    whenReplaced: try self.installing(new))) {
                    try self.install(new, after: $0)
                    return reencrypting()
                }
            }
        }
    }

    /// Which key opens a store whose rotation stopped part-way (the `opensWith` of
    /// ``GarageError/keyChangeUnfinished(path:operation:opensWith:reason:)``).
    static let rekeyedStoreKey = "the key given to rekey(to:), and no longer with the old one (it gets "

        + "wrongEncryptionKey); the objects not re-encrypted yet read with it too"

    /// The keyring of a rotation of `current` to `key`: a new data key, locked with `key`; or
    /// `nil` when `current` is an unfinished rotation to `key`, to finish.
    func rotation(of current: Keyring, to key: StoreKey) throws -> Keyring? {
        try checkNoPendingChanges("rotate the key")
        if current.dataKeys.count > 1, (try? Keyring.unlock(current.text, with: key, path: storeDescription)) != nil {
            return nil
        }
        return try current.addingDataKey().locked(with: key, path: storeDescription)
    }

    func status(record text: String?, count: Int64) throws -> EncryptionStatus {
        guard let text else {
            return EncryptionStatus(isEncrypted: false, keyDerivation: nil, currentKeyID: nil, keyIDs: [],
                                    isUnfinished: false, encryptions: 0, encryptionLimit: Keyring.encryptionLimit)
        }
        let record = try Keyring.Record.read(text, path: storeDescription)
        return EncryptionStatus(
            isEncrypted: true, keyDerivation: record.derivationDescription, currentKeyID: record.currentKey,
            keyIDs: record.keys.keys.compactMap(UInt32.init).sorted(),
            isUnfinished: record.keys.count > 1 || record.state != .encrypted,
            encryptions: count, encryptionLimit: Keyring.encryptionLimit)
    }

}

extension Garage {
    /// The encryption a call seals its rows with when it starts: the delegate (held, so that
    /// its identity can't be reused), and whether the store is being decrypted.
    struct SealingEncryption {
        var delegate: (any DataEncryptionDelegate)?
        var isDecryptingStore: Bool

        /// Whether `other` seals differently.
        func differs(from other: SealingEncryption) -> Bool {
            delegate !== other.delegate || isDecryptingStore != other.isDecryptingStore
        }
    }

    var sealingEncryption: SealingEncryption {
        state.read { SealingEncryption(delegate: $0.dataEncryptionDelegate, isDecryptingStore: $0.isDecryptingStore) }
    }

    /// Makes the call `make` makes, one that seals rows then writes them, again when the store refused its
    /// rows for their data key (``GarageError/staleEncryptionKey(path:reason:)``) and this
    /// garage's own encryption changed since `body` began: its `rekey(to:)` or
    /// `decryptAllObjects()` on another thread switched the store's key between the sealing and
    /// the write. The garage installs its new key in the write that switches the store (see
    /// ``installing(_:)``), so the call made again has it, and is written. A refusal with
    /// the garage's encryption unchanged is another garage's or process's rotation: thrown.
    func sealingWithCurrentKey<T>(_ make: @escaping () throws -> StoreCall<T>) -> StoreCall<T> {
        let sealedWith = sealingEncryption
        // Without encryption, rows are not sealed: there is no key for a rotation to replace.
        if sealedWith.delegate == nil, !sealedWith.isDecryptingStore { return .starting(make) }
        return StoreCall.starting(make).catching { error in
            guard case GarageError.staleEncryptionKey = error, self.sealingEncryption.differs(from: sealedWith) else { throw error }
            return self.sealingWithCurrentKey(make)
        }
    }

    /// `error`, thrown by `operation` after it switched the store's key: a storage failure
    /// (whose own description says that nothing was written) becomes
    /// ``GarageError/keyChangeUnfinished(path:operation:opensWith:reason:)``, which says what
    /// was written, which key opens the store (`opensWith`), and that calling again finishes
    /// it. Other errors name their own cause and remedy, and are kept.
    func unfinishedKeyChange(_ error: any Error, operation: String, opensWith: String) -> any Error {
        let reason: String
        switch error as? GarageError {
        case let .storageFailure(failed, why)?:
            reason = "the storage failed to \(failed): \(why)"
        case let .connectionLost(_, _, _, why)?:
            reason = "the connection to its PostgreSQL server failed: \(why)"
        case .storeFull?:
            reason = "the disk holding it is full"
        case .storeBusy?:
            reason = "another connection kept it locked for longer than the busy timeout"
        case let .damagedStore(_, _, why)?:
            reason = "SQLite found it damaged (\(why))"
        case let .readOnlyStore(_, _, why)?:
            reason = "it can no longer be written (\(why))"
        default:
            // A cancelled async call stops between two batches: what was written stays.
            guard error is CancellationError else { return error }
            reason = "the task calling it was cancelled"
        }
        return GarageError.keyChangeUnfinished(path: storeDescription, operation: operation, opensWith: opensWith, reason: reason)
    }

}

extension Keyring {
    /// The store's triggers once it is decrypted: those that refuse its keys' envelopes.
    var retiringGuard: Store.EncryptionGuardChange {
        .retire(envelopePrefixes: retiredEnvelopePrefixes, keyID: dataKeys.keys.max() ?? record.currentKey)
    }

    /// The store's triggers for this keyring's current key.
    var guardForCurrentKey: Store.EncryptionGuardChange {
        .install(envelopePrefixes: Self.envelopePrefixes(keyID: record.currentKey), keyID: record.currentKey)
    }

}
