import Foundation
import GarageLiteCore

// An encrypted store's key: opening with it, changing it, rotating the data key, and what the
// store says of its encryption. The record and its cryptography are in
// Encryption/Keyring.swift; the rewrites of the rows in Garage+Encryption.swift.

/// What a store says of its encryption: ``Garage/encryptionStatus()-63awt``.
public struct EncryptionStatus: Sendable, Hashable {
    /// Whether the store is encrypted (it holds a key record).
    public let isEncrypted: Bool
    /// How the key-encryption key is derived from the ``StoreKey``: `"PBKDF2-SHA256, 600000
    /// rounds"` for a passphrase, `"HKDF-SHA256"` for a key; `nil` when not encrypted.
    public let keyDerivation: String?
    /// The id of the data key new objects are encrypted with.
    public let currentKeyID: UInt32?
    /// The ids of the data keys the stored objects may be encrypted with: more than one while a
    /// rotation (``Garage/rekey(to:)-7738p``) is unfinished.
    public let keyIDs: [UInt32]
    /// Whether objects may still be stored unencrypted, or encrypted with a previous key: an
    /// encryption, a rotation or a decryption was interrupted. Opening the store with its key
    /// finishes an encryption; call ``Garage/rekey(to:)-7738p`` (or
    /// ``Garage/reencryptObjects()-bhgs``) again to finish a rotation,
    /// ``Garage/decryptAllObjects()-7ed1d`` a decryption.
    public let isUnfinished: Bool
    /// How many objects the current data key encrypted.
    public let encryptions: Int64
    /// How many one data key may encrypt (2³²): rotate the key before.
    public let encryptionLimit: Int64
}

extension Garage {
    // MARK: - Changing the key

    /// Locks the store with `key` instead of its current key (a new passphrase, say): the
    /// store's data key is rewrapped, no object is rewritten.
    ///
    /// ```swift
    /// try garage.changeEncryptionKey(to: .passphrase(newPassphrase))
    /// ```
    ///
    /// It is one small write: interrupted, the store opens with the old key. Afterwards it opens
    /// only with the new one. The objects stay encrypted with the same data key, so that someone
    /// who learned it (not the passphrase: the key it unwraps) still reads them: rotate it with
    /// ``rekey(to:)-7738p`` when that is the worry.
    ///
    /// - throws: ``GarageError/invalidEncryptionKey(reason:)`` when the garage was not opened with
    ///   a key, or the key can't be used.
    public func changeEncryptionKey(to key: StoreKey) throws {
        try run(changingEncryptionKey(to: key))
    }

    /// Locks the store with `key` instead of its current key (see
    /// ``changeEncryptionKey(to:)-702ag``) without blocking the calling thread.
    public nonisolated(nonsending) func changeEncryptionKey(to key: StoreKey) async throws {
        try await run(changingEncryptionKey(to: key))
    }

    // MARK: - Rotating the data key

    /// Rotates the store's data key and locks the store with `key`: every object is encrypted
    /// again with a new random data key, and the old one is forgotten. Returns how many objects
    /// it re-encrypted.
    ///
    /// ```swift
    /// try garage.rekey(to: .passphrase(newPassphrase))
    /// ```
    ///
    /// The store switches to `key` first, in one write, keeping the old data key wrapped beside
    /// the new one; then it rewrites the objects in transactions of 500 (see
    /// ``encryptUnencryptedObjects()-6b6nq`` for how, and what it erases), then forgets the old
    /// data key. A process killed in the middle leaves a store that opens with `key` and reads
    /// every object (``encryptionStatus()-63awt`` says the rotation is unfinished, and which key
    /// ids are in use); calling `rekey(to:)` with the same key finishes it.
    ///
    /// Rotate before a data key encrypts 2³² objects (``EncryptionStatus/encryptions``); parks
    /// beyond throw ``GarageError/encryptionLimitReached(path:encryptions:)``.
    ///
    /// - throws: ``GarageError/invalidEncryptionKey(reason:)`` when the garage was not opened with
    ///   a key, has unsaved changes, or the key can't be used;
    ///   ``GarageError/decryptionFailed(typeName:identifier:reason:)`` naming an object that
    ///   doesn't decrypt (delete it, then call again);
    ///   ``GarageError/keyChangeUnfinished(path:operation:opensWith:reason:)`` when the storage
    ///   failed (a full disk, an I/O error) after the store switched to `key`: it then opens
    ///   with `key` only, and calling `rekey(to:)` again with `key` finishes the rotation.
    ///
    /// Parks of this garage on other threads meanwhile are not refused: one sealed with the old
    /// data key, and refused by the store once it switched, is sealed again with the new one
    /// and written (``GarageError/staleEncryptionKey(path:reason:)`` is for a rotation made by
    /// another garage or process).
    @discardableResult
    public func rekey(to key: StoreKey) throws -> Int {
        try run(rekeying(to: key))
    }

    /// Rotates the data key and locks the store with `key` (see ``rekey(to:)-7738p``) without
    /// blocking the calling thread.
    @discardableResult
    public nonisolated(nonsending) func rekey(to key: StoreKey) async throws -> Int {
        try await run(rekeying(to: key))
    }

    // MARK: - Status

    /// What the store says of its encryption: whether it is encrypted, how its key is derived,
    /// which data keys are in use, whether a rotation is unfinished, how many objects the
    /// current key encrypted. Readable without the key.
    public func encryptionStatus() throws -> EncryptionStatus {
        try status(record: try run(store.readingMetadata(Keyring.recordName)), count: try run(store.readingEncryptionCount()))
    }

    /// What the store says of its encryption (see ``encryptionStatus()-63awt``) without blocking
    /// the calling thread.
    public nonisolated(nonsending) func encryptionStatus() async throws -> EncryptionStatus {
        try status(record: try await run(store.readingMetadata(Keyring.recordName)),
                   count: try await run(store.readingEncryptionCount()))
    }
}

// MARK: - This garage's own key changes

extension Garage {
}

extension Keyring {
}
