import Foundation
import GRDB

// The statements of sync jobs' claims.
extension SQLiteConnection {
    func claimableRows(ofType type: String, status: SyncStatus, limit: Int, skipping: Int) throws -> [RowRead] {
        try readRows(Self.claimableRowsSQL, [.integer(status.rawValue), .text(type), .integer(limit), .integer(skipping)],
                     purpose: .all)
    }

    private static let claimableRowsSQL = """
        SELECT \(columns) FROM garage_object
        WHERE syncStatus = ? AND type = ? AND claim IS NULL
        ORDER BY modificationDate LIMIT ? OFFSET ?
        """

    func markClaimed(_ key: ObjectKey, claim: String, at date: Date) throws {
        try db.cachedStatement(sql: """
            UPDATE garage_object SET syncStatus = ?, claim = ?, claimedAt = ?, isRemote = 1 WHERE type = ? AND identifier = ?
            """).execute(arguments: [SyncStatus.syncing.rawValue, claim, date.timeIntervalSince1970,
                                     key.typeName, key.identifier])
    }

    func endClaim(_ key: ObjectKey, status: SyncStatus?) throws {
        try db.cachedStatement(sql: """
            UPDATE garage_object SET syncStatus = coalesce(?, syncStatus), claim = NULL, claimedAt = NULL
            WHERE type = ? AND identifier = ?
            """).execute(arguments: [status?.rawValue, key.typeName, key.identifier])
    }

    func releaseClaims(takenBefore cutoff: Date) throws -> [ObjectKey] {
        let rows = try Row.fetchAll(db, sql: """
            UPDATE garage_object
            SET syncStatus = CASE WHEN syncStatus = ? THEN ? ELSE syncStatus END, claim = NULL, claimedAt = NULL
            WHERE claim IS NOT NULL AND claimedAt < ?
            RETURNING type, identifier
            """, arguments: [SyncStatus.syncing.rawValue, SyncStatus.notSynced.rawValue, cutoff.timeIntervalSince1970])
        return rows.map { ObjectKey(typeName: String.fromDatabaseValue($0[0]) ?? "?", identifier: String.fromDatabaseValue($0[1]) ?? "?") }
    }
}
