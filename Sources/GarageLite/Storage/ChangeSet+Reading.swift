import Foundation
import GRDB

/// Reading the store as it will be once a change set is written: how a garage reads its
/// own unsaved changes.
extension ChangeSet {
    /// The row `key` as it reads with these changes applied over the store.
    func row(_ key: RowKey, in db: Database, now: Date) throws -> StoredRow? {
        try row(key, in: db, now: now, afterSegments: segments.count)
    }

    /// The rows of `type` as they read with these changes applied, in identifier order.
    func rows(ofType type: String, in db: Database, now: Date) throws -> [StoredRow] {
        try rows(ofType: type, in: db, now: now, afterSegments: segments.count)
    }

    /// The type names of the rows as they read with these changes applied.
    func types(in db: Database) throws -> Set<String> {
        var types = Set(try Store.types(db))
        for segment in segments {
            switch segment.bulk {
            case .deleteAll(nil)?: types.removeAll()
            case .deleteAll(let type?)?: types.remove(type)
            case .renameType(let from, let to)?:
                if types.remove(from) != nil { types.insert(to) }
            case nil: break
            }
            types.formUnion(segment.rows.keys.map(\.type))
        }
        return types
    }

    /// The row `key` after the first `count` segments.
    private func row(_ key: RowKey, in db: Database, now: Date, afterSegments count: Int) throws -> StoredRow? {
        guard count > 0 else { return try Store.row(db, key) }
        let segment = segments[count - 1]
        if let change = segment.rows[key] {
            switch change {
            case .delete:
                return nil
            case .replace(let payload):
                return payload.applied(to: nil, key: key, now: now)
            case .park(let payload):
                return payload.applied(to: try row(key, in: db, now: now, beforeRowsOf: count), key: key, now: now)
            case .setSyncStatus(let status):
                var row = try row(key, in: db, now: now, beforeRowsOf: count)
                row?.syncStatus = status
                return row
            }
        }
        return try row(key, in: db, now: now, beforeRowsOf: count)
    }

    /// The row `key` after the bulk change of segment `count - 1`, before its row changes.
    private func row(_ key: RowKey, in db: Database, now: Date, beforeRowsOf count: Int) throws -> StoredRow? {
        switch segments[count - 1].bulk {
        case .deleteAll(let type)? where type == nil || type == key.type:
            return nil
        case .renameType(let from, _)? where from == key.type:
            return nil
        case .renameType(let from, let to)? where to == key.type:
            if var moved = try row(RowKey(type: from, identifier: key.identifier), in: db, now: now,
                                   afterSegments: count - 1) {
                moved.key = key
                return moved
            }
            return try row(key, in: db, now: now, afterSegments: count - 1)
        default:
            return try row(key, in: db, now: now, afterSegments: count - 1)
        }
    }

    /// The rows of `type` after the first `count` segments.
    private func rows(ofType type: String, in db: Database, now: Date, afterSegments count: Int) throws -> [StoredRow] {
        guard count > 0 else { return try Store.rows(db, type: type) }
        let segment = segments[count - 1]
        var rowsByIdentifier: [String: StoredRow] = [:]
        switch segment.bulk {
        case .deleteAll(let deleted)? where deleted == nil || deleted == type:
            break
        case .renameType(let from, _)? where from == type:
            break
        case .renameType(let from, let to)? where to == type:
            for row in try rows(ofType: type, in: db, now: now, afterSegments: count - 1) {
                rowsByIdentifier[row.key.identifier] = row
            }
            for var row in try rows(ofType: from, in: db, now: now, afterSegments: count - 1) {
                row.key.type = to
                rowsByIdentifier[row.key.identifier] = row
            }
        default:
            for row in try rows(ofType: type, in: db, now: now, afterSegments: count - 1) {
                rowsByIdentifier[row.key.identifier] = row
            }
        }
        for key in segment.rows.keys where key.type == type {
            rowsByIdentifier[key.identifier] = try row(key, in: db, now: now, afterSegments: count)
        }
        return Self.sortedByIdentifier(rowsByIdentifier.values)
    }

    /// Sorted as SQLite sorts identifiers (byte order of their UTF-8).
    private static func sortedByIdentifier(_ rows: some Sequence<StoredRow>) -> [StoredRow] {
        rows.sorted { $0.key.identifier.utf8.lexicographicallyPrecedes($1.key.identifier.utf8) }
    }
}
