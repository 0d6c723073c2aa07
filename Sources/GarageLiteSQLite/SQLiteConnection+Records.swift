import Foundation
import GRDB
import GRDBSQLite
import GarageLiteCore

// The statements of the record API (Garage+Records.swift): every column of every row, for
// tools that look inside a store, export it and import it, and the store's statistics.
extension SQLiteConnection {
    /// The columns of ``columns``, then `isRemote` (18) and `referencesKnown` (19).
    private static let recordColumns = columns + ", isRemote, referencesKnown"

    package func records(ofType type: String?, after key: ObjectKey?, limit: Int) throws -> [RowRead] {
        var rows: [RowRead] = []
        let sql: String
        var arguments: [RowArgument] = []
        switch (type, key) {
        case (nil, nil):
            sql = Self.firstRecordsSQL
        case (nil, let key?):
            sql = Self.nextRecordsSQL
            arguments = [.text(key.typeName), .text(key.typeName), .text(key.identifier)]
        case (let type?, nil):
            sql = Self.firstRecordsOfTypeSQL
            arguments = [.text(type)]
        case (let type?, let key?):
            // A key of another type: the rows of `type` after it, none when it comes after them.
            sql = Self.nextRecordsOfTypeSQL
            arguments = [.text(type), .text(key.typeName), .text(key.typeName), .text(key.identifier)]
        }
        try step(sql, arguments + [.integer(limit)]) { handle in
            rows.append(Self.readRecord(handle))
            return true
        }
        return rows
    }

    package func record(_ key: ObjectKey) throws -> RowRead? {
        var row: RowRead?
        try step(Self.recordSQL, [.text(key.typeName), .text(key.identifier)]) { handle in
            row = Self.readRecord(handle)
            return false
        }
        return row
    }

    private static let recordSQL = "SELECT \(recordColumns) FROM garage_object WHERE type = ? AND identifier = ?"
    private static let firstRecordsSQL = "SELECT \(recordColumns) FROM garage_object ORDER BY type, identifier LIMIT ?"
    /// `type > ?` or `type = ? AND identifier > ?`: both ranges of the primary key.
    private static let nextRecordsSQL = """
        SELECT \(recordColumns) FROM garage_object WHERE type > ?1 OR (type = ?2 AND identifier > ?3)
        ORDER BY type, identifier LIMIT ?4
        """
    private static let firstRecordsOfTypeSQL =
        "SELECT \(recordColumns) FROM garage_object WHERE type = ? ORDER BY identifier LIMIT ?"
    private static let nextRecordsOfTypeSQL = """
        SELECT \(recordColumns) FROM garage_object
        WHERE type = ?1 AND (?1 > ?2 OR (?1 = ?3 AND identifier > ?4))
        ORDER BY identifier LIMIT ?5
        """

    /// A row read with every column, strictly: its key too must be UTF-8 text, or the row is
    /// unreadable (a listing that resumes after the last key read must read it as stored).
    private static func readRecord(_ handle: OpaquePointer?) -> RowRead {
        let read = readRow(handle, purpose: .all)
        guard case .row(var row) = read else { return read }
        for (column, name) in [(Int32(0), "type"), (1, "identifier")] where sqlite3_column_type(handle, column) != SQLITE_TEXT
            || utf8Text(UnsafeBufferPointer(start: sqlite3_column_text(handle, column),
                                            count: Int(sqlite3_column_bytes(handle, column)))) == nil {
            return .unreadable(row.key, GarageError.corruptData(
                typeName: row.key.typeName, identifier: row.key.identifier,
                reason: "its \(name) column is not UTF-8 text"))
        }
        row.isRemote = sqlite3_column_int64(handle, 18) != 0
        row.referencesKnown = sqlite3_column_int64(handle, 19) != 0
        return .row(row)
    }

    package func insertRecord(_ key: ObjectKey, _ row: StoredRow) throws -> Bool {
        try db.cachedStatement(sql: """
            INSERT INTO garage_object
                (type, identifier, data, isEncrypted, syncStatus, creationDate, modificationDate, revision, isRoot, refs,
                 isDeleted, isRemote, attempts, lastError, retryAt, base, serverVersion, referencesKnown)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1)
            ON CONFLICT (type, identifier) DO NOTHING
            """).execute(arguments: [
                key.typeName, key.identifier, row.data, row.isEncrypted, row.syncStatus.rawValue,
                row.creationDate.timeIntervalSince1970, row.modificationDate.timeIntervalSince1970, row.revision,
                row.isRoot, row.references, row.isDeleted, row.isRemote, row.attempts, row.lastError,
                row.retryAt?.timeIntervalSince1970, row.base, row.serverVersion,
            ])
        return db.changesCount > 0
    }

    package func putRow(_ row: StoredRow) throws {
        // An update, else an insert, rather than an upsert: an upsert runs the insert triggers
        // (the encryption guard's) for a row that exists, and the guard's rule
        // (EncryptionGuard) tells an update from an insert.
        let arguments: StatementArguments = [
            row.key.typeName, row.key.identifier, row.data, row.isEncrypted, row.syncStatus.rawValue,
            row.creationDate.timeIntervalSince1970, row.modificationDate.timeIntervalSince1970, row.revision,
            row.isRoot, row.references, row.claim, row.claimedAt?.timeIntervalSince1970, row.isDeleted, row.isRemote,
            row.attempts, row.lastError, row.retryAt?.timeIntervalSince1970, row.base, row.serverVersion,
            row.referencesKnown,
        ]
        try db.cachedStatement(sql: """
            UPDATE garage_object SET
                data = ?3, isEncrypted = ?4, syncStatus = ?5, creationDate = ?6, modificationDate = ?7, revision = ?8,
                isRoot = ?9, refs = ?10, claim = ?11, claimedAt = ?12, isDeleted = ?13, isRemote = ?14, attempts = ?15,
                lastError = ?16, retryAt = ?17, base = ?18, serverVersion = ?19, referencesKnown = ?20
            WHERE type = ?1 AND identifier = ?2
            """).execute(arguments: arguments)
        if db.changesCount > 0 { return }
        try db.cachedStatement(sql: """
            INSERT INTO garage_object
                (type, identifier, data, isEncrypted, syncStatus, creationDate, modificationDate, revision, isRoot, refs,
                 claim, claimedAt, isDeleted, isRemote, attempts, lastError, retryAt, base, serverVersion, referencesKnown)
            VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20)
            """).execute(arguments: arguments)
    }

    package func typeStatistics(maximumAttempts: Int) throws -> [TypeStatistics] {
        var statistics: [String: TypeStatistics] = [:]
        let rows = try Row.fetchCursor(db.cachedStatement(sql: """
            SELECT CAST(type AS TEXT), CAST(syncStatus AS INTEGER), CAST(isDeleted AS INTEGER), COUNT(*),
                   SUM(claim IS NOT NULL), SUM(attempts >= ? AND claim IS NULL),
                   MIN(CASE WHEN syncStatus = ? THEN CAST(modificationDate AS REAL) END), SUM(length(CAST(data AS BLOB))),
                   SUM(isEncrypted <> 0)
            FROM garage_object GROUP BY type, syncStatus, isDeleted
            """), arguments: [maximumAttempts, SyncStatus.notSynced.rawValue])
        while let row = try rows.next() {
            // Every column is cast to its type (or NULL) above, so that these reads can't fail
            // on a damaged row. (`fromDatabaseValue` in optional chains here crashed Swift
            // 6.3.1's optimizer in release builds.)
            let type: String = row[0] ?? "?"
            let statusValue: Int = row[1] ?? 0
            let isDeleted: Int = row[2] ?? 0
            let count: Int = row[3] ?? 0
            let claims: Int = row[4] ?? 0
            let held: Int = row[5] ?? 0
            let oldest: Double? = row[6]
            let size: Int = row[7] ?? 0
            let encrypted: Int = row[8] ?? 0
            var entry = statistics[type] ?? TypeStatistics(typeName: type)
            // A tombstone's data is the content it deleted (see `tombstoneSQL`): stored bytes too.
            entry.dataSize += size
            if isDeleted != 0 {
                entry.tombstones += count
            } else {
                entry.count += count
                entry.countsByStatus[SyncStatus(rawValue: statusValue) ?? .undetermined, default: 0] += count
                entry.encryptedCount += encrypted
            }
            entry.openClaims += claims
            entry.heldObjects += held
            if let oldest {
                let date = Date(timeIntervalSince1970: oldest)
                entry.oldestUnsyncedChange = min(entry.oldestUnsyncedChange ?? date, date)
            }
            statistics[type] = entry
        }
        return statistics.values.sorted { $0.typeName < $1.typeName }
    }

    package func formatVersion() throws -> Int {
        try Int.fetchOne(db, sql: "PRAGMA user_version") ?? 0
    }
}
