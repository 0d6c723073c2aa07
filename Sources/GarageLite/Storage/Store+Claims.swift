import Foundation
import GRDB

// The statements of sync jobs' claims.
extension Store {
    // MARK: - Claims

    /// Up to `limit` unclaimed rows of `type` with `status`, oldest modification first, after
    /// the first `skipping` ones.
    static func claimableRows(
        _ db: Database, type: String, status: SyncStatus, limit: Int, skipping: Int = 0
    ) throws -> [StoredRow] {
        let statement = try db.cachedStatement(sql: """
            SELECT \(columns) FROM garage_object
            WHERE syncStatus = ? AND type = ? AND claim IS NULL
            ORDER BY modificationDate LIMIT ? OFFSET ?
            """)
        return try Row.fetchCursor(statement, arguments: [status.rawValue, type, limit, skipping])
            .map(storedRow).reduce(into: []) { $0.append($1) }
    }

    /// Moves the row to `.syncing` under `claim`.
    static func markClaimed(_ db: Database, key: RowKey, claim: String, at date: Date) throws {
        try db.cachedStatement(sql: """
            UPDATE garage_object SET syncStatus = ?, claim = ?, claimedAt = ? WHERE type = ? AND identifier = ?
            """).execute(arguments: [SyncStatus.syncing.rawValue, claim, date.timeIntervalSince1970,
                                     key.type, key.identifier])
    }

    /// Ends the row's claim, setting its status to `status` (or leaving it when `nil`).
    static func endClaim(_ db: Database, key: RowKey, status: SyncStatus?) throws {
        try db.cachedStatement(sql: """
            UPDATE garage_object SET syncStatus = coalesce(?, syncStatus), claim = NULL, claimedAt = NULL
            WHERE type = ? AND identifier = ?
            """).execute(arguments: [status?.rawValue, key.type, key.identifier])
    }

    /// Ends every claim taken before `cutoff`: rows still `.syncing` go back to `.notSynced`.
    /// Returns the rows released.
    static func releaseClaims(_ db: Database, takenBefore cutoff: Date) throws -> [RowKey] {
        let rows = try Row.fetchAll(db, sql: """
            UPDATE garage_object
            SET syncStatus = CASE WHEN syncStatus = ? THEN ? ELSE syncStatus END, claim = NULL, claimedAt = NULL
            WHERE claim IS NOT NULL AND claimedAt < ?
            RETURNING type, identifier
            """, arguments: [SyncStatus.syncing.rawValue, SyncStatus.notSynced.rawValue, cutoff.timeIntervalSince1970])
        return try rows.map {
            RowKey(type: try $0.decode(String.self, atIndex: 0), identifier: try $0.decode(String.self, atIndex: 1))
        }
    }
}
