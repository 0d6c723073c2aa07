import Foundation
import GarageLiteCore

// Rewriting the rows' data in place: encrypting the unencrypted ones, re-encrypting the
// encrypted ones with the current key, decrypting them (Garage+Encryption.swift).
extension Store {
    /// Rewrites, in one transaction, up to `limit` rows stored encrypted (or unencrypted,
    /// `encrypted` false) after the row `key` (`nil`: from the first), in key order: `rewrite`
    /// gives each row's new data and whether it is encrypted, or `nil` to leave it. Returns how
    /// many it rewrote and the row to go on after, or `nil` when no row is left: the last batch
    /// then compacts the store and empties its log, so that no replaced data lingers on disk
    /// (``ErasesFreedContent``). An encryption's first batch drops the store's indexes.
    func rewritingData(
        encrypted: Bool, after key: ObjectKey?, limit: Int,
        _ rewrite: @escaping @Sendable (String, ObjectKey) throws -> (data: String, isEncrypted: Bool)?
    ) -> StoreWork<(count: Int, next: ObjectKey?)> {
        StoreWork(operation: "rewrite the objects' data", access: .write { statements in
            // The data replaced must not stay in the pages' free space, nor in the log (on an
            // engine that can see to it: ErasesFreedContent).
            let erasing = statements as? any ErasesFreedContent
            let erased = try erasing?.setErasesFreedContent(true)
            defer { if let erasing, let erased { _ = try? erasing.setErasesFreedContent(erased) } }
            let (count, next) = try Store.transaction(statements) {
                // Indexes hold copies of the words and values of the objects about to be
                // encrypted, which no query of an encrypting garage may read: they go first.
                if !encrypted, key == nil { try Store.droppingQueryIndexes(statements) }
                let rows = try statements.rows(encrypted: encrypted, after: key, limit: limit)
                var count = 0
                for row in rows {
                    let new = try rewrite(row.data, row.key)
                    // The base is in the row's encryption, which it follows (an older base may
                    // need the rewrite when the data doesn't). A base that can't be rewritten
                    // is dropped: its merges go without it, and the row's data is what counts.
                    var base = row.base
                    if let old = row.base {
                        do { base = try rewrite(old, row.key)?.data ?? old } catch { base = nil }
                    }
                    guard new != nil || base != row.base else { continue }
                    if try statements.replaceData(of: row.key, previous: row.data, with: new?.data ?? row.data,
                                                  base: base, isEncrypted: new?.isEncrypted ?? encrypted) {
                        count += 1
                    }
                }
                return (count, rows.count < limit ? nil : rows.last?.key)
            }
            if next == nil {
                // What was deleted before, in free pages, and the log's old pages. (A reader of
                // another process keeping an old snapshot keeps the log from being emptied: the
                // next call empties it.)
                _ = try erasing?.compactAndTruncateLog()
            }
            return (count, next)
        })
    }

    /// How many rows (tombstones excepted) are stored encrypted, or unencrypted.
    func countingRows(encrypted: Bool) -> StoreWork<Int> {
        StoreWork(operation: "count the objects stored \(encrypted ? "encrypted" : "unencrypted")", access: .write({ statements in
            try statements.countRows(encrypted: encrypted)
        }), isCancellable: false)
    }
}
