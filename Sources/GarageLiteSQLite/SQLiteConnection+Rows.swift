import Foundation
import GRDB
import GarageLiteCore

// The statements on the object table: reading rows, counting them, and writing them.
extension SQLiteConnection {
    // MARK: - Reading rows

    package func row(_ key: ObjectKey, for purpose: RowPurpose) throws -> StoredRow? {
        try readRow(purpose == .content ? Self.contentRowSQL : Self.rowSQL, key, purpose: purpose)
    }

    package func rowOrTombstone(_ key: ObjectKey, for purpose: RowPurpose) throws -> StoredRow? {
        try readRow(Self.rowOrTombstoneSQL, key, purpose: purpose == .content ? .all : purpose)
    }

    package func rows(ofType type: String, for purpose: RowPurpose) throws -> [RowRead] {
        var rows: [RowRead] = []
        try forEachRow(ofType: type, for: purpose) { rows.append($0) }
        return rows
    }

    package func forEachRow(ofType type: String, for purpose: RowPurpose, _ body: (RowRead) throws -> Void) throws {
        try step(purpose == .content ? Self.contentRowsOfTypeSQL : Self.rowsOfTypeSQL, [.text(type)]) { handle in
            try body(Self.readRow(handle, purpose: purpose))
            return true
        }
    }

    package func rows(ofType type: String, after identifier: String?, limit: Int, for purpose: RowPurpose) throws -> [RowRead] {
        guard let identifier else {
            return try readRows(Self.firstPageSQL, [.text(type), .integer(limit)], purpose: purpose)
        }
        return try readRows(Self.nextPageSQL, [.text(type), .text(identifier), .integer(limit)], purpose: purpose)
    }

    package func rows(ofType type: String, status: SyncStatus, for purpose: RowPurpose) throws -> [RowRead] {
        try readRows(Self.rowsWithStatusSQL, [.integer(status.rawValue), .text(type)], purpose: purpose)
    }

    // The statements are constants: a cached statement is found by its SQL, hashed on every call.
    // Every read skips tombstones (`isDeleted = 0`) but `rowOrTombstoneSQL` and the claims'.
    private static let rowSQL = "SELECT \(columns) FROM garage_object WHERE type = ? AND identifier = ? AND isDeleted = 0"
    private static let rowOrTombstoneSQL = "SELECT \(columns) FROM garage_object WHERE type = ? AND identifier = ?"
    /// A retrieve by key knows the key: NULL in its place too.
    private static let contentRowSQL = """
        SELECT NULL, NULL, data, isEncrypted, syncStatus, NULL, NULL, revision, NULL, refs, claim, NULL, 0
        FROM garage_object WHERE type = ? AND identifier = ? AND isDeleted = 0
        """
    private static let rowsOfTypeSQL =
        "SELECT \(columns) FROM garage_object WHERE type = ? AND isDeleted = 0 ORDER BY identifier"
    private static let contentRowsOfTypeSQL =
        "SELECT \(contentColumns) FROM garage_object WHERE type = ? AND isDeleted = 0 ORDER BY identifier"
    private static let firstPageSQL =
        "SELECT \(columns) FROM garage_object WHERE type = ? AND isDeleted = 0 ORDER BY identifier LIMIT ?"
    /// `identifier > ?` must stand alone to be a range of the key: two statements, not one.
    private static let nextPageSQL = """
        SELECT \(columns) FROM garage_object WHERE type = ? AND identifier > ? AND isDeleted = 0
        ORDER BY identifier LIMIT ?
        """
    private static let rowsWithStatusSQL = """
        SELECT \(columns) FROM garage_object WHERE syncStatus = ? AND type = ? AND isDeleted = 0
        ORDER BY modificationDate
        """

    // MARK: - Counting

    package func count() throws -> Int {
        try integer("SELECT COUNT(*) FROM garage_object WHERE isDeleted = 0", [])
    }

    package func count(ofType type: String) throws -> Int {
        try integer(Self.countOfTypeSQL, [type])
    }

    /// Through each status, so that the sync index answers alone (it holds `isDeleted`; the
    /// primary key doesn't). A row of any other status is unreadable, and not counted.
    package static let countOfTypeSQL = "SELECT COUNT(*) FROM garage_object WHERE syncStatus IN ("
        + SyncStatus.allCases.map { String($0.rawValue) }.joined(separator: ", ") + ") AND type = ? AND isDeleted = 0"

    package func count(ofType type: String, status: SyncStatus) throws -> Int {
        try integer("SELECT COUNT(*) FROM garage_object WHERE syncStatus = ? AND type = ? AND isDeleted = 0",
                    [status.rawValue, type])
    }

    package func countsPerType(status: SyncStatus) throws -> [String: Int] {
        var counts: [String: Int] = [:]
        let rows = try Row.fetchCursor(
            db.cachedStatement(sql: "SELECT CAST(type AS TEXT), COUNT(*) FROM garage_object WHERE syncStatus = ? AND isDeleted = 0 GROUP BY type"),
            arguments: [status.rawValue])
        while let row = try rows.next() {
            // Type names are text by the primary key; a count is an integer.
            counts[String.fromDatabaseValue(row[0]) ?? "?"] = Int.fromDatabaseValue(row[1]) ?? 0
        }
        return counts
    }

    package func identifiers(ofType type: String) throws -> [String] {
        try strings("SELECT identifier FROM garage_object WHERE type = ? AND isDeleted = 0 ORDER BY identifier", [type])
    }

    package func identifiers(ofType type: String, status: SyncStatus) throws -> [String] {
        try strings("""
            SELECT identifier FROM garage_object WHERE syncStatus = ? AND type = ? AND isDeleted = 0
            ORDER BY modificationDate
            """,
                    [status.rawValue, type])
    }

    package func types() throws -> [String] {
        try strings("SELECT DISTINCT type FROM garage_object WHERE isDeleted = 0", [])
    }

    package func stamps(ofType type: String, identifiers: [String]?) throws -> [String: RowStamp] {
        var stamps: [String: RowStamp] = [:]
        func read(_ rows: RowCursor, identifier: String?) throws {
            while let row = try rows.next() {
                guard let id = identifier ?? String.fromDatabaseValue(row[3]) else { continue }
                stamps[id] = RowStamp(revision: Int64.fromDatabaseValue(row[0]),
                                      modificationDate: Double.fromDatabaseValue(row[1]),
                                      syncStatus: Int64.fromDatabaseValue(row[2]))
            }
        }
        if let identifiers {
            let statement = try db.cachedStatement(sql: """
                SELECT revision, modificationDate, syncStatus FROM garage_object
                WHERE type = ? AND identifier = ? AND isDeleted = 0
                """)
            for identifier in identifiers {
                try read(Row.fetchCursor(statement, arguments: [type, identifier]), identifier: identifier)
            }
        } else {
            let statement = try db.cachedStatement(sql: """
                SELECT revision, modificationDate, syncStatus, identifier FROM garage_object
                WHERE type = ? AND isDeleted = 0
                """)
            try read(Row.fetchCursor(statement, arguments: [type]), identifier: nil)
        }
        return stamps
    }

    package func references(toType type: String, identifier: String?) throws -> [(to: ObjectKey, from: ObjectKey)] {
        let rows = try Row.fetchAll(db.cachedStatement(sql: identifier == nil ? Self.referencesToTypeSQL : Self.referencesToObjectSQL),
                                    arguments: identifier.map { [type, $0] } ?? [type])
        // The index's columns are text by its primary key.
        return rows.map { row in
            (ObjectKey(typeName: type, identifier: row[0]), ObjectKey(typeName: row[1], identifier: row[2]))
        }
    }

    package func isReferenced(_ key: ObjectKey) throws -> Bool {
        try Bool.fetchOne(db.cachedStatement(sql: """
            SELECT EXISTS (SELECT 1 FROM garage_reference WHERE toType = ?1 AND toIdentifier = ?2
                AND NOT (fromType = ?1 AND fromIdentifier = ?2))
            """), arguments: [key.typeName, key.identifier]) ?? false
    }

    /// Only references to live objects: a reference that dangles already (GarageStorage's
    /// delete) is no referrer of anything.
    package static let referencesToTypeSQL = """
        SELECT toIdentifier, fromType, fromIdentifier FROM garage_reference
        WHERE toType = ?1 AND EXISTS (
            SELECT 1 FROM garage_object WHERE type = ?1 AND identifier = toIdentifier AND isDeleted = 0)
        ORDER BY toIdentifier, fromType, fromIdentifier
        """
    package static let referencesToObjectSQL = """
        SELECT toIdentifier, fromType, fromIdentifier FROM garage_reference WHERE toType = ?1 AND toIdentifier = ?2
            AND EXISTS (SELECT 1 FROM garage_object WHERE type = ?1 AND identifier = ?2 AND isDeleted = 0)
        ORDER BY fromType, fromIdentifier
        """

    /// The key columns are text by the schema's primary key; a count is an integer.
    private func integer(_ sql: String, _ arguments: StatementArguments) throws -> Int {
        try Int.fetchOne(db.cachedStatement(sql: sql), arguments: arguments) ?? 0
    }

    private func strings(_ sql: String, _ arguments: StatementArguments) throws -> [String] {
        try String.fetchAll(db.cachedStatement(sql: sql), arguments: arguments)
    }

    // MARK: - Writing rows

    @discardableResult
    package func park(_ key: ObjectKey, _ payload: RowPayload, now: Date) throws -> Bool {
        try execute(Self.parkSQL, [
            .text(key.typeName), .text(key.identifier), .text(payload.data), .bool(payload.isEncrypted),
            .integer(payload.syncStatus?.rawValue), .real(now.timeIntervalSince1970), .bool(payload.isRoot),
            .text(payload.references), .bool(payload.isDownloaded), .integer(Int(payload.foldedRevisions)),
            .text(payload.firstData), .bool(payload.keepsSyncing), .text(payload.base), .text(payload.serverVersion),
        ])
        // The upsert's WHERE skips a row that would stay as it is.
        return db.changesCount > 0
    }

    /// Whether the park changes the row's content: its data differs, or parks folded into it
    /// changed it (`?10`, ``RowPayload/foldedRevisions``).
    private static let contentChanges = "(data IS NOT excluded.data OR ?10 > 0)"

    /// The status a parked row gets: `RowPayload.status(parking:over:contentChanged:)`, in SQL.
    /// `?5` is the object's status (NULL when it is not `Syncable`), `?9` whether it was
    /// downloaded (then it is stored as it is), `?12` whether `.syncing` is kept without a
    /// claim (``RowPayload/keepsSyncing``); the columns are the row's.
    private static let parkedStatus = """
        CASE
            WHEN ?9 THEN ?5
            WHEN isDeleted <> 0 THEN \(SyncStatus.notSynced.rawValue)
            WHEN ?5 IS NULL AND syncStatus = \(SyncStatus.synced.rawValue) AND \(contentChanges)
                THEN \(SyncStatus.notSynced.rawValue)
            WHEN ?5 IS NULL THEN syncStatus
            WHEN ?5 = \(SyncStatus.syncing.rawValue) AND claim IS NULL AND NOT ?12 THEN \(SyncStatus.notSynced.rawValue)
            WHEN ?5 = \(SyncStatus.synced.rawValue) AND \(contentChanges) THEN \(SyncStatus.notSynced.rawValue)
            ELSE ?5
        END
        """

    /// Whether the parked row is `.synced` (``parkedStatus`` is `.synced`), said without that
    /// whole expression: a download that says `.synced`, or a park that leaves a live row's
    /// content as it is, of an object that says `.synced` (or says nothing, over a `.synced` row).
    private static let becomesSynced = """
        ((?9 AND ?5 = \(SyncStatus.synced.rawValue)) OR (NOT ?9 AND isDeleted = 0 AND NOT \(contentChanges)
            AND coalesce(?5, syncStatus) = \(SyncStatus.synced.rawValue)))
        """

    /// Whether a park forgets the row's failed uploads: its content changes, or it becomes
    /// `.synced`.
    private static let forgetsAttempts = """
        (\(contentChanges) OR (\(becomesSynced) AND syncStatus <> \(SyncStatus.synced.rawValue)))
        """

    /// The base a parked row gets (``RowRules``, "Bases"): the one the payload records (`?13`),
    /// none once `.synced`, the old data when a `.synced` row's content changes (in the same
    /// encryption), else the row's.
    private static let parkedBase = """
        CASE
            WHEN ?13 IS NOT NULL THEN ?13
            WHEN \(becomesSynced) THEN NULL
            WHEN syncStatus = \(SyncStatus.synced.rawValue) AND isDeleted = 0 AND isEncrypted = excluded.isEncrypted THEN data
            WHEN isEncrypted <> excluded.isEncrypted THEN NULL
            ELSE base
        END
        """

    /// Inserts the row, or updates it when something changed: its revision and modification
    /// date change only when its content does (once more per change folded into the payload:
    /// `?10`, compared from `?11`, the first folded park's data); a row once parked as a root
    /// stays one.
    private static let parkSQL = compact("""
        INSERT INTO garage_object
            (type, identifier, data, isEncrypted, syncStatus, creationDate, modificationDate, revision, isRoot, refs,
             isRemote, base, serverVersion)
        VALUES (?1, ?2, ?3, ?4,
            CASE WHEN ?5 = \(SyncStatus.syncing.rawValue) AND NOT ?9 AND NOT ?12 THEN \(SyncStatus.notSynced.rawValue)
                ELSE coalesce(?5, 0) END,
            ?6, ?6, 1 + ?10, ?7, ?8, coalesce(?5, 0) = \(SyncStatus.synced.rawValue), ?13, ?14)
        ON CONFLICT (type, identifier) DO UPDATE SET
            base = \(parkedBase),
            serverVersion = coalesce(?14, serverVersion),
            data = excluded.data,
            isEncrypted = excluded.isEncrypted,
            refs = excluded.refs,
            isRoot = max(isRoot, excluded.isRoot),
            referencesKnown = 1,
            syncStatus = \(parkedStatus),
            isRemote = isRemote OR (\(parkedStatus)) = \(SyncStatus.synced.rawValue),
            isDeleted = 0,
            attempts = CASE WHEN \(forgetsAttempts) THEN 0 ELSE attempts END,
            retryAt = CASE WHEN \(forgetsAttempts) THEN NULL ELSE retryAt END,
            revision = revision + (data IS NOT coalesce(?11, excluded.data)) + ?10,
            modificationDate = CASE WHEN \(contentChanges) THEN ?6 ELSE modificationDate END
        WHERE \(contentChanges) OR syncStatus IS NOT \(parkedStatus) OR isDeleted <> 0
            OR isRoot < excluded.isRoot OR refs IS NOT excluded.refs OR referencesKnown = 0
            OR (?13 IS NOT NULL AND base IS NOT ?13)
            OR (?13 IS NULL AND base IS NOT NULL AND (\(becomesSynced) OR isEncrypted <> excluded.isEncrypted))
            OR (?14 IS NOT NULL AND serverVersion IS NOT ?14)
        """)

    @discardableResult
    package func delete(_ key: ObjectKey, now: Date) throws -> Bool {
        try execute(Self.tombstoneObjectSQL, [.real(now.timeIntervalSince1970), .text(key.typeName), .text(key.identifier)])
        if db.changesCount > 0 { return true }
        try execute(Self.deleteLocalObjectSQL, [.text(key.typeName), .text(key.identifier)])
        return db.changesCount > 0
    }

    private static let tombstoneObjectSQL = tombstoneSQL + " AND type = ? AND identifier = ?"
    private static let deleteLocalObjectSQL = "DELETE FROM garage_object WHERE type = ? AND identifier = ? AND isRemote = 0"

    @discardableResult
    package func insertImported(_ key: ObjectKey, _ row: ImportedRow) throws -> Bool {
        try db.cachedStatement(sql: """
            INSERT INTO garage_object
                (type, identifier, data, isEncrypted, syncStatus, creationDate, modificationDate, revision, isRoot, refs,
                 isRemote, referencesKnown)
            VALUES (?, ?, ?, ?, ?, ?, ?, 1, 1, ?, ?, 0)
            ON CONFLICT (type, identifier) DO NOTHING
            """).execute(arguments: [
                key.typeName, key.identifier, row.data, row.isEncrypted, row.syncStatus.rawValue,
                row.creationDate.timeIntervalSince1970, row.modificationDate.timeIntervalSince1970, row.references,
                row.isRemote,
            ])
        return db.changesCount > 0
    }

    @discardableResult
    package func rows(encrypted: Bool, after key: ObjectKey?, limit: Int) throws -> [(key: ObjectKey, data: String, base: String?)] {
        // A range of the primary key: `(type, identifier) > (?, ?)`.
        try Row.fetchAll(db.cachedStatement(sql: """
            SELECT CAST(type AS TEXT), CAST(identifier AS TEXT), CAST(data AS TEXT), CAST(base AS TEXT) FROM garage_object
            WHERE (type, identifier) > (?, ?) AND isEncrypted = ? AND data <> ''
            ORDER BY type, identifier LIMIT ?
            """), arguments: [key?.typeName ?? "", key?.identifier ?? "", encrypted, limit]).map { row in
            (ObjectKey(typeName: row[0], identifier: row[1]), row[2], row[3])
        }
    }

    package func setErasesFreedContent(_ erases: Bool) throws -> Bool {
        let previous = try Int.fetchOne(db, sql: "PRAGMA secure_delete") ?? 0
        try db.execute(sql: erases ? "PRAGMA secure_delete = ON" : "PRAGMA secure_delete = OFF")
        return previous != 0
    }

    package func compactAndTruncateLog() throws -> Bool {
        try db.execute(sql: "VACUUM")
        // (busy, log frames, checkpointed frames): busy when a reader kept the log from being emptied.
        let result = try Row.fetchOne(db, sql: "PRAGMA wal_checkpoint(TRUNCATE)")
        return (result?[0] as Int?) ?? 0 == 0
    }

    package func countRows(encrypted: Bool) throws -> Int {
        try Int.fetchOne(db.cachedStatement(sql: """
            SELECT COUNT(*) FROM garage_object WHERE isEncrypted = ? AND data <> ''
            """), arguments: [encrypted]) ?? 0
    }

    package func replaceData(of key: ObjectKey, previous: String, with data: String, base: String?, isEncrypted: Bool) throws -> Bool {
        try db.cachedStatement(sql: """
            UPDATE garage_object SET data = ?, base = ?, isEncrypted = ? WHERE type = ? AND identifier = ? AND data = ?
            """).execute(arguments: [data, base, isEncrypted, key.typeName, key.identifier, previous])
        return db.changesCount > 0
    }

    package func markDeletedOnServer(_ key: ObjectKey, now: Date) throws -> Bool {
        try execute(Self.markDeletedOnServerSQL, [.real(now.timeIntervalSince1970), .text(key.typeName), .text(key.identifier)])
        return db.changesCount > 0
    }

    private static let markDeletedOnServerSQL = """
        UPDATE garage_object
        SET isDeleted = 1, syncStatus = \(SyncStatus.synced.rawValue), refs = '[]', isRoot = 0,
            revision = revision + 1, modificationDate = ?, attempts = 0, retryAt = NULL, isRemote = 1, base = NULL
        WHERE type = ? AND identifier = ? AND claim IS NULL AND isDeleted = 0
        """

    /// Turns the rows it selects (objects a copy of which may be on the server) into
    /// tombstones: `.notSynced` and a new revision, so that a sync job uploads the deletion;
    /// the content deleted stays (the claim hands it to the job with the revision it had, so
    /// that a server can make the deletion conditional), the references go. The claim, if any,
    /// stays, and completes as edited meanwhile. `?1` is the date.
    private static let tombstoneSQL = """
        UPDATE garage_object
        SET isDeleted = 1, syncStatus = \(SyncStatus.notSynced.rawValue), refs = '[]', isRoot = 0,
            revision = revision + 1, modificationDate = ?, attempts = 0, retryAt = NULL,
            base = CASE WHEN syncStatus = \(SyncStatus.synced.rawValue) THEN data ELSE base END
        WHERE isRemote <> 0 AND isDeleted = 0
        """

    @discardableResult
    package func setSyncStatus(_ status: SyncStatus, of key: ObjectKey) throws -> Bool {
        try execute(Self.setSyncStatusSQL, [.integer(status.rawValue), .text(key.typeName), .text(key.identifier)])
        return db.changesCount > 0
    }

    private static let setSyncStatusSQL = """
        UPDATE garage_object SET syncStatus = ?1, isRemote = isRemote OR ?1 = \(SyncStatus.synced.rawValue),
            base = CASE WHEN ?1 = \(SyncStatus.synced.rawValue) THEN NULL
                WHEN syncStatus = \(SyncStatus.synced.rawValue) THEN data ELSE base END
        WHERE type = ?2 AND identifier = ?3 AND isDeleted = 0 AND syncStatus IS NOT ?1
        """

    package func deleteAll(ofType type: String?, now: Date) throws -> Int {
        guard let type else {
            try db.execute(sql: "DELETE FROM garage_object")
            return db.changesCount
        }
        try db.execute(sql: Self.tombstoneSQL + " AND type = ?", arguments: [now.timeIntervalSince1970, type])
        let tombstoned = db.changesCount
        try db.execute(sql: "DELETE FROM garage_object WHERE type = ? AND isRemote = 0", arguments: [type])
        return tombstoned + db.changesCount
    }

    package func renameType(from: String, to: String, reseal: RowResealer?) throws -> Int {
        // The encrypted rows' data, sealed for their old key, to seal for the new one.
        let sealed = try reseal.map { _ in
            try Row.fetchAll(db, sql: """
                SELECT CAST(identifier AS TEXT), CAST(data AS TEXT), CAST(base AS TEXT) FROM garage_object
                WHERE type = ? AND isEncrypted = 1 AND data <> ''
                """, arguments: [from]).map { (identifier: $0[0] as String, data: $0[1] as String, base: $0[2] as String?) }
        } ?? []
        // A tombstone of the old type doesn't replace a live object of the new one: it goes.
        try db.execute(sql: """
            DELETE FROM garage_object WHERE type = ?2 AND isDeleted = 1
            AND identifier IN (SELECT identifier FROM garage_object WHERE type = ?1 AND isDeleted = 0)
            """, arguments: [to, from])
        // Deleted first rather than replaced by `UPDATE OR REPLACE`, whose deletions don't run
        // the triggers that keep the reference index.
        try db.execute(sql: """
            DELETE FROM garage_object
            WHERE type = ?1 AND identifier IN (SELECT identifier FROM garage_object WHERE type = ?2)
            """, arguments: [to, from])
        try db.execute(sql: "UPDATE garage_object SET type = ? WHERE type = ?", arguments: [to, from])
        let moved = db.changesCount
        if let reseal {
            for row in sealed {
                let data: String, base: String?
                do {
                    let old = ObjectKey(typeName: from, identifier: row.identifier)
                    let new = ObjectKey(typeName: to, identifier: row.identifier)
                    data = try reseal.reseal(row.data, old, new)
                    // A base that can't be resealed is dropped: the data is what counts.
                    base = row.base.flatMap { try? reseal.reseal($0, old, new) }
                } catch {
                    // Moved without it, the row could never be decrypted again: nothing moves.
                    throw GarageError.decryptionFailed(
                        typeName: from, identifier: row.identifier,
                        reason: "it can't be re-encrypted for its new type \(to), so no \(from) was moved (\(error)); "
                            + "delete it, or park it again, then move the others")
                }
                try db.execute(sql: "UPDATE garage_object SET data = ?, base = ? WHERE type = ? AND identifier = ?",
                               arguments: [data, base, to, row.identifier])
            }
        }
        // Only rows whose reference list mentions the old name as a JSON string can be affected.
        let needle = JSONWriter.string(from: .string(from))
        let candidates = try Row.fetchAll(
            db, sql: "SELECT rowid, refs FROM garage_object WHERE instr(refs, ?) > 0", arguments: [needle])
        for candidate in candidates {
            guard let rowID = Int64.fromDatabaseValue(candidate[0]), let refs = String.fromDatabaseValue(candidate[1]),
                  let keys = try? ReferenceList.decode(refs) else { continue }
            let renamed = keys.map { $0.typeName == from ? ObjectKey(typeName: to, identifier: $0.identifier) : $0 }
            try db.execute(sql: "UPDATE garage_object SET refs = ? WHERE rowid = ?",
                           arguments: [ReferenceList.encode(renamed), rowID])
        }
        return moved
    }
}

// The store's facts beside its objects (`garage_meta`, format version 4).
extension SQLiteConnection {
    package func metadata(_ name: String) throws -> String? {
        do {
            return try String.fetchOne(db.cachedStatement(sql: "SELECT value FROM garage_meta WHERE name = ?"), arguments: [name])
        } catch let error as DatabaseError where error.message?.hasPrefix("no such table") == true {
            return nil      // a store of an earlier format opened read-only, which can't be moved to version 4
        }
    }

    package func encryptionCount() throws -> Int64 {
        do {
            return try Int64.fetchOne(db.cachedStatement(sql: "SELECT value FROM garage_meta WHERE name = 'encryptions'")) ?? 0
        } catch let error as DatabaseError where error.message?.hasPrefix("no such table") == true {
            return 0
        }
    }

    package func replaceMetadata(_ name: String, previous: String?, with value: String?) throws -> Bool {
        switch (previous, value) {
        case (nil, nil):
            return try metadata(name) == nil
        case let (nil, value?):
            try db.execute(sql: "INSERT OR IGNORE INTO garage_meta (name, value) VALUES (?, ?)", arguments: [name, value])
        case let (previous?, nil):
            try db.execute(sql: "DELETE FROM garage_meta WHERE name = ? AND value = ?", arguments: [name, previous])
        case let (previous?, value?):
            try db.execute(sql: "UPDATE garage_meta SET value = ? WHERE name = ? AND value = ?",
                           arguments: [value, name, previous])
        }
        return db.changesCount > 0
    }

    package func setMetadata(_ name: String, _ value: String) throws {
        try db.execute(sql: "INSERT OR REPLACE INTO garage_meta (name, value) VALUES (?, ?)", arguments: [name, value])
    }

    package func setEncryptionCount(_ count: Int64) throws {
        try db.execute(sql: "INSERT OR REPLACE INTO garage_meta (name, value) VALUES ('encryptions', ?)", arguments: [count])
    }

    package func setEncryptionGuard(_ guard: EncryptionGuard) throws {
        try db.execute(sql: Schema.encryptionGuard(`guard`))
        if `guard`.current == nil {
            try db.execute(sql: "DELETE FROM garage_meta WHERE name = 'encryptions'")
        }
    }
}
