import Foundation
import GarageLiteCore

/// Reading the store as it will be once a change set is written: how a garage reads its
/// own unsaved changes (through ``StoreView``).
extension ChangeSet {
    /// The row `key` as it reads with these changes applied over the store.
    func row(_ key: ObjectKey, in statements: any RowStatements, for purpose: RowPurpose, now: Date) throws -> StoredRow? {
        try row(key, Base(statements: statements, purpose: purpose, now: now), afterSegments: segments.count)
    }

    /// The rows of `type` as they read with these changes applied, in identifier order.
    func rows(ofType type: String, in statements: any RowStatements, for purpose: RowPurpose, now: Date) throws -> [RowRead] {
        try rows(ofType: type, Base(statements: statements, purpose: purpose, now: now), afterSegments: segments.count)
    }

    /// The type names of the rows as they read with these changes applied.
    func types(in statements: any RowStatements) throws -> Set<String> {
        var types = Set(try statements.types())
        for segment in segments {
            switch segment.bulk {
            case .deleteAll(nil)?: types.removeAll()
            case .deleteAll(let type?)?: types.remove(type)
            case .renameType(let from, let to)?:
                if types.remove(from) != nil { types.insert(to) }
            case nil: break
            }
            types.formUnion(segment.rows.keys.map(\.typeName))
        }
        return types
    }

    /// The committed store the changes apply over, and how its rows are read.
    private struct Base {
        let statements: any RowStatements
        let purpose: RowPurpose
        let now: Date

        /// The same store, read with the data too.
        func readingContent() -> Base {
            purpose.needsContent ? self : Base(statements: statements, purpose: .all, now: now)
        }
    }

    /// The row `key` after the first `count` segments.
    private func row(_ key: ObjectKey, _ base: Base, afterSegments count: Int) throws -> StoredRow? {
        guard count > 0 else { return try base.statements.row(key, for: base.purpose) }
        let segment = segments[count - 1]
        if let change = segment.rows[key] {
            switch change {
            case .delete:
                return nil
            case .replace(let payload):
                var replaced = payload.applied(to: nil, key: key, now: payload.parkedAt ?? base.now)
                replaced.provisional = payload.provisional
                return replaced
            case .park(let payload):
                // Whether the content changes (and so the revision, dates and status) needs the
                // data of the row it replaces, which a read of metadata alone would not have.
                let replaced = try row(key, base.readingContent(), beforeRowsOf: count)
                var parked = payload.applied(to: replaced, key: key, now: payload.parkedAt ?? base.now)
                // Over a committed tombstone, the store makes the park an edit to upload, and
                // the tombstone's revision goes on (as `Revisioned` objects expect).
                if replaced == nil, let tombstone = try base.statements.rowOrTombstone(key, for: .metadata),
                   tombstone.isDeleted {
                    if !payload.isDownloaded { parked.syncStatus = .notSynced }
                    parked.revision = tombstone.revision + 1 + payload.foldedRevisions
                }
                parked.provisional = payload.provisional
                return parked
            case .setSyncStatus(let status):
                var row = try row(key, base, beforeRowsOf: count)
                row?.syncStatus = status
                return row
            }
        }
        return try row(key, base, beforeRowsOf: count)
    }

    /// The row `key` after the bulk change of segment `count - 1`, before its row changes.
    private func row(_ key: ObjectKey, _ base: Base, beforeRowsOf count: Int) throws -> StoredRow? {
        switch segments[count - 1].bulk {
        case .deleteAll(let type)? where type == nil || type == key.typeName:
            return nil
        case .renameType(let from, _)? where from == key.typeName:
            return nil
        case .renameType(let from, let to)? where to == key.typeName:
            if var moved = try row(ObjectKey(typeName: from, identifier: key.identifier), base, afterSegments: count - 1) {
                moved.sealedFor = moved.sealedFor ?? moved.key
                moved.key = key
                return moved
            }
            return try row(key, base, afterSegments: count - 1)
        default:
            return try row(key, base, afterSegments: count - 1)
        }
    }

    /// The rows of `type` after the first `count` segments.
    private func rows(ofType type: String, _ base: Base, afterSegments count: Int) throws -> [RowRead] {
        guard count > 0 else { return try base.statements.rows(ofType: type, for: base.purpose) }
        let segment = segments[count - 1]
        var rowsByIdentifier: [String: RowRead] = [:]
        func add(_ reads: [RowRead], as type: String) {
            for read in reads {
                switch read {
                case .row(var row):
                    if row.key.typeName != type { row.sealedFor = row.sealedFor ?? row.key }
                    row.key.typeName = type
                    rowsByIdentifier[row.key.identifier] = .row(row)
                case .unreadable(var key, let error):
                    key.typeName = type
                    rowsByIdentifier[key.identifier] = .unreadable(key, error)
                }
            }
        }
        switch segment.bulk {
        case .deleteAll(let deleted)? where deleted == nil || deleted == type:
            break
        case .renameType(let from, _)? where from == type:
            break
        case .renameType(let from, let to)? where to == type:
            add(try rows(ofType: type, base, afterSegments: count - 1), as: type)
            add(try rows(ofType: from, base, afterSegments: count - 1), as: to)
        default:
            add(try rows(ofType: type, base, afterSegments: count - 1), as: type)
        }
        for key in segment.rows.keys where key.typeName == type {
            do {
                rowsByIdentifier[key.identifier] = try row(key, base, afterSegments: count).map(RowRead.row)
            } catch let error as GarageError {
                guard case .corruptData = error else { throw error }
                rowsByIdentifier[key.identifier] = .unreadable(key, error)
            }
        }
        return rowsByIdentifier.values.sorted {
            // As SQLite sorts identifiers: the byte order of their UTF-8.
            $0.key.identifier.utf8.lexicographicallyPrecedes($1.key.identifier.utf8)
        }
    }
}
