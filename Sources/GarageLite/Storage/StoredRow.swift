import Foundation

/// The identity of a row: the type name and the identifier of the object it holds.
struct RowKey: Hashable, Sendable, CustomStringConvertible {
    var type: String
    var identifier: String

    var description: String { "\(type)(\(identifier))" }
}

/// One row of the object table, as read from the store.
struct StoredRow: Sendable {
    var key: RowKey
    /// The object's JSON, or the encryption delegate's output when `isEncrypted`.
    var data: String
    var isEncrypted: Bool
    var syncStatus: SyncStatus
    var creationDate: Date
    var modificationDate: Date
    /// Increases by one on every write that changes `data`.
    var revision: Int64
    /// Whether the object was ever parked directly, rather than only as a reference.
    var isRoot: Bool
    /// The rows this row references, as a JSON array of `[type, identifier]` pairs.
    var references: String
    /// The sync job's claim holding the row, and when it was taken.
    var claim: String? = nil
    var claimedAt: Date? = nil
}

/// What a park writes into a row.
struct RowPayload: Sendable {
    var data: String
    var isEncrypted: Bool
    /// The status of a `Syncable` object; `nil` keeps the row's status (`.undetermined` for a new row).
    var syncStatus: SyncStatus?
    var references: String
    var isRoot: Bool

    /// The row as it reads once this payload is written over `existing` (or into a new row).
    func applied(to existing: StoredRow?, key: RowKey, now: Date) -> StoredRow {
        let changed = existing?.data != data
        return StoredRow(
            key: key,
            data: data,
            isEncrypted: isEncrypted,
            syncStatus: syncStatus ?? existing?.syncStatus ?? .undetermined,
            creationDate: existing?.creationDate ?? now,
            modificationDate: changed ? now : (existing?.modificationDate ?? now),
            revision: existing.map { $0.revision + (changed ? 1 : 0) } ?? 1,
            isRoot: isRoot || (existing?.isRoot ?? false),
            references: references,
            claim: existing?.claim,
            claimedAt: existing?.claimedAt)
    }
}
