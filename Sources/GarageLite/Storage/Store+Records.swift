import Foundation
import GarageLiteCore

// The record API's work (Garage+Records.swift): rows as stored, every column, read and
// written without the pending changes of any garage.
extension Store {
    /// Up to `limit` committed rows, tombstones too (see ``RowStatements/records(ofType:after:limit:)``);
    /// a row that can't be read throws its error, which names it.
    func readingRecords(ofType type: String?, after key: ObjectKey?, limit: Int) -> StoreWork<[StoredRow]> {
        StoreWork(operation: "read \(limit) records\(type.map { " of \($0)" } ?? "")", access: .read { statements in
            try statements.records(ofType: type, after: key, limit: limit).map { try $0.get() }
        })
    }

    /// The committed row `key`, a tombstone too, with every column, or `nil`.
    func readingRecord(_ key: ObjectKey) -> StoreWork<StoredRow?> {
        StoreWork(operation: "read the record of \(key)", access: .read { statements in
            try statements.record(key)?.get()
        })
    }

    /// The format version, each type's figures, and the storage's size when the engine measures
    /// it (``MeasuresItsStorage``), from one snapshot.
    func readingStatistics(maximumAttempts: Int)
        -> StoreWork<(formatVersion: Int, types: [TypeStatistics], size: (store: Int, log: Int)?)> {
        StoreWork(operation: "read the store's statistics", access: .read { statements in
            try statements.snapshot {
                (try statements.formatVersion(), try statements.typeStatistics(maximumAttempts: maximumAttempts),
                 try (statements as? any MeasuresItsStorage)?.storageSize())
            }
        })
    }

    /// Writes `rows` in one transaction, each where the store has no row with its key (a
    /// tombstone too); returns the keys written. Observers hear of the live ones.
    func importingRecords(_ rows: [StoredRow]) -> StoreWork<Set<ObjectKey>> {
        StoreWork(operation: "import \(rows.count) records", access: .write { [self] statements in
            let written = try Store.transaction(statements) {
                var written = Set<ObjectKey>()
                for (index, row) in rows.enumerated() {
                    if index % Store.cancellationBatch == 0 { try Store.checkNotCancelled() }
                    if try statements.insertRecord(row.key, row) { written.insert(row.key) }
                }
                return written
            }
            if !written.isEmpty, listener.isListening {
                var changes = ChangeSet()
                for row in rows where written.contains(row.key) && !row.isDeleted {
                    changes.record(.park(RowPayload(data: row.data, isEncrypted: row.isEncrypted, syncStatus: row.syncStatus,
                                                    references: row.references, isRoot: row.isRoot)), for: row.key)
                }
                listener.committed(changes)
            }
            return written
        })
    }
}
