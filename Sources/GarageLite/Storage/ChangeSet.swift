import Foundation

/// A change to one row, waiting to be written.
enum RowChange: Sendable {
    /// Insert the row, or update it keeping its creation date, status (when the payload has
    /// none) and revision history.
    case park(RowPayload)
    /// Delete whatever row is there, then insert this one.
    case replace(RowPayload)
    case delete
    case setSyncStatus(SyncStatus)
}

/// A change to many rows at once, waiting to be written.
enum BulkChange: Sendable {
    /// Delete every row of the type, or every row when the type is `nil`.
    case deleteAll(type: String?)
    /// Move every row of `from` to `to`, replacing rows of `to` with the same identifier.
    case renameType(from: String, to: String)

    func affects(type: String) -> Bool {
        switch self {
        case .deleteAll(let deleted): return deleted == nil || deleted == type
        case .renameType(let from, let to): return from == type || to == type
        }
    }
}

/// Changes not written yet: the unsaved changes of a garage whose autosave is off, the
/// changes of a `transaction { }` in progress, or the changes of one call.
///
/// A change set holds the final state of each row it touches, plus the bulk changes, in
/// order. Writing it (``Store/apply(_:to:now:)``) runs the bulk changes first, then the row
/// changes: recording a bulk change folds the row changes it overrides, so that this
/// order gives the same result as running every call in sequence.
struct ChangeSet: Sendable {
    private(set) var rows: [RowKey: RowChange] = [:]
    private(set) var bulk: [BulkChange] = []
    /// For each row, the number of the last call that changed it; see ``removing(saved:)``.
    private(set) var generations: [RowKey: UInt64] = [:]

    var isEmpty: Bool { rows.isEmpty && bulk.isEmpty }

    mutating func record(_ change: RowChange, for key: RowKey, generation: UInt64 = 0) {
        generations[key] = generation
        guard let existing = rows[key] else {
            rows[key] = change
            return
        }
        switch (existing, change) {
        case (.park(let old), .park(var new)), (.replace(let old), .park(var new)):
            new.isRoot = new.isRoot || old.isRoot
            new.syncStatus = new.syncStatus ?? old.syncStatus
            if case .replace = existing { rows[key] = .replace(new) } else { rows[key] = .park(new) }
        case (.setSyncStatus(let status), .park(var new)):
            new.syncStatus = new.syncStatus ?? status
            rows[key] = .park(new)
        case (.delete, .park(let new)):
            rows[key] = .replace(new)
        case (.park(var old), .setSyncStatus(let status)):
            old.syncStatus = status
            rows[key] = .park(old)
        case (.replace(var old), .setSyncStatus(let status)):
            old.syncStatus = status
            rows[key] = .replace(old)
        case (.delete, .setSyncStatus):
            break // callers check that the row exists before changing its status
        default:
            rows[key] = change
        }
    }

    mutating func record(_ change: BulkChange, generation: UInt64 = 0) {
        switch change {
        case .deleteAll:
            for key in rows.keys where change.affects(type: key.type) {
                rows[key] = nil
                generations[key] = nil
            }
        case .renameType(let from, let to):
            for (key, rowChange) in rows where key.type == from {
                rows[key] = nil
                generations[key] = nil
                let moved = RowKey(type: to, identifier: key.identifier)
                rows[moved] = rowChange
                generations[moved] = generation
            }
        }
        bulk.append(change)
    }

    /// Adds every change of `other`, as if its calls came after this set's.
    mutating func merge(_ other: ChangeSet, generation: UInt64 = 0) {
        for change in other.bulk {
            record(change, generation: generation)
        }
        for (key, change) in other.rows {
            record(change, for: key, generation: generation)
        }
    }

    /// This set without the changes of `saved`, a copy of it taken earlier and now written.
    /// Changes recorded after the copy was taken stay.
    func removing(saved: ChangeSet) -> ChangeSet {
        var remaining = self
        // Bulk changes are only ever appended, so the saved ones are the first ones.
        remaining.bulk.removeFirst(min(saved.bulk.count, remaining.bulk.count))
        for (key, generation) in saved.generations where remaining.generations[key] == generation {
            remaining.rows[key] = nil
            remaining.generations[key] = nil
        }
        return remaining
    }

    /// Whether any change touches rows of `type`.
    func touches(type: String) -> Bool {
        bulk.contains { $0.affects(type: type) } || rows.keys.contains { $0.type == type }
    }
}
