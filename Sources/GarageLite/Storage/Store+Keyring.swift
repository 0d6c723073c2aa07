import Foundation
import GarageLiteCore

// An encrypted store's key record and its triggers (Encryption/Keyring.swift, Garage+StoreKey.swift).
extension Store {
    /// What a change of the key record does to the triggers of an encrypted store.
    enum EncryptionGuardChange: Sendable {
        case keep
        /// Install them for envelopes starting with these prefixes (the current key's, of id
        /// `keyID`, which the store remembers as the last it used), with a new count of
        /// encryptions (0).
        case install(envelopePrefixes: [String], keyID: UInt32)
        /// Replace them with those that refuse the envelopes of the keys the store had (these
        /// prefixes, up to the key id `keyID`, which the store remembers), and remove the count
        /// (the store is being decrypted).
        case retire(envelopePrefixes: [String], keyID: UInt32)
    }

    /// The store fact `name`, or `nil`. Read with the writer (a writable store), as the
    /// garage's first statement is when it opens: a garage that only writes opens no reader
    /// connection, which would keep the file a moment longer after it is released.
    func readingMetadata(_ name: String) -> StoreWork<String?> {
        let read: @Sendable (any RowStatements) throws -> String? = { try $0.metadata(name) }
        return StoreWork(operation: "read the store's \(name) record",
                         access: isReadOnly ? .read(read) : .write { try read($0) }, isCancellable: false)
    }

    /// How many objects the store's current key encrypted.
    func readingEncryptionCount() -> StoreWork<Int64> {
        StoreWork(operation: "read the store's count of encryptions", access: .read { statements in
            try statements.encryptionCount()
        })
    }

    /// What ``replacingKeyRecord(previous:with:resetsCount:guard:)`` did: whether it replaced
    /// the record, and otherwise the record the store holds (another garage changed it).
    struct KeyRecordWrite: Sendable {
        var replaced: Bool
        var storeRecord: String?
    }

    /// Replaces the key record, if it is still `previous` (`nil`: if there is none), with
    /// `record` (`nil`: removes it), in one transaction with `guardChange`, and with a count
    /// of encryptions started again at 0 when `resetsCount`.
    ///
    /// `whenReplaced` runs once the replacement is committed, before the writer does anything
    /// else: the garage installs the new key there, so that none of its own writes reaches the
    /// store's new triggers sealed with a key it had not replaced yet (see
    /// `Garage.sealingWithCurrentKey(_:)`).
    func replacingKeyRecord(previous: String?, with record: String?, resetsCount: Bool,
                            guard guardChange: EncryptionGuardChange,
                            whenReplaced: (@Sendable () -> Void)? = nil,
                            isCancellable: Bool = true) -> StoreWork<KeyRecordWrite> {
        // Not cancellable when it must follow another write (a decryption's last, once its rows
        // are decrypted and the garage's delegate is gone).
        StoreWork(operation: "write the store's key record", access: .write({ statements in
            let write = try Store.transaction(statements) {
                guard try statements.replaceMetadata(Keyring.recordName, previous: previous, with: record) else {
                    return KeyRecordWrite(replaced: false, storeRecord: try statements.metadata(Keyring.recordName))
                }
                switch guardChange {
                case .keep:
                    if resetsCount { try statements.setEncryptionCount(0) }
                case let .install(prefixes, keyID):
                    try statements.setEncryptionCount(0)
                    try statements.setEncryptionGuard(EncryptionGuard(current: (Keyring.encryptionLimit, prefixes)))
                    try statements.setMetadata(Keyring.lastKeyIDName, String(keyID))
                case let .retire(prefixes, keyID):
                    try statements.setEncryptionGuard(EncryptionGuard(current: nil, retired: prefixes))
                    try statements.setMetadata(Keyring.lastKeyIDName, String(keyID))
                }
                return KeyRecordWrite(replaced: true, storeRecord: record)
            }
            if write.replaced { whenReplaced?() }
            return write
        }), isCancellable: isCancellable)
    }
}
