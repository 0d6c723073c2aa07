import Foundation
import GarageLite
import PostgresNIO

// The fast paths of `check()` and `collectGarbage()`: the references that dangle, and the walk
// of the reachable rows. The rows' own problems are found by the default (RowStatements+Integrity
// in GarageLite: the garage's JSON reader, not PostgreSQL's, whose `jsonb` refuses what the garage
// stores, such as `\u0000`), which reads every row a page at a time.
extension PostgresStatements {
    /// References of live rows (whose lists are usable and exact) to rows that don't exist, in
    /// the order of the referencing rows, then of their lists. A reference to a deletion the
    /// server has (a `.synced` tombstone) is not dangling. One query for the targets of a page
    /// of rows, not one a reference.
    func danglingReferences(limit: Int?) throws -> [(from: ObjectKey, to: ObjectKey)] {
        var dangling: [(from: ObjectKey, to: ObjectKey)] = []
        try forEachLivePage(knownReferencesOnly: true) { page in
            let lists = page.compactMap { row -> (ObjectKey, [ObjectKey])? in
                guard row.references != ReferenceList.empty, let keys = try? ReferenceList.decode(row.references) else { return nil }
                return (row.key, keys)
            }
            let existing = try existingKeys(Array(Set(lists.flatMap(\.1))))
            for (from, keys) in lists {
                for key in keys where !existing.contains(key) {
                    dangling.append((from, key))
                    if let limit, dangling.count >= limit { return false }
                }
            }
            return true
        }
        return dangling
    }

    /// Which of `keys` name a live row, or a deletion the server has.
    private func existingKeys(_ keys: [ObjectKey]) throws -> Set<ObjectKey> {
        guard !keys.isEmpty else { return [] }
        return Set(try run("""
            SELECT type, identifier FROM \(unescaped: objects)
            WHERE (type, identifier) IN (SELECT * FROM unnest(\(keys.map(\.typeName))::text[], \(keys.map(\.identifier))::text[]))
                AND (NOT is_deleted OR sync_status = \(Int64(SyncStatus.synced.rawValue)))
            """).rows.map { row in
            let (type, identifier) = try row.decode((String, String).self)
            return ObjectKey(typeName: type, identifier: identifier)
        })
    }

    /// The walk follows the reference index from the roots' references (and `extraRoots`);
    /// every reference list is usable (``firstInvalidReferenceList()`` says so first).
    func unreachableRows(extraRoots: [ObjectKey]) throws -> [ObjectKey] {
        try run("""
            WITH RECURSIVE reachable(type, identifier) AS (
                SELECT * FROM (
                    SELECT r.to_type, r.to_identifier FROM \(unescaped: references) AS r
                    JOIN \(unescaped: objects) AS o ON o.type = r.from_type AND o.identifier = r.from_identifier
                    WHERE o.is_root AND NOT o.is_deleted
                    UNION
                    SELECT extra.type COLLATE "C", extra.identifier COLLATE "C"
                    FROM unnest(\(extraRoots.map(\.typeName))::text[], \(extraRoots.map(\.identifier))::text[]) AS extra(type, identifier)
                ) AS seeds
                UNION
                SELECT r.to_type, r.to_identifier FROM reachable
                JOIN \(unescaped: references) AS r ON r.from_type = reachable.type AND r.from_identifier = reachable.identifier
            )
            SELECT type, identifier FROM \(unescaped: objects) WHERE NOT is_root AND NOT is_deleted
            EXCEPT
            SELECT type, identifier FROM reachable
            ORDER BY 1, 2
            """).rows.map { row in
            let (type, identifier) = try row.decode((String, String).self)
            return ObjectKey(typeName: type, identifier: identifier)
        }
    }

    /// Calls `body` with the live rows, in key order, 500 at a time, until it returns `false`.
    private func forEachLivePage(knownReferencesOnly: Bool, _ body: ([StoredRow]) throws -> Bool) throws {
        var after: ObjectKey?
        while true {
            let page: [RowRead] = try readRows("""
                SELECT \(unescaped: Self.columns) FROM \(unescaped: objects)
                WHERE (type, identifier) > (\(after?.typeName ?? ""), \(after?.identifier ?? "")) AND NOT is_deleted
                    AND (references_known OR NOT \(knownReferencesOnly))
                ORDER BY type, identifier LIMIT 500
                """)
            let rows = page.compactMap { read -> StoredRow? in
                guard case .row(let row) = read else { return nil }
                return row
            }
            if try !body(rows) { return }
            guard page.count == 500, let last = page.last else { return }
            after = last.key
        }
    }
}
