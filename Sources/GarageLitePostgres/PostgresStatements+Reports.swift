import Foundation
import GarageLite
import NIOCore
import PostgresNIO

// What the store reports of its rows: counts, identifiers, stamps, references, claims, records
// and statistics, and its facts.
extension PostgresStatements {
    // MARK: - Counting

    func count() throws -> Int {
        try integer("SELECT count(*) FROM \(unescaped: objects) WHERE NOT is_deleted")
    }

    func count(ofType type: String) throws -> Int {
        try integer("SELECT count(*) FROM \(unescaped: objects) WHERE type = \(type) AND NOT is_deleted")
    }

    func count(ofType type: String, status: SyncStatus) throws -> Int {
        try integer("""
            SELECT count(*) FROM \(unescaped: objects) WHERE sync_status = \(Int64(status.rawValue)) AND type = \(type) AND NOT is_deleted
            """)
    }

    func countsPerType(status: SyncStatus) throws -> [String: Int] {
        var counts: [String: Int] = [:]
        for row in try run("""
            SELECT type, count(*) FROM \(unescaped: objects) WHERE sync_status = \(Int64(status.rawValue)) AND NOT is_deleted GROUP BY type
            """).rows {
            let (type, count) = try row.decode((String, Int64).self)
            counts[type] = Int(count)
        }
        return counts
    }

    func identifiers(ofType type: String) throws -> [String] {
        try strings("SELECT identifier FROM \(unescaped: objects) WHERE type = \(type) AND NOT is_deleted ORDER BY identifier")
    }

    func identifiers(ofType type: String, status: SyncStatus) throws -> [String] {
        try strings("""
            SELECT identifier FROM \(unescaped: objects) WHERE sync_status = \(Int64(status.rawValue)) AND type = \(type)
                AND NOT is_deleted ORDER BY modification_date, identifier
            """)
    }

    func types() throws -> [String] {
        try strings("SELECT DISTINCT type FROM \(unescaped: objects) WHERE NOT is_deleted")
    }

    func stamps(ofType type: String, identifiers: [String]?) throws -> [String: RowStamp] {
        let rows: [PostgresRow]
        if let identifiers {
            rows = try run("""
                SELECT identifier, revision, modification_date, sync_status FROM \(unescaped: objects)
                WHERE type = \(type) AND identifier = ANY(\(identifiers)) AND NOT is_deleted
                """).rows
        } else {
            rows = try run("""
                SELECT identifier, revision, modification_date, sync_status FROM \(unescaped: objects)
                WHERE type = \(type) AND NOT is_deleted
                """).rows
        }
        var stamps: [String: RowStamp] = [:]
        for row in rows {
            let (identifier, revision, date, status) = try row.decode((String, Int64, Double, Int64).self)
            stamps[identifier] = RowStamp(revision: revision, modificationDate: date, syncStatus: status)
        }
        return stamps
    }

    func isReferenced(_ key: ObjectKey) throws -> Bool {
        try integer("""
            SELECT count(*) FROM (SELECT 1 FROM \(unescaped: references)
                WHERE to_type = \(key.typeName) AND to_identifier = \(key.identifier)
                AND NOT (from_type = \(key.typeName) AND from_identifier = \(key.identifier)) LIMIT 1) AS found
            """) > 0
    }

    /// Only references to live objects: a reference that dangles already is no referrer of anything.
    func references(toType type: String, identifier: String?) throws -> [(to: ObjectKey, from: ObjectKey)] {
        let rows: [PostgresRow]
        if let identifier {
            rows = try run("""
                SELECT r.to_identifier, r.from_type, r.from_identifier FROM \(unescaped: references) AS r
                WHERE r.to_type = \(type) AND r.to_identifier = \(identifier) AND EXISTS (
                    SELECT 1 FROM \(unescaped: objects) AS o WHERE o.type = r.to_type AND o.identifier = r.to_identifier AND NOT o.is_deleted)
                ORDER BY r.from_type, r.from_identifier
                """).rows
        } else {
            rows = try run("""
                SELECT r.to_identifier, r.from_type, r.from_identifier FROM \(unescaped: references) AS r
                WHERE r.to_type = \(type) AND EXISTS (
                    SELECT 1 FROM \(unescaped: objects) AS o WHERE o.type = r.to_type AND o.identifier = r.to_identifier AND NOT o.is_deleted)
                ORDER BY r.to_identifier, r.from_type, r.from_identifier
                """).rows
        }
        return try rows.map { row in
            let (to, fromType, fromIdentifier) = try row.decode((String, String, String).self)
            return (ObjectKey(typeName: type, identifier: to), ObjectKey(typeName: fromType, identifier: fromIdentifier))
        }
    }

    // MARK: - Claims

    func claimableRows(ofType type: String, status: SyncStatus, limit: Int, excluding: Set<ObjectKey>,
                       now: Date, maximumAttempts: Int) throws -> [RowRead] {
        let reads = try readRows(.claimable, [
            PostgresData(int64: Int64(status.rawValue)), PostgresData(string: type), PostgresData(double: now.timeIntervalSince1970),
            PostgresData(int64: Int64(maximumAttempts)), PostgresData(int64: Int64(limit + excluding.count))])
        return Array((excluding.isEmpty ? reads : reads.filter { !excluding.contains($0.key) }).prefix(limit))
    }

    /// The sync columns of `originals` written back as they were (``PostgresStatement/updateStatuses``):
    /// the marking changed only those, and the rows are this claim's, locked.
    func restoreClaimed(_ originals: [StoredRow], claim: String) throws {
        wrote()
        takenRows = takenRows.filter { taken in !originals.contains { $0.key == taken.key } }
        try send(.restoreClaimed, [
            PostgresArray.texts(originals.map(\.key.typeName)), PostgresArray.texts(originals.map(\.key.identifier)),
            PostgresArray.int8s(originals.map { Int64($0.syncStatus.rawValue) }), PostgresArray.bools(originals.map(\.isRemote)),
            PostgresArray.texts(originals.map(\.base)), PostgresData(string: claim)])
    }

    /// One statement (``PostgresStatement/claimRows``): the rows read, marked, and returned as
    /// they were, in claim order (the statement returns them in the order it updated them).
    /// Every row it takes is readable: the schema types each column, and the status is the one
    /// asked for.
    func claimRows(ofType type: String, status: SyncStatus, limit: Int, excluding: Set<ObjectKey>,
                   claim: String, now: Date, maximumAttempts: Int) throws -> [RowRead] {
        wrote()
        claimID = claim
        let reads = try readRows(.claimRows, [
            PostgresData(int64: Int64(status.rawValue)), PostgresData(string: type), PostgresData(double: now.timeIntervalSince1970),
            PostgresData(int64: Int64(maximumAttempts)), PostgresData(int64: Int64(limit)), PostgresData(string: claim),
            PostgresArray.texts(excluding.map(\.identifier))])
        takenRows += reads.compactMap { try? $0.get() }
        // Readable rows in claim order, then any other by key (none: see above).
        return reads.sorted { first, second in
            switch (first, second) {
            case (.row(let first), .row(let second)): return RowRules.claimOrder(first, second)
            case (.row, .unreadable): return true
            case (.unreadable, .row): return false
            case (.unreadable, .unreadable): return first.key < second.key
            }
        }
    }

    func claimedRows() throws -> [(key: ObjectKey, claim: String)] {
        try run("""
            SELECT type, identifier, claim FROM \(unescaped: objects)
            WHERE claim IS NOT NULL AND claimed_at IS NOT NULL ORDER BY type, identifier
            """).rows.map { row in
            let (type, identifier, claim) = try row.decode((String, String, String).self)
            return (ObjectKey(typeName: type, identifier: identifier), claim)
        }
    }

    func heldRows(ofType type: String, maximumAttempts: Int) throws -> [(identifier: String, attempts: Int, lastError: String?)] {
        try run("""
            SELECT identifier, attempts, last_error FROM \(unescaped: objects)
            WHERE type = \(type) AND attempts >= \(Int64(maximumAttempts)) AND claim IS NULL ORDER BY modification_date, identifier
            """).rows.map { row in
            let (identifier, attempts, lastError) = try row.decode((String, Int64, String?).self)
            return (identifier, Int(attempts), lastError)
        }
    }

    // MARK: - Records

    func records(ofType type: String?, after key: ObjectKey?, limit: Int) throws -> [RowRead] {
        switch (type, key) {
        case (nil, nil):
            return try readRows("SELECT \(unescaped: Self.columns) FROM \(unescaped: objects) ORDER BY type, identifier LIMIT \(Int64(limit))")
        case (nil, let key?):
            return try readRows("""
                SELECT \(unescaped: Self.columns) FROM \(unescaped: objects) WHERE (type, identifier) > (\(key.typeName), \(key.identifier))
                ORDER BY type, identifier LIMIT \(Int64(limit))
                """)
        case (let type?, nil):
            return try readRows("""
                SELECT \(unescaped: Self.columns) FROM \(unescaped: objects) WHERE type = \(type) ORDER BY identifier LIMIT \(Int64(limit))
                """)
        case (let type?, let key?):
            return try readRows("""
                SELECT \(unescaped: Self.columns) FROM \(unescaped: objects)
                WHERE type = \(type) AND (type, identifier) > (\(key.typeName), \(key.identifier))
                ORDER BY identifier LIMIT \(Int64(limit))
                """)
        }
    }

    func record(_ key: ObjectKey) throws -> RowRead? {
        try rowOrTombstone(key, for: .all).map { .row($0) }
    }

    func typeStatistics(maximumAttempts: Int) throws -> [TypeStatistics] {
        var statistics: [String: TypeStatistics] = [:]
        for row in try run("""
            SELECT type, sync_status, is_deleted, count(*), count(claim),
                count(*) FILTER (WHERE attempts >= \(Int64(maximumAttempts)) AND claim IS NULL),
                min(modification_date) FILTER (WHERE sync_status = \(Int64(SyncStatus.notSynced.rawValue))),
                coalesce(sum(octet_length(data)), 0)::bigint, count(*) FILTER (WHERE is_encrypted)
            FROM \(unescaped: objects) GROUP BY type, sync_status, is_deleted
            """).rows {
            let (type, statusValue, isDeleted, count, claims, held, oldest, size, encrypted) =
                try row.decode((String, Int64, Bool, Int64, Int64, Int64, Double?, Int64, Int64).self)
            var entry = statistics[type] ?? TypeStatistics(typeName: type)
            entry.dataSize += Int(size)
            if isDeleted {
                entry.tombstones += Int(count)
            } else {
                entry.count += Int(count)
                entry.countsByStatus[SyncStatus(rawValue: Int(statusValue)) ?? .undetermined, default: 0] += Int(count)
                entry.encryptedCount += Int(encrypted)
            }
            entry.openClaims += Int(claims)
            entry.heldObjects += Int(held)
            if let oldest {
                let date = Date(timeIntervalSince1970: oldest)
                entry.oldestUnsyncedChange = min(entry.oldestUnsyncedChange ?? date, date)
            }
            statistics[type] = entry
        }
        return statistics.values.sorted { $0.typeName < $1.typeName }
    }

    func storageSize() throws -> (store: Int, log: Int) {
        let size = try integer("""
            SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0)::bigint FROM pg_class AS c
            JOIN pg_namespace AS n ON n.oid = c.relnamespace WHERE n.nspname = \(schema) AND c.relkind = 'r'
            """)
        return (size, 0)
    }

    func formatVersion() throws -> Int {
        try integer("SELECT version::bigint FROM \(unescaped: schema).garage_format")
    }

    // MARK: - Facts

    func metadata(_ name: String) throws -> String? {
        try run("SELECT value FROM \(unescaped: facts) WHERE name = \(name)").rows.first.map { try $0.decode(String.self) }
    }

    func encryptionCount() throws -> Int64 {
        guard let value = try metadata("encryptions") else { return 0 }
        return Int64(value) ?? 0
    }
}
