import Foundation
import GarageLite
import NIOCore
import PostgresNIO

/// The statements a garage runs again and again, prepared once per connection
/// (``PooledConnection``): the server parses and plans each once, and a call sends only its
/// parameters. The rest (counts, listings, maintenance) are sent as they come.
enum PostgresStatement: Hashable, Sendable {
    case begin, beginSnapshot
    /// The schema's write lock, and the same shared (a claim's end): `$1` the lock's name
    /// (``PostgresSchema/lockName(_:)``).
    case lockSchema, lockSchemaShared
    /// A live row: `$1` type, `$2` identifier.
    case liveRow
    /// A row or tombstone, and the same locked for the transaction: `$1` type, `$2` identifier.
    case row, rowForUpdate
    /// A page of live rows in identifier order: `$1` type, `$2` after this identifier, `$3` limit.
    case page
    /// The rows a claim may take, oldest change first (a claim takes them with
    /// ``claimRows``): `$1` status, `$2` type, `$3` now, `$4` maximum attempts, `$5` limit.
    case claimable
    /// Takes the rows a claim may take, oldest change first, skipping (and locking) rows other
    /// transactions hold, marks them claimed (``RowRules/claimed(_:claim:at:)``, as SQLite's
    /// `markClaimedSQL` writes it, which `RowRulesTests` holds to the rule) and returns them as
    /// they were: `$1` status, `$2` type, `$3` now, `$4` maximum attempts, `$5` limit, `$6` the
    /// claim, `$7` identifiers to leave out. After the row's columns, the version it wrote
    /// (``StoredRow/rowVersion``): its `xmin`, which any later write of the row changes.
    case claimRows
    /// Ends claims of rows nothing wrote since (``PostgresStatements/endClaimsIfUnchanged(_:)``),
    /// in one statement that takes the schema's lock shared first (`$13` the lock's name), as a
    /// claim's end does: writes their sync columns as ``updateStatuses`` does, with their versions
    /// in `$12`, only if each row's `xmin` is still its version, and then all of them or none;
    /// returns the identifiers of those written.
    case endClaimsIfUnchanged
    /// Locks and reads rows, in key order: `$1` types, `$2` identifiers.
    case lockRows
    /// Stores rows of distinct keys, inserted or replaced: one array a column, in
    /// ``PostgresStatements/upsertColumns``' order (``PostgresStatements/upsertBinds(_:)``).
    case upsert
    /// Writes the sync columns of rows whose other columns don't change (a claim's end, a
    /// status): one array a column, in ``PostgresStatements/statusColumns``' order
    /// (``PostgresStatements/statusBinds(_:)``). The encryption guard, on `data`, doesn't run.
    case updateStatuses
    /// Gives back rows a claim took, as they were (the columns its marking changed), those still
    /// under the claim: `$1` types, `$2` identifiers, `$3` statuses, `$4` isRemote, `$5` bases,
    /// `$6` the claim. A status the app changed meanwhile (no longer `.syncing`) stays.
    case restoreClaimed

    /// Whether the statement writes rows: outside a transaction, it commits alone.
    var writes: Bool {
        switch self {
        case .claimRows, .endClaimsIfUnchanged, .upsert, .updateStatuses, .restoreClaimed: return true
        case .begin, .beginSnapshot, .lockSchema, .lockSchemaShared, .liveRow, .row, .rowForUpdate, .page, .claimable,
             .lockRows:
            return false
        }
    }

    func sql(schema: String) -> String {
        let objects = "\(schema).garage_object"
        let columns = PostgresStatements.columns
        switch self {
        case .begin: return "BEGIN"
        case .beginSnapshot: return "BEGIN ISOLATION LEVEL REPEATABLE READ"
        case .lockSchema: return "SELECT pg_advisory_xact_lock(hashtext($1))"
        case .lockSchemaShared: return "SELECT pg_advisory_xact_lock_shared(hashtext($1))"
        case .liveRow:
            return "SELECT \(columns) FROM \(objects) WHERE type = $1 AND identifier = $2 AND NOT is_deleted"
        case .row:
            return "SELECT \(columns) FROM \(objects) WHERE type = $1 AND identifier = $2"
        case .rowForUpdate:
            return "SELECT \(columns) FROM \(objects) WHERE type = $1 AND identifier = $2 FOR UPDATE"
        case .page:
            return """
                SELECT \(columns) FROM \(objects) WHERE type = $1 AND identifier > $2 AND NOT is_deleted
                ORDER BY identifier LIMIT $3
                """
        case .claimable:
            // Ties of modification date come in the index's order (RowRules.claimOrder states
            // them as a group), so the sync index is read without a sort.
            return """
                SELECT \(columns) FROM \(objects)
                WHERE sync_status = $1 AND type = $2 AND claim IS NULL AND (retry_at IS NULL OR retry_at <= $3)
                    AND attempts < $4 AND NOT (is_deleted AND sync_status = \(SyncStatus.synced.rawValue))
                ORDER BY modification_date LIMIT $5
                """
        case .claimRows:
            let old = columns.split(separator: ",").map { "old." + $0.trimmingCharacters(in: .whitespaces) }.joined(separator: ", ")
            return """
                UPDATE \(objects) AS o SET sync_status = \(SyncStatus.syncing.rawValue), claim = $6, claimed_at = $3,
                    is_remote = true, base = CASE WHEN o.base IS NULL AND NOT o.is_deleted AND NOT o.is_remote THEN o.data ELSE o.base END
                FROM (
                    SELECT \(columns) FROM \(objects)
                    WHERE sync_status = $1 AND type = $2 AND claim IS NULL AND (retry_at IS NULL OR retry_at <= $3)
                        AND attempts < $4 AND NOT (is_deleted AND sync_status = \(SyncStatus.synced.rawValue))
                        AND identifier <> ALL($7::text[])
                    ORDER BY modification_date LIMIT $5 FOR UPDATE SKIP LOCKED) AS old
                WHERE o.type = old.type AND o.identifier = old.identifier
                RETURNING \(old), o.xmin::text::int8
                """
        case .lockRows:
            return """
                SELECT \(columns) FROM \(objects)
                WHERE (type, identifier) IN (SELECT * FROM unnest($1::text[], $2::text[]))
                ORDER BY type, identifier FOR UPDATE
                """
        case .upsert:
            let arrays = PostgresStatements.upsertColumns.enumerated()
                .map { "$\($0.offset + 1)::\($0.element.type)[]" }.joined(separator: ", ")
            let names = PostgresStatements.upsertColumns.map(\.name).joined(separator: ", ")
            let updates = PostgresStatements.upsertColumns.dropFirst(2)
                .map { "\($0.name) = excluded.\($0.name)" }.joined(separator: ", ")
            return """
                INSERT INTO \(objects) (\(names))
                SELECT * FROM unnest(\(arrays))
                ON CONFLICT (type, identifier) DO UPDATE SET \(updates)
                """
        case .restoreClaimed:
            return """
                UPDATE \(objects) AS o SET claim = NULL, claimed_at = NULL, is_remote = u.is_remote, base = u.base,
                    sync_status = CASE WHEN o.sync_status = \(SyncStatus.syncing.rawValue) THEN u.sync_status ELSE o.sync_status END
                FROM unnest($1::text[], $2::text[], $3::int8[], $4::bool[], $5::text[]) AS u(type, identifier, sync_status, is_remote, base)
                WHERE o.type = u.type AND o.identifier = u.identifier AND o.claim = $6
                """
        case .endClaimsIfUnchanged:
            let columns = PostgresStatements.statusColumns
            let arrays = columns.enumerated().map { "$\($0.offset + 1)::\($0.element.type)[]" }.joined(separator: ", ")
            let sets = columns.dropFirst(2).map { "\($0.name) = u.\($0.name)" }.joined(separator: ", ")
            let stamps = "$\(columns.count + 1)::int8[]", lockName = "$\(columns.count + 2)"
            // One statement, its own transaction. The lock (a materialized CTE the join scans)
            // comes before the first row the update locks, whatever the plan, as a claim end's
            // transaction takes it first. The count reads the statement's snapshot: a writer
            // that commits a change to one of the rows between the snapshot and the lock is
            // seen by the update alone (which rechecks each row it locks), which then skips
            // that row and ends the others.
            return """
                WITH schema_lock AS MATERIALIZED (SELECT pg_advisory_xact_lock_shared(hashtext(\(lockName))))
                UPDATE \(objects) AS o SET \(sets)
                FROM unnest(\(arrays), \(stamps)) AS u(\(columns.map(\.name).joined(separator: ", ")), stamp), schema_lock
                WHERE o.type = u.type AND o.identifier = u.identifier AND o.xmin::text::int8 = u.stamp
                    AND (SELECT count(*) FROM \(objects) AS c, unnest($1::text[], $2::text[], \(stamps)) AS k(type, identifier, stamp)
                         WHERE c.type = k.type AND c.identifier = k.identifier AND c.xmin::text::int8 = k.stamp)
                        = cardinality($1::text[])
                RETURNING o.identifier
                """
        case .updateStatuses:
            let columns = PostgresStatements.statusColumns
            let arrays = columns.enumerated().map { "$\($0.offset + 1)::\($0.element.type)[]" }.joined(separator: ", ")
            let sets = columns.dropFirst(2).map { "\($0.name) = u.\($0.name)" }.joined(separator: ", ")
            return """
                UPDATE \(objects) AS o SET \(sets)
                FROM unnest(\(arrays)) AS u(\(columns.map(\.name).joined(separator: ", ")))
                WHERE o.type = u.type AND o.identifier = u.identifier
                """
        }
    }
}

/// Arrays as PostgreSQL's binary format writes them (one dimension, from 1; `nil` as NULL),
/// for the upsert's columns.
enum PostgresArray {
    static func texts(_ values: [String?]) -> PostgresData {
        array(values, element: .text, array: .textArray) { buffer, value in buffer.writeString(value) }
    }

    static func int8s(_ values: [Int64]) -> PostgresData {
        array(values, element: .int8, array: .int8Array) { buffer, value in buffer.writeInteger(value) }
    }

    static func float8s(_ values: [Double?]) -> PostgresData {
        array(values, element: .float8, array: .float8Array) { buffer, value in buffer.writeInteger(value.bitPattern) }
    }

    static func bools(_ values: [Bool]) -> PostgresData {
        array(values, element: .bool, array: .boolArray) { buffer, value in buffer.writeInteger(value ? 1 : 0, as: UInt8.self) }
    }

    private static func array<Value>(_ values: [Value?], element: PostgresDataType, array: PostgresDataType,
                                     write: (inout ByteBuffer, Value) -> Void) -> PostgresData {
        var buffer = ByteBufferAllocator().buffer(capacity: 20 + values.count * 16)
        buffer.writeInteger(values.isEmpty ? 0 : 1, as: Int32.self)
        buffer.writeInteger(values.contains { $0 == nil } ? 1 : 0, as: Int32.self)
        buffer.writeInteger(element.rawValue)
        if !values.isEmpty {
            buffer.writeInteger(Int32(values.count))
            buffer.writeInteger(1, as: Int32.self)
            for value in values {
                guard let value else {
                    buffer.writeInteger(-1, as: Int32.self)
                    continue
                }
                let lengthIndex = buffer.writerIndex
                buffer.writeInteger(0, as: Int32.self)
                write(&buffer, value)
                buffer.setInteger(Int32(buffer.writerIndex - lengthIndex - 4), at: lengthIndex)
            }
        }
        return PostgresData(type: array, formatCode: .binary, value: buffer)
    }
}
