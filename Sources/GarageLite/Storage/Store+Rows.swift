import Foundation
import GRDB
import GRDBSQLite

// The statements on the object table: reading rows, and writing the changes of a change set.
extension Store {
    // MARK: - Reading rows

    static let columns = """
        type, identifier, data, isEncrypted, syncStatus, creationDate, modificationDate, revision, isRoot, refs, \
        claim, claimedAt
        """

    static func storedRow(_ row: Row) throws -> StoredRow {
        let key = RowKey(type: try row.decode(String.self, atIndex: 0),
                         identifier: try row.decode(String.self, atIndex: 1))
        // A cursor's row lets SQLite convert values: text in a number column would read as 0,
        // silently. The columns whose value decides how the row is read are checked.
        func integer(_ index: Int, _ name: String) throws -> Int64 {
            let value: DatabaseValue = row[index]
            guard case .int64(let integer) = value.storage else {
                throw GarageError.corruptData(typeName: key.type, identifier: key.identifier,
                                              reason: "its \(name) column is not an integer")
            }
            return integer
        }
        let statusValue = try integer(4, "syncStatus")
        guard let status = SyncStatus(rawValue: Int(statusValue)) else {
            throw GarageError.corruptData(typeName: key.type, identifier: key.identifier,
                                          reason: "unknown sync status \(statusValue)")
        }
        // All the bytes of the data, also past a NUL, which then makes the JSON invalid.
        let data = try row.withUnsafeData(atIndex: 2) { bytes in
            guard let text = Self.utf8Text(bytes ?? Data()) else {
                throw GarageError.corruptData(typeName: key.type, identifier: key.identifier,
                                              reason: "its data column is not UTF-8 text")
            }
            return text
        }
        return StoredRow(
            key: key,
            data: data,
            isEncrypted: try integer(3, "isEncrypted") != 0,
            syncStatus: status,
            creationDate: Date(timeIntervalSince1970: try row.decode(Double.self, atIndex: 5)),
            modificationDate: Date(timeIntervalSince1970: try row.decode(Double.self, atIndex: 6)),
            revision: try row.decode(Int64.self, atIndex: 7),
            isRoot: try row.decode(Bool.self, atIndex: 8),
            references: try row.decode(String.self, atIndex: 9),
            claim: try row.decode(String?.self, atIndex: 10),
            claimedAt: try row.decode(Double?.self, atIndex: 11).map(Date.init(timeIntervalSince1970:)))
    }

    /// The row `key` with what decoding its object needs: its data, status and references
    /// (the dates, revision and claim are left empty).
    ///
    /// This is the statement of every by-identifier retrieve, so it runs on the statement's
    /// SQLite handle: GRDB's row cursor costs more than the lookup itself. The statement is
    /// used by this function only, and is reset before it returns.
    static func contentRow(_ db: Database, _ key: RowKey) throws -> StoredRow? {
        let statement = try db.cachedStatement(
            sql: "SELECT data, isEncrypted, syncStatus, refs FROM garage_object WHERE type = ? AND identifier = ?")
        let handle = statement.sqliteStatement
        defer {
            sqlite3_reset(handle)
            sqlite3_clear_bindings(handle)
        }
        sqlite3_bind_text(handle, 1, key.type, -1, sqliteTransient)
        sqlite3_bind_text(handle, 2, key.identifier, -1, sqliteTransient)
        switch sqlite3_step(handle) {
        case SQLITE_DONE:
            return nil
        case SQLITE_ROW:
            break
        case let code:
            throw DatabaseError(
                resultCode: ResultCode(rawValue: code),
                message: String(cString: sqlite3_errmsg(db.sqliteConnection)), sql: statement.sql)
        }
        func corrupt(_ reason: String) -> GarageError {
            .corruptData(typeName: key.type, identifier: key.identifier, reason: reason)
        }
        func text(_ column: Int32, _ name: String) throws -> String {
            guard sqlite3_column_type(handle, column) == SQLITE_TEXT,
                  let bytes = sqlite3_column_text(handle, column) else {
                throw corrupt("its \(name) column is not text")
            }
            let count = Int(sqlite3_column_bytes(handle, column))
            guard let text = Self.utf8Text(UnsafeBufferPointer(start: bytes, count: count)) else {
                throw corrupt("its \(name) column is not UTF-8 text")
            }
            return text
        }
        func integer(_ column: Int32, _ name: String) throws -> Int64 {
            guard sqlite3_column_type(handle, column) == SQLITE_INTEGER else {
                throw corrupt("its \(name) column is not an integer")
            }
            return sqlite3_column_int64(handle, column)
        }
        let statusValue = try integer(2, "syncStatus")
        guard let status = SyncStatus(rawValue: Int(statusValue)) else {
            throw corrupt("unknown sync status \(statusValue)")
        }
        return StoredRow(
            key: key, data: try text(0, "data"), isEncrypted: try integer(1, "isEncrypted") != 0,
            syncStatus: status, creationDate: .distantPast, modificationDate: .distantPast, revision: 0,
            isRoot: false, references: (try? text(3, "refs")) ?? Self.unreadableReferences)
    }

    /// The references of a row whose `refs` column is damaged: not ``ReferenceList/empty``, so
    /// that the object is decoded with its graph, whose stubs are in its data.
    static let unreadableReferences = "?"

    /// The text `bytes` hold, or `nil` when they are not UTF-8: a damaged row is reported, not
    /// read with replacement characters.
    static func utf8Text(_ bytes: some Collection<UInt8>) -> String? {
        if #available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *) {
            return String(validating: bytes, as: UTF8.self)
        }
        return String(bytes: bytes, encoding: .utf8)
    }

    /// SQLite copies a value bound with it.
    private static let sqliteTransient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    static func row(_ db: Database, _ key: RowKey) throws -> StoredRow? {
        let statement = try db.cachedStatement(
            sql: "SELECT \(columns) FROM garage_object WHERE type = ? AND identifier = ?")
        guard let row = try Row.fetchOne(statement, arguments: [key.type, key.identifier]) else { return nil }
        do {
            return try storedRow(row)
        } catch is RowDecodingError {
            // A copied row checks the type of each value (a cursor's row lets SQLite convert it):
            // text or a blob where a number belongs is the row's problem, not GRDB's.
            throw GarageError.corruptData(typeName: key.type, identifier: key.identifier,
                                          reason: "\(mistypedColumns(row)) of the wrong type")
        }
    }

    /// Which columns of a row read with ``columns`` hold a value of the wrong type, in words.
    private static func mistypedColumns(_ row: Row) -> String {
        let checks: [(name: String, isReadable: (Row) -> Bool)] = [
            ("data", { (try? $0.decode(String.self, atIndex: 2)) != nil }),
            ("isEncrypted", { (try? $0.decode(Bool.self, atIndex: 3)) != nil }),
            ("syncStatus", { (try? $0.decode(Int.self, atIndex: 4)) != nil }),
            ("creationDate", { (try? $0.decode(Double.self, atIndex: 5)) != nil }),
            ("modificationDate", { (try? $0.decode(Double.self, atIndex: 6)) != nil }),
            ("revision", { (try? $0.decode(Int64.self, atIndex: 7)) != nil }),
            ("isRoot", { (try? $0.decode(Bool.self, atIndex: 8)) != nil }),
            ("refs", { (try? $0.decode(String.self, atIndex: 9)) != nil }),
            ("claim", { (try? $0.decode(String?.self, atIndex: 10)) != nil }),
            ("claimedAt", { (try? $0.decode(Double?.self, atIndex: 11)) != nil }),
        ]
        let names = checks.filter { !$0.isReadable(row) }.map(\.name)
        switch names.count {
        case 0: return "a column holds a value"
        case 1: return "its \(names[0]) column holds a value"
        default: return "its columns \(names.joined(separator: ", ")) hold values"
        }
    }

    /// The rows of `type`, in identifier order.
    static func rows(_ db: Database, type: String) throws -> [StoredRow] {
        let statement = try db.cachedStatement(
            sql: "SELECT \(columns) FROM garage_object WHERE type = ? ORDER BY identifier")
        return try Row.fetchCursor(statement, arguments: [type]).map(storedRow).reduce(into: []) { $0.append($1) }
    }

    /// Up to `limit` rows of `type` whose identifier follows `identifier` (all when `nil`), in
    /// identifier order: one page of a scan of the primary key.
    static func rows(_ db: Database, type: String, after identifier: String?, limit: Int) throws -> [StoredRow] {
        // Two statements: `identifier > ?` must stand alone to be a range of the key.
        let statement: Statement
        let arguments: StatementArguments
        if let identifier {
            statement = try db.cachedStatement(sql: """
                SELECT \(columns) FROM garage_object WHERE type = ? AND identifier > ? ORDER BY identifier LIMIT ?
                """)
            arguments = [type, identifier, limit]
        } else {
            statement = try db.cachedStatement(sql: """
                SELECT \(columns) FROM garage_object WHERE type = ? ORDER BY identifier LIMIT ?
                """)
            arguments = [type, limit]
        }
        return try Row.fetchCursor(statement, arguments: arguments).map(storedRow).reduce(into: []) { $0.append($1) }
    }

    /// The rows of `type` with `status`, oldest modification first (in the sync index's order).
    static func rows(_ db: Database, type: String, status: SyncStatus) throws -> [StoredRow] {
        let statement = try db.cachedStatement(sql: """
            SELECT \(columns) FROM garage_object WHERE syncStatus = ? AND type = ? ORDER BY modificationDate
            """)
        return try Row.fetchCursor(statement, arguments: [status.rawValue, type])
            .map(storedRow).reduce(into: []) { $0.append($1) }
    }

    static func count(_ db: Database, type: String, status: SyncStatus) throws -> Int {
        try Int.fetchOne(
            db.cachedStatement(sql: "SELECT COUNT(*) FROM garage_object WHERE syncStatus = ? AND type = ?"),
            arguments: [status.rawValue, type]) ?? 0
    }

    /// The identifiers of `type` with `status`, oldest modification first.
    static func identifiers(_ db: Database, type: String, status: SyncStatus) throws -> [String] {
        try String.fetchAll(
            db.cachedStatement(sql: """
                SELECT identifier FROM garage_object WHERE syncStatus = ? AND type = ? ORDER BY modificationDate
                """),
            arguments: [status.rawValue, type])
    }

    /// The number of rows with `status`, per type: a range scan of the sync index.
    static func countsPerType(_ db: Database, status: SyncStatus) throws -> [String: Int] {
        let rows = try Row.fetchAll(
            db.cachedStatement(sql: "SELECT type, COUNT(*) FROM garage_object WHERE syncStatus = ? GROUP BY type"),
            arguments: [status.rawValue])
        var counts: [String: Int] = [:]
        for row in rows {
            counts[try row.decode(String.self, atIndex: 0)] = try row.decode(Int.self, atIndex: 1)
        }
        return counts
    }

    static func count(_ db: Database, type: String) throws -> Int {
        try Int.fetchOne(db.cachedStatement(sql: "SELECT COUNT(*) FROM garage_object WHERE type = ?"),
                         arguments: [type]) ?? 0
    }

    static func count(_ db: Database) throws -> Int {
        try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM garage_object") ?? 0
    }

    /// The distinct type names of the rows.
    static func types(_ db: Database) throws -> [String] {
        try String.fetchAll(db, sql: "SELECT DISTINCT type FROM garage_object")
    }

    /// The identifiers of `type`, in order.
    static func identifiers(_ db: Database, type: String) throws -> [String] {
        try String.fetchAll(
            db.cachedStatement(sql: "SELECT identifier FROM garage_object WHERE type = ? ORDER BY identifier"),
            arguments: [type])
    }

    // MARK: - Writing rows

    /// Writes every change of `changes`, segment after segment.
    static func apply(_ changes: ChangeSet, to db: Database, now: Date) throws {
        for segment in changes.segments {
            switch segment.bulk {
            case .deleteAll(let type)?:
                _ = try deleteAll(db, type: type)
            case .renameType(let from, let to)?:
                _ = try renameType(db, from: from, to: to)
            case nil:
                break
            }
            for (key, change) in segment.rows {
                switch change {
                case .park(let payload):
                    try park(db, key: key, payload: payload, now: now)
                case .replace(let payload):
                    try delete(db, key: key)
                    try park(db, key: key, payload: payload, now: now)
                case .delete:
                    try delete(db, key: key)
                case .setSyncStatus(let status):
                    try setSyncStatus(db, key: key, status: status)
                }
            }
        }
    }

    /// Inserts or updates the row. Its revision and modification date change only when its
    /// data does; a row once parked as a root stays a root.
    static func park(_ db: Database, key: RowKey, payload: RowPayload, now: Date) throws {
        let statement = try db.cachedStatement(sql: """
            INSERT INTO garage_object
                (type, identifier, data, isEncrypted, syncStatus, creationDate, modificationDate, revision, isRoot, refs)
            VALUES (?1, ?2, ?3, ?4, coalesce(?5, 0), ?6, ?6, 1, ?7, ?8)
            ON CONFLICT (type, identifier) DO UPDATE SET
                data = excluded.data,
                isEncrypted = excluded.isEncrypted,
                refs = excluded.refs,
                isRoot = max(isRoot, excluded.isRoot),
                syncStatus = coalesce(?5, syncStatus),
                revision = revision + (data IS NOT excluded.data),
                modificationDate = CASE WHEN data IS excluded.data THEN modificationDate ELSE ?6 END
            WHERE data IS NOT excluded.data OR syncStatus IS NOT coalesce(?5, syncStatus)
                OR isRoot < excluded.isRoot OR refs IS NOT excluded.refs
            """)
        try statement.execute(arguments: [
            key.type, key.identifier, payload.data, payload.isEncrypted, payload.syncStatus?.rawValue,
            now.timeIntervalSince1970, payload.isRoot, payload.references,
        ])
    }

    /// Deletes the row; returns whether there was one.
    @discardableResult
    static func delete(_ db: Database, key: RowKey) throws -> Bool {
        try db.cachedStatement(sql: "DELETE FROM garage_object WHERE type = ? AND identifier = ?")
            .execute(arguments: [key.type, key.identifier])
        return db.changesCount > 0
    }

    /// Sets the row's status; returns whether the row exists.
    @discardableResult
    static func setSyncStatus(_ db: Database, key: RowKey, status: SyncStatus) throws -> Bool {
        try db.cachedStatement(sql: "UPDATE garage_object SET syncStatus = ? WHERE type = ? AND identifier = ?")
            .execute(arguments: [status.rawValue, key.type, key.identifier])
        return db.changesCount > 0
    }

    /// Deletes every row of `type` (every row when `nil`); returns how many.
    static func deleteAll(_ db: Database, type: String?) throws -> Int {
        if let type {
            try db.execute(sql: "DELETE FROM garage_object WHERE type = ?", arguments: [type])
        } else {
            try db.execute(sql: "DELETE FROM garage_object")
        }
        return db.changesCount
    }

    /// Moves every row of type `from` to type `to`, and rewrites the references other rows
    /// hold to them; returns how many rows moved.
    static func renameType(_ db: Database, from: String, to: String) throws -> Int {
        try db.execute(sql: "UPDATE OR REPLACE garage_object SET type = ? WHERE type = ?", arguments: [to, from])
        let moved = db.changesCount
        // Only rows whose reference list mentions the old name as a JSON string can be affected.
        let needle = JSONWriter.string(from: .string(from))
        let candidates = try Row.fetchAll(
            db, sql: "SELECT rowid, refs FROM garage_object WHERE instr(refs, ?) > 0", arguments: [needle])
        for candidate in candidates {
            let rowID = try candidate.decode(Int64.self, atIndex: 0)
            let refs = try candidate.decode(String.self, atIndex: 1)
            guard let keys = try? ReferenceList.decode(refs) else { continue }
            let renamed = keys.map { $0.type == from ? RowKey(type: to, identifier: $0.identifier) : $0 }
            try db.execute(sql: "UPDATE garage_object SET refs = ? WHERE rowid = ?",
                           arguments: [ReferenceList.encode(renamed), rowID])
        }
        return moved
    }
}
