import Foundation
import GRDB
import GarageLiteCore

// The statements of sync jobs' claims.
extension SQLiteConnection {
    package func claimableRows(ofType type: String, status: SyncStatus, limit: Int, excluding: Set<ObjectKey>,
                       now: Date, maximumAttempts: Int) throws -> [RowRead] {
        // The rows excluded are among the first (a claim excludes those it read already): read
        // as many more, and leave them out.
        let reads = try readRows(Self.claimableRowsSQL, [
            .integer(status.rawValue), .text(type), .real(now.timeIntervalSince1970), .integer(maximumAttempts),
            .integer(limit + excluding.count),
        ], purpose: .all)
        return Array((excluding.isEmpty ? reads : reads.filter { !excluding.contains($0.key) }).prefix(limit))
    }

    /// A `.synced` tombstone is a deletion the server made (`markDeletedOnServer`): nothing to upload.
    private static let claimableRowsSQL = compact("""
        SELECT \(columns) FROM garage_object
        WHERE syncStatus = ? AND type = ? AND claim IS NULL AND (retryAt IS NULL OR retryAt <= ?) AND attempts < ?
            AND NOT (isDeleted <> 0 AND syncStatus = \(SyncStatus.synced.rawValue))
        ORDER BY modificationDate LIMIT ?
        """)

    package func claimedRows() throws -> [(key: ObjectKey, claim: String)] {
        // The partial index of claims holds these rows only.
        try Row.fetchAll(db.cachedStatement(sql: """
            SELECT CAST(type AS TEXT), CAST(identifier AS TEXT), CAST(claim AS TEXT) FROM garage_object
            WHERE claim IS NOT NULL AND claimedAt IS NOT NULL ORDER BY type, identifier
            """)).map { row in (ObjectKey(typeName: row[0] ?? "?", identifier: row[1] ?? "?"), row[2] ?? "") }
    }

    package func heldRows(ofType type: String, maximumAttempts: Int) throws -> [(identifier: String, attempts: Int, lastError: String?)] {
        try Row.fetchAll(db.cachedStatement(sql: """
            SELECT identifier, attempts, lastError FROM garage_object
            WHERE type = ? AND attempts >= ? AND claim IS NULL ORDER BY modificationDate
            """), arguments: [type, maximumAttempts]).map {
            (String.fromDatabaseValue($0[0]) ?? "?", Int.fromDatabaseValue($0[1]) ?? 0, String.fromDatabaseValue($0[2]))
        }
    }

    package func forgetAttempts(ofType type: String, identifiers: [String]?) throws -> Int {
        guard let identifiers else {
            try db.execute(sql: """
                UPDATE garage_object SET attempts = 0, retryAt = NULL WHERE type = ? AND (attempts > 0 OR retryAt IS NOT NULL)
                """, arguments: [type])
            return db.changesCount
        }
        var count = 0
        for identifier in identifiers {
            try db.cachedStatement(sql: """
                UPDATE garage_object SET attempts = 0, retryAt = NULL
                WHERE type = ? AND identifier = ? AND (attempts > 0 OR retryAt IS NOT NULL)
                """).execute(arguments: [type, identifier])
            count += db.changesCount
        }
        return count
    }

    /// Moves the rows to `.syncing` under `claim`: one statement for the rows of each type (a
    /// claim's rows are of one), their identifiers bound as one JSON array, rather than one
    /// statement a row (39k instructions a row, most of it the statement's own cost).
    package func markClaimed(_ keys: [ObjectKey], claim: String, at date: Date) throws {
        for (type, identifiers) in Self.identifiersByType(keys) {
            try execute(Self.markClaimedSQL, [
                .integer(SyncStatus.syncing.rawValue), .text(claim), .real(date.timeIntervalSince1970),
                .text(type), .text(identifiers),
            ])
        }
    }

    /// The identifiers of `keys` of each type, as a JSON array (what `json_each` reads), the
    /// types in the order `keys` first names them.
    private static func identifiersByType(_ keys: [ObjectKey]) -> [(type: String, identifiers: String)] {
        var identifiers: [String: [String]] = [:]
        var types: [String] = []
        for key in keys {
            if identifiers[key.typeName] == nil { types.append(key.typeName) }
            identifiers[key.typeName, default: []].append(key.identifier)
        }
        return types.map { ($0, JSONWriter.string(from: .array((identifiers[$0] ?? []).map(JSONValue.string)))) }
    }

    /// `OR FAIL`: a statement that changes many rows inside a transaction and may abort keeps
    /// a statement journal, which SQLite writes to a temporary file past 64 KiB: a file
    /// created, written and deleted for each batch (a tenth of claim/complete's time). Nothing
    /// here can break a constraint (every value bound is one the columns take), and an I/O
    /// error or a full disk in a statement without its journal rolls back the whole
    /// transaction, which the claim's route does anyway on any error: nothing is half-applied.
    private static let markClaimedSQL = compact("""
        UPDATE OR FAIL garage_object SET syncStatus = ?, claim = ?, claimedAt = ?, isRemote = 1,
            base = CASE WHEN base IS NULL AND isDeleted = 0 AND isRemote = 0 THEN data ELSE base END
        WHERE type = ? AND identifier IN (SELECT value FROM json_each(?))
        """)

    /// The columns the marking changed, as they were: the others (the reference list's state
    /// among them, which `putRow` would set) stay as they are.
    package func restoreClaimed(_ originals: [StoredRow], claim: String) throws {
        for row in originals {
            try execute(Self.restoreClaimedSQL, [
                .integer(row.syncStatus.rawValue), .text(row.claim), .real(row.claimedAt?.timeIntervalSince1970),
                .bool(row.isRemote), .text(row.base), .text(row.key.typeName), .text(row.key.identifier), .text(claim),
            ])
        }
    }

    private static let restoreClaimedSQL = compact("""
        UPDATE garage_object SET syncStatus = ?, claim = ?, claimedAt = ?, isRemote = ?, base = ?
        WHERE type = ? AND identifier = ? AND claim = ?
        """)

    package func endClaim(_ key: ObjectKey, status: SyncStatus?, completed: Bool,
                  failure: (error: String?, retryAt: Date)?, uploaded: String?, version: String?,
                  forgettingBase: String?) throws {
        try execute(Self.endClaimSQL, [
            .integer(status?.rawValue), .bool(completed), .bool(failure != nil),
            .real(failure?.retryAt.timeIntervalSince1970), .text(failure?.error),
            .text(key.typeName), .text(key.identifier), .text(uploaded), .text(version), .text(forgettingBase),
        ])
    }

    private static let endClaimSet = """
        syncStatus = coalesce(?1, syncStatus), claim = NULL, claimedAt = NULL,
            base = CASE WHEN coalesce(?1, syncStatus) = \(SyncStatus.synced.rawValue) THEN NULL WHEN ?8 IS NOT NULL THEN ?8
                WHEN ?10 IS NOT NULL AND base = ?10 THEN NULL ELSE base END,
            serverVersion = coalesce(?9, serverVersion),
            attempts = CASE WHEN ?2 THEN 0 WHEN ?3 THEN attempts + 1 ELSE attempts END,
            retryAt = CASE WHEN ?2 THEN NULL WHEN ?3 THEN ?4 ELSE retryAt END,
            lastError = CASE WHEN ?2 THEN NULL WHEN ?3 THEN ?5 ELSE lastError END
        """

    private static let endClaimSQL = compact("UPDATE garage_object SET \(endClaimSet) WHERE type = ?6 AND identifier = ?7")

    /// Ends the claims of `keys` alike (no failure, no upload's data, no server version): one
    /// statement for the rows of each type, their identifiers bound as one JSON array.
    package func endClaims(_ keys: [ObjectKey], status: SyncStatus?, completed: Bool) throws {
        for (type, identifiers) in Self.identifiersByType(keys) {
            try execute(Self.endClaimsSQL, [
                .integer(status?.rawValue), .bool(completed), .bool(false), .null, .null,
                .text(type), .text(identifiers), .null, .null, .null,
            ])
        }
    }

    /// `OR FAIL`, as ``markClaimedSQL`` and for the same reason.
    private static let endClaimsSQL = compact("""
        UPDATE OR FAIL garage_object SET \(endClaimSet) WHERE type = ?6 AND identifier IN (SELECT value FROM json_each(?7))
        """)

    package func releaseClaims(takenBefore cutoff: Date) throws -> [ObjectKey] {
        let rows = try Row.fetchAll(db, sql: """
            UPDATE garage_object
            SET syncStatus = CASE WHEN syncStatus = ? THEN ? ELSE syncStatus END, claim = NULL, claimedAt = NULL
            WHERE claim IS NOT NULL AND claimedAt < ?
            RETURNING type, identifier
            """, arguments: [SyncStatus.syncing.rawValue, SyncStatus.notSynced.rawValue, cutoff.timeIntervalSince1970])
        return rows.map { ObjectKey(typeName: String.fromDatabaseValue($0[0]) ?? "?", identifier: String.fromDatabaseValue($0[1]) ?? "?") }
    }
}
