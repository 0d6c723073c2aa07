import Foundation

/// What a store locked with a key refuses, whoever writes it (this garage, another, another
/// process, a tool without the library): the one description of the encryption guard. Every
/// engine enforces it on every write of a row, where the write happens (SQLite: triggers,
/// generated from this value by `Schema.encryptionGuard(_:)`), and reports a refusal as its
/// ``Refusal``, which ``Refusal/garageError(path:)`` names. `EncryptionGuardTests` holds SQLite's
/// triggers to ``check(writing:over:encryptions:)``.
package struct EncryptionGuard: Sendable {
    /// The envelope prefixes of the current data key (``Keyring``'s), and how many encryptions
    /// it may make (the nonces' budget); `nil` for a store that is not encrypted now.
    package var current: (limit: Int64, envelopePrefixes: [String])?
    /// The envelope prefixes of the data keys a store being (or once) decrypted had: refused.
    package var retired: [String] = []

    /// A guard of the `current` key, refusing the `retired` ones.
    package init(current: (limit: Int64, envelopePrefixes: [String])?, retired: [String] = []) {
        self.current = current
        self.retired = retired
    }

    /// How many encryptions one data key may make: 2³², the budget of random 96-bit nonces
    /// (``Keyring``'s keys).
    package static let encryptionLimit: Int64 = 1 << 32

    /// Why a write was refused.
    package enum Refusal: String, Error, CaseIterable {
        /// The store is encrypted, and the write is not: a garage without the key.
        case plaintext = "GarageLite: the store is encrypted"
        /// The write is encrypted with a data key the store no longer uses (or, decrypted, had).
        case staleKey = "GarageLite: this write is not encrypted with the current key of the store"
        /// The current key made all the encryptions it may.
        case limitReached = "GarageLite: the key of the store reached its encryption limit"

        /// The garage's error for this refusal, of the store at `path` (":memory:" for one in memory).
        package func garageError(path: String) -> GarageError {
            switch self {
            case .plaintext:
                // A garage without the key (opened before another process encrypted the store).
                return .encryptionKeyRequired(path: path)
            case .staleKey:
                return .staleEncryptionKey(
                    path: path, reason: "it encrypts with a data key the store no longer uses (another garage or process "
                        + "rotated the key, or decrypted the store, after this garage opened it)")
            case .limitReached:
                return .encryptionLimitReached(path: path, encryptions: EncryptionGuard.encryptionLimit)
            }
        }
    }

    /// Whether writing `new` over `old` (`nil`: a new row) is refused, with `encryptions`
    /// counted so far; returns whether the write counts one more encryption.
    ///
    /// - An unencrypted row without data (a tombstone's, emptied) passes.
    /// - Encrypted now: an unencrypted write of data is refused (`plaintext`), unless it leaves
    ///   an unencrypted row's data as it is; an encrypted write of new data must use the current
    ///   key (`staleKey`), is refused once `limit` encryptions are counted (`limitReached`), and
    ///   counts one.
    /// - Retired keys: an encrypted write of new data with one of them is refused (`staleKey`);
    ///   a write that leaves such a row's data as it is (a status, a claim) passes.
    ///
    /// SQLite's park (one upsert) is stricter in one case, on the side of refusal: it refuses an
    /// unencrypted park that leaves an unencrypted row's data as it is (its insert half runs the
    /// insert trigger); only a garage without the key makes one, and it is told to open the store
    /// with it.
    package func check(writing new: (data: String, isEncrypted: Bool), over old: (data: String, isEncrypted: Bool)?,
               encryptions: Int64) throws(Refusal) -> Bool {
        let changesData = old.map { $0.data != new.data } ?? true
        if let current {
            if !new.isEncrypted, !new.data.isEmpty, old == nil || changesData || old?.isEncrypted == true {
                throw .plaintext
            }
            if new.isEncrypted, changesData {
                if !current.envelopePrefixes.contains(where: { new.data.hasPrefix($0) }) { throw .staleKey }
                if encryptions >= current.limit { throw .limitReached }
                return true
            }
        }
        if new.isEncrypted, changesData, retired.contains(where: { new.data.hasPrefix($0) }) { throw .staleKey }
        return false
    }
}
