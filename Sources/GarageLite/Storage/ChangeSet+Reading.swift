import Foundation
import GRDB

/// Reading the store as it will be once a change set is written: how a garage reads its
/// own unsaved changes.
extension ChangeSet {
    /// The row `key` as it reads with these changes applied over the store.
    func row(_ key: RowKey, in db: Database, now: Date) throws -> StoredRow? {
        switch rows[key] {
        case .delete:
            return nil
        case .replace(let payload):
            return payload.applied(to: nil, key: key, now: now)
        case .park(let payload):
            return payload.applied(to: try baseRow(key, in: db, afterBulk: bulk.count), key: key, now: now)
        case .setSyncStatus(let status):
            var row = try baseRow(key, in: db, afterBulk: bulk.count)
            row?.syncStatus = status
            return row
        case nil:
            return try baseRow(key, in: db, afterBulk: bulk.count)
        }
    }

    /// The rows of `type` as they read with these changes applied, in identifier order.
    func rows(ofType type: String, in db: Database, now: Date) throws -> [StoredRow] {
        var rowsByIdentifier: [String: StoredRow] = [:]
        for row in try baseRows(ofType: type, in: db, afterBulk: bulk.count) {
            rowsByIdentifier[row.key.identifier] = row
        }
        for key in rows.keys where key.type == type {
            rowsByIdentifier[key.identifier] = try row(key, in: db, now: now)
        }
        return Self.sortedByIdentifier(rowsByIdentifier.values)
    }

    /// The type names of the rows as they read with these changes applied.
    func types(in db: Database) throws -> Set<String> {
        var types = Set(try Store.types(db))
        for change in bulk {
            switch change {
            case .deleteAll(nil): types.removeAll()
            case .deleteAll(let type?): types.remove(type)
            case .renameType(let from, let to):
                if types.remove(from) != nil { types.insert(to) }
            }
        }
        types.formUnion(rows.keys.map(\.type))
        return types
    }

    /// The row `key` after the first `count` bulk changes.
    private func baseRow(_ key: RowKey, in db: Database, afterBulk count: Int) throws -> StoredRow? {
        guard count > 0 else { return try Store.row(db, key) }
        switch bulk[count - 1] {
        case .deleteAll(let type) where type == nil || type == key.type:
            return nil
        case .renameType(let from, _) where from == key.type:
            return nil
        case .renameType(let from, let to) where to == key.type:
            let movedKey = RowKey(type: from, identifier: key.identifier)
            if var moved = try baseRow(movedKey, in: db, afterBulk: count - 1) {
                moved.key = key
                return moved
            }
            return try baseRow(key, in: db, afterBulk: count - 1)
        default:
            return try baseRow(key, in: db, afterBulk: count - 1)
        }
    }

    /// The rows of `type` after the first `count` bulk changes.
    private func baseRows(ofType type: String, in db: Database, afterBulk count: Int) throws -> [StoredRow] {
        guard count > 0 else { return try Store.rows(db, type: type) }
        switch bulk[count - 1] {
        case .deleteAll(let deleted) where deleted == nil || deleted == type:
            return []
        case .renameType(let from, _) where from == type:
            return []
        case .renameType(let from, let to) where to == type:
            var rowsByIdentifier: [String: StoredRow] = [:]
            for row in try baseRows(ofType: type, in: db, afterBulk: count - 1) {
                rowsByIdentifier[row.key.identifier] = row
            }
            for var row in try baseRows(ofType: from, in: db, afterBulk: count - 1) {
                row.key.type = to
                rowsByIdentifier[row.key.identifier] = row
            }
            return Self.sortedByIdentifier(rowsByIdentifier.values)
        default:
            return try baseRows(ofType: type, in: db, afterBulk: count - 1)
        }
    }

    /// Sorted as SQLite sorts identifiers (byte order of their UTF-8).
    private static func sortedByIdentifier(_ rows: some Sequence<StoredRow>) -> [StoredRow] {
        rows.sorted { $0.key.identifier.utf8.lexicographicallyPrecedes($1.key.identifier.utf8) }
    }
}
