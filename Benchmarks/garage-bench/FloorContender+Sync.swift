import Foundation
import GarageLite
import GRDBSQLite

// The floor of the sync workloads (tombstones, downloads): a table with GarageLite's format-3
// schema, and the statements GarageLite runs on it (Sources/GarageLiteSQLite/
// SQLiteConnection+Rows.swift and +Claims.swift, Storage/Store+Claims.swift and
// Store+Downloads.swift), as SQL text, through SQLite's C API with prepared statements reused,
// in the same transactions; JSONEncoder/JSONDecoder for the objects. It is created on first
// use, so the other workloads' files hold only `floor_object`.

/// The prepared statements of the sync workloads' table.
final class SyncStatements {
    /// The columns GarageLite's row reads select, in its order (`SQLiteConnection.columns`).
    static let columns = """
        type, identifier, data, isEncrypted, syncStatus, creationDate, modificationDate, revision, isRoot, refs, \
        claim, claimedAt, isDeleted, attempts, lastError, retryAt
        """

    /// GarageLite's table and indexes, format version 3 (`Schema.swift`: version 1, then
    /// version 2's columns, in their order, then version 3's column, index of references and its
    /// triggers, as SQLite stores their text).
    static let schema = """
        CREATE TABLE IF NOT EXISTS garage_object (
            type TEXT NOT NULL,
            identifier TEXT NOT NULL,
            data TEXT NOT NULL,
            isEncrypted INTEGER NOT NULL DEFAULT 0,
            syncStatus INTEGER NOT NULL DEFAULT 0,
            creationDate REAL NOT NULL,
            modificationDate REAL NOT NULL,
            revision INTEGER NOT NULL DEFAULT 1,
            isRoot INTEGER NOT NULL DEFAULT 0,
            refs TEXT NOT NULL DEFAULT '[]',
            claim TEXT,
            claimedAt REAL,
            isDeleted INTEGER NOT NULL DEFAULT 0,
            isRemote INTEGER NOT NULL DEFAULT 0,
            attempts INTEGER NOT NULL DEFAULT 0,
            retryAt REAL,
            lastError TEXT,
            referencesKnown INTEGER NOT NULL DEFAULT 1,
            PRIMARY KEY (type, identifier)
        );
        CREATE INDEX IF NOT EXISTS garage_object_sync ON garage_object (syncStatus, type, modificationDate);
        CREATE INDEX IF NOT EXISTS garage_object_claim ON garage_object (claimedAt) WHERE claim IS NOT NULL;
        CREATE TABLE IF NOT EXISTS garage_reference (
            toType TEXT NOT NULL,
            toIdentifier TEXT NOT NULL,
            fromType TEXT NOT NULL,
            fromIdentifier TEXT NOT NULL,
            PRIMARY KEY (toType, toIdentifier, fromType, fromIdentifier)
        ) WITHOUT ROWID;
        CREATE TRIGGER IF NOT EXISTS garage_reference_delete AFTER DELETE ON garage_object
        WHEN CASE WHEN old.refs = '[]' OR typeof(old.refs) <> 'text' OR typeof(old.type) <> 'text'
                OR typeof(old.identifier) <> 'text' THEN 0
            WHEN json_valid(old.refs) THEN json_type(old.refs) = 'array'
            ELSE 0 END
        BEGIN
            DELETE FROM garage_reference WHERE (toType, toIdentifier, fromType, fromIdentifier) IN
            (SELECT json_extract(element.value, '$[0]'), json_extract(element.value, '$[1]'), old.type, old.identifier FROM json_each(CASE WHEN CASE WHEN old.refs = '[]' OR typeof(old.refs) <> 'text' OR typeof(old.type) <> 'text'
                OR typeof(old.identifier) <> 'text' THEN 0
            WHEN json_valid(old.refs) THEN json_type(old.refs) = 'array'
            ELSE 0 END THEN old.refs ELSE '[]' END) AS element WHERE CASE WHEN element.type = 'array' THEN json_array_length(element.value) = 2
            AND json_type(element.value, '$[0]') IS 'text' AND json_type(element.value, '$[1]') IS 'text'
            ELSE 0 END);
        END;
        CREATE TRIGGER IF NOT EXISTS garage_reference_insert AFTER INSERT ON garage_object
        WHEN CASE WHEN new.refs = '[]' OR typeof(new.refs) <> 'text' OR typeof(new.type) <> 'text'
                OR typeof(new.identifier) <> 'text' THEN 0
            WHEN json_valid(new.refs) THEN json_type(new.refs) = 'array'
            ELSE 0 END
        BEGIN
            INSERT OR IGNORE INTO garage_reference (toType, toIdentifier, fromType, fromIdentifier)
            SELECT json_extract(element.value, '$[0]'), json_extract(element.value, '$[1]'), new.type, new.identifier FROM json_each(CASE WHEN CASE WHEN new.refs = '[]' OR typeof(new.refs) <> 'text' OR typeof(new.type) <> 'text'
                OR typeof(new.identifier) <> 'text' THEN 0
            WHEN json_valid(new.refs) THEN json_type(new.refs) = 'array'
            ELSE 0 END THEN new.refs ELSE '[]' END) AS element WHERE CASE WHEN element.type = 'array' THEN json_array_length(element.value) = 2
            AND json_type(element.value, '$[0]') IS 'text' AND json_type(element.value, '$[1]') IS 'text'
            ELSE 0 END;
        END;
        CREATE TRIGGER IF NOT EXISTS garage_reference_update AFTER UPDATE OF type, identifier, refs ON garage_object
        WHEN old.refs IS NOT new.refs OR old.type IS NOT new.type OR old.identifier IS NOT new.identifier
        BEGIN
            DELETE FROM garage_reference WHERE (toType, toIdentifier, fromType, fromIdentifier) IN
            (SELECT json_extract(element.value, '$[0]'), json_extract(element.value, '$[1]'), old.type, old.identifier FROM json_each(CASE WHEN CASE WHEN old.refs = '[]' OR typeof(old.refs) <> 'text' OR typeof(old.type) <> 'text'
                OR typeof(old.identifier) <> 'text' THEN 0
            WHEN json_valid(old.refs) THEN json_type(old.refs) = 'array'
            ELSE 0 END THEN old.refs ELSE '[]' END) AS element WHERE CASE WHEN element.type = 'array' THEN json_array_length(element.value) = 2
            AND json_type(element.value, '$[0]') IS 'text' AND json_type(element.value, '$[1]') IS 'text'
            ELSE 0 END);
            INSERT OR IGNORE INTO garage_reference (toType, toIdentifier, fromType, fromIdentifier)
            SELECT json_extract(element.value, '$[0]'), json_extract(element.value, '$[1]'), new.type, new.identifier FROM json_each(CASE WHEN CASE WHEN new.refs = '[]' OR typeof(new.refs) <> 'text' OR typeof(new.type) <> 'text'
                OR typeof(new.identifier) <> 'text' THEN 0
            WHEN json_valid(new.refs) THEN json_type(new.refs) = 'array'
            ELSE 0 END THEN new.refs ELSE '[]' END) AS element WHERE CASE WHEN element.type = 'array' THEN json_array_length(element.value) = 2
            AND json_type(element.value, '$[0]') IS 'text' AND json_type(element.value, '$[1]') IS 'text'
            ELSE 0 END;
        END;
        """

    private static let notSynced = SyncStatus.notSynced.rawValue
    private static let syncing = SyncStatus.syncing.rawValue
    private static let synced = SyncStatus.synced.rawValue

    /// The status a parked row gets (`parkedStatus`).
    private static let parkedStatus = """
        CASE
            WHEN ?9 THEN ?5
            WHEN isDeleted <> 0 THEN \(notSynced)
            WHEN ?5 IS NULL THEN syncStatus
            WHEN ?5 = \(syncing) AND claim IS NULL THEN \(notSynced)
            WHEN ?5 = \(synced) AND (data IS NOT excluded.data OR ?10 > 0) THEN \(notSynced)
            ELSE ?5
        END
        """

    /// A park, and a downloaded park (`parkSQL`).
    static let parkSQL = """
        INSERT INTO garage_object
            (type, identifier, data, isEncrypted, syncStatus, creationDate, modificationDate, revision, isRoot, refs,
             isRemote)
        VALUES (?1, ?2, ?3, ?4,
            CASE WHEN ?5 = \(syncing) AND NOT ?9 THEN \(notSynced)
                ELSE coalesce(?5, 0) END,
            ?6, ?6, 1 + ?10, ?7, ?8, coalesce(?5, 0) = \(synced))
        ON CONFLICT (type, identifier) DO UPDATE SET
            data = excluded.data,
            isEncrypted = excluded.isEncrypted,
            refs = excluded.refs,
            isRoot = max(isRoot, excluded.isRoot),
            referencesKnown = 1,
            syncStatus = \(parkedStatus),
            isRemote = isRemote OR (\(parkedStatus)) = \(synced),
            isDeleted = 0,
            attempts = CASE WHEN (data IS NOT excluded.data OR ?10 > 0) THEN 0 ELSE attempts END,
            retryAt = CASE WHEN (data IS NOT excluded.data OR ?10 > 0) THEN NULL ELSE retryAt END,
            revision = revision + (data IS NOT coalesce(?11, excluded.data)) + ?10,
            modificationDate = CASE WHEN (data IS NOT excluded.data OR ?10 > 0) THEN ?6 ELSE modificationDate END
        WHERE (data IS NOT excluded.data OR ?10 > 0) OR syncStatus IS NOT \(parkedStatus)
            OR isRoot < excluded.isRoot OR refs IS NOT excluded.refs OR referencesKnown = 0
        """

    let park: FloorContender.Statement
    /// A deletion: the tombstone (`tombstoneSQL` for one key), else the row goes.
    let tombstone: FloorContender.Statement
    let deleteLocalOnly: FloorContender.Statement
    /// `rowOrTombstoneSQL`: what ending a claim and a download read of each row.
    let rowOrTombstone: FloorContender.Statement
    /// `contentRowSQL`, for the checks.
    let liveRow: FloorContender.Statement
    let claimable: FloorContender.Statement
    let markClaimed: FloorContender.Statement
    let endClaim: FloorContender.Statement
    let purge: FloorContender.Statement
    let counts: FloorContender.Statement

    init(_ floor: FloorContender) throws {
        try floor.execute(Self.schema)
        park = try floor.prepare(Self.parkSQL)
        tombstone = try floor.prepare("""
            UPDATE garage_object
            SET isDeleted = 1, syncStatus = \(Self.notSynced), data = '', refs = '[]', isRoot = 0,
                isEncrypted = 0, revision = revision + 1, modificationDate = ?, attempts = 0, retryAt = NULL
            WHERE isRemote <> 0 AND isDeleted = 0 AND type = ? AND identifier = ?
            """)
        deleteLocalOnly = try floor.prepare("DELETE FROM garage_object WHERE type = ? AND identifier = ? AND isRemote = 0")
        rowOrTombstone = try floor.prepare("SELECT \(Self.columns) FROM garage_object WHERE type = ? AND identifier = ?")
        liveRow = try floor.prepare("""
            SELECT NULL, NULL, data, isEncrypted, syncStatus, NULL, NULL, NULL, NULL, refs, claim, NULL, 0
            FROM garage_object WHERE type = ? AND identifier = ? AND isDeleted = 0
            """)
        claimable = try floor.prepare("""
            SELECT \(Self.columns) FROM garage_object
            WHERE syncStatus = ? AND type = ? AND claim IS NULL AND (retryAt IS NULL OR retryAt <= ?) AND attempts < ?
            ORDER BY modificationDate LIMIT ? OFFSET ?
            """)
        markClaimed = try floor.prepare("""
            UPDATE garage_object SET syncStatus = ?, claim = ?, claimedAt = ?, isRemote = 1 WHERE type = ? AND identifier = ?
            """)
        endClaim = try floor.prepare("""
            UPDATE garage_object SET syncStatus = coalesce(?1, syncStatus), claim = NULL, claimedAt = NULL,
                attempts = CASE WHEN ?2 THEN 0 WHEN ?3 THEN attempts + 1 ELSE attempts END,
                retryAt = CASE WHEN ?2 THEN NULL WHEN ?3 THEN ?4 ELSE retryAt END,
                lastError = CASE WHEN ?2 THEN NULL WHEN ?3 THEN ?5 ELSE lastError END
            WHERE type = ?6 AND identifier = ?7
            """)
        purge = try floor.prepare("DELETE FROM garage_object WHERE type = ? AND identifier = ?")
        counts = try floor.prepare("""
            SELECT COUNT(*), COUNT(*) FILTER (WHERE isDeleted <> 0),
                COUNT(*) FILTER (WHERE isDeleted = 0 AND syncStatus = \(Self.notSynced)),
                COUNT(*) FILTER (WHERE isDeleted = 0 AND syncStatus = \(Self.synced)),
                COUNT(*) FILTER (WHERE claim IS NOT NULL)
            FROM garage_object
            """)
    }

    func finalize() {
        for statement in [park, tombstone, deleteLocalOnly, rowOrTombstone, liveRow, claimable, markClaimed,
                          endClaim, purge, counts] {
            statement.finalize()
        }
    }
}

extension FloorContender {
    /// GarageLite's `maximumUploadAttempts`, by default: claims skip a row that failed this often.
    private static let maximumUploadAttempts = 10

    // The columns of `SyncStatements.columns`.
    private static let identifierColumn: Int32 = 1
    private static let dataColumn: Int32 = 2
    private static let statusColumn: Int32 = 4
    private static let revisionColumn: Int32 = 7
    private static let claimColumn: Int32 = 10
    private static let isDeletedColumn: Int32 = 12

    private func sync() throws -> SyncStatements {
        if let syncStatements { return syncStatements }
        let statements = try SyncStatements(self)
        syncStatements = statements
        return statements
    }

    func parkAllForSync(_ people: [BenchPerson]) throws {
        let sync = try sync()
        try transaction {
            let now = Date().timeIntervalSince1970
            for person in people {
                try park(sync, person, data: encoder.encode(person), status: person.syncStatus, downloaded: false, at: now)
            }
        }
    }

    func delete(ids: [String]) throws {
        let sync = try sync()
        try transaction {
            let now = Date().timeIntervalSince1970
            for id in ids {
                let t = sync.tombstone.handle
                sqlite3_bind_double(t, 1, now)
                sqlite3_bind_text(t, 2, personType, -1, sqliteTransient)
                sqlite3_bind_text(t, 3, id, -1, sqliteTransient)
                try run(t)
                if sqlite3_changes(db) > 0 { continue }
                let d = sync.deleteLocalOnly.handle
                sqlite3_bind_text(d, 1, personType, -1, sqliteTransient)
                sqlite3_bind_text(d, 2, id, -1, sqliteTransient)
                try run(d)
                guard sqlite3_changes(db) > 0 else { throw BenchFailure("floor: \(id) not found to delete") }
            }
        }
    }

    func claimAndCompleteWithDeletions(limit: Int) throws -> ClaimCounts {
        let sync = try sync()
        let claimID = UUID().uuidString
        let date = Date().timeIntervalSince1970
        var counts = ClaimCounts()
        // Claim: one write transaction selects the oldest rows to sync with their revision,
        // decodes the objects for the upload, and marks every row claimed; it selects again
        // until the batch is full or nothing is left, as GarageLite's claim does.
        let claimed: [(id: String, revision: Int64, isDeleted: Bool)] = try transaction {
            var rows: [(id: String, revision: Int64, isDeleted: Bool)] = []
            var objects: [BenchPerson] = []
            while rows.count < limit {
                let s = sync.claimable.handle
                sqlite3_bind_int64(s, 1, Int64(SyncStatus.notSynced.rawValue))
                sqlite3_bind_text(s, 2, personType, -1, sqliteTransient)
                sqlite3_bind_double(s, 3, date)
                sqlite3_bind_int64(s, 4, Int64(Self.maximumUploadAttempts))
                sqlite3_bind_int64(s, 5, Int64(limit - rows.count))
                sqlite3_bind_int64(s, 6, 0) // no row failed to decode
                let before = rows.count
                do {
                    defer { sqlite3_reset(s) }
                    while try step(s) {
                        let isDeleted = sqlite3_column_int64(s, Self.isDeletedColumn) != 0
                        rows.append((String(cString: sqlite3_column_text(s, Self.identifierColumn)),
                                     sqlite3_column_int64(s, Self.revisionColumn), isDeleted))
                        if !isDeleted {
                            var object = try decoder.decode(BenchPerson.self, from: columnData(s, Self.dataColumn))
                            object.syncStatus = .syncing
                            objects.append(object)
                        }
                    }
                }
                if rows.count == before { break }
                let u = sync.markClaimed.handle
                for row in rows[before...] {
                    sqlite3_bind_int64(u, 1, Int64(SyncStatus.syncing.rawValue))
                    sqlite3_bind_text(u, 2, claimID, -1, sqliteTransient)
                    sqlite3_bind_double(u, 3, date)
                    sqlite3_bind_text(u, 4, personType, -1, sqliteTransient)
                    sqlite3_bind_text(u, 5, row.id, -1, sqliteTransient)
                    try run(u)
                }
            }
            counts.objects = objects.count
            counts.tags = objects.reduce(0) { $0 + $1.tags.count }
            counts.deletions = rows.count - objects.count
            return rows
        }
        if claimed.isEmpty { return counts }
        // Complete: another write transaction reads each row, and where it is still under the
        // claim, purges a tombstone whose revision is unchanged, or ends the claim: `.synced`
        // where the revision is unchanged, `.notSynced` otherwise.
        try transaction {
            for row in claimed {
                let r = sync.rowOrTombstone.handle
                sqlite3_bind_text(r, 1, personType, -1, sqliteTransient)
                sqlite3_bind_text(r, 2, row.id, -1, sqliteTransient)
                let status: SyncStatus
                let isDeleted: Bool
                do {
                    defer { sqlite3_reset(r) }
                    guard try step(r) else { continue } // deleted meanwhile
                    guard let claim = sqlite3_column_text(r, Self.claimColumn),
                          String(cString: claim) == claimID else { continue } // lost
                    status = sqlite3_column_int64(r, Self.revisionColumn) == row.revision ? .synced : .notSynced
                    isDeleted = sqlite3_column_int64(r, Self.isDeletedColumn) != 0
                }
                if isDeleted, status == .synced {
                    let p = sync.purge.handle
                    sqlite3_bind_text(p, 1, personType, -1, sqliteTransient)
                    sqlite3_bind_text(p, 2, row.id, -1, sqliteTransient)
                    try run(p)
                    counts.deletionsUploaded += 1
                    continue
                }
                let u = sync.endClaim.handle
                sqlite3_bind_int64(u, 1, Int64(status.rawValue))
                sqlite3_bind_int64(u, 2, 1) // completed
                sqlite3_bind_int64(u, 3, 0) // no failure
                sqlite3_bind_null(u, 4)
                sqlite3_bind_null(u, 5)
                sqlite3_bind_text(u, 6, personType, -1, sqliteTransient)
                sqlite3_bind_text(u, 7, row.id, -1, sqliteTransient)
                try run(u)
                if status == .synced { counts.synced += 1 }
            }
        }
        return counts
    }

    func parkDownloaded(_ people: [BenchPerson]) throws -> DownloadCounts {
        let sync = try sync()
        // Encoded before the transaction, every object, as GarageLite does.
        let encoded = try people.map { person in
            var person = person
            person.syncStatus = .synced
            return try encoder.encode(person)
        }
        return try transaction {
            // Every decision on the store as it was: read each row (or tombstone); a local
            // edit (.notSynced, which a tombstone is, or claimed) is a conflict, kept.
            var counts = DownloadCounts()
            var toWrite: [Int] = []
            toWrite.reserveCapacity(people.count)
            let r = sync.rowOrTombstone.handle
            for (index, person) in people.enumerated() {
                sqlite3_bind_text(r, 1, personType, -1, sqliteTransient)
                sqlite3_bind_text(r, 2, person.id, -1, sqliteTransient)
                defer { sqlite3_reset(r) }
                if try step(r), sqlite3_column_int64(r, Self.statusColumn) == Int64(SyncStatus.notSynced.rawValue)
                    || sqlite3_column_type(r, Self.claimColumn) != SQLITE_NULL {
                    counts.keptLocal += 1
                } else {
                    toWrite.append(index)
                }
            }
            let now = Date().timeIntervalSince1970
            for index in toWrite {
                try park(sync, people[index], data: encoded[index], status: .synced, downloaded: true, at: now)
            }
            counts.applied = toWrite.count
            return counts
        }
    }

    func retrieveForSync(id: String) throws -> BenchPerson? {
        let s = try sync().liveRow.handle
        defer { sqlite3_reset(s) }
        sqlite3_bind_text(s, 1, personType, -1, sqliteTransient)
        sqlite3_bind_text(s, 2, id, -1, sqliteTransient)
        guard try step(s) else { return nil }
        var person = try decoder.decode(BenchPerson.self, from: columnData(s, Self.dataColumn))
        person.syncStatus = SyncStatus(rawValue: Int(sqlite3_column_int64(s, Self.statusColumn))) ?? .undetermined
        return person
    }

    func syncCounts() throws -> SyncCounts {
        let s = try sync().counts.handle
        defer { sqlite3_reset(s) }
        guard try step(s) else { throw BenchFailure("floor: no counts") }
        func column(_ index: Int32) -> Int { Int(sqlite3_column_int64(s, index)) }
        return SyncCounts(rows: column(0), tombstones: column(1), notSynced: column(2), synced: column(3),
                          claimed: column(4))
    }

    /// GarageLite's park of one root object without references (`SQLiteConnection.park`).
    private func park(_ sync: SyncStatements, _ person: BenchPerson, data: Data, status: SyncStatus,
                      downloaded: Bool, at date: Double) throws {
        let s = sync.park.handle
        sqlite3_bind_text(s, 1, personType, -1, sqliteTransient)
        sqlite3_bind_text(s, 2, person.id, -1, sqliteTransient)
        data.withUnsafeBytes { bytes in
            _ = sqlite3_bind_text(s, 3, bytes.baseAddress?.assumingMemoryBound(to: CChar.self),
                                  Int32(bytes.count), sqliteTransient)
        }
        sqlite3_bind_int64(s, 4, 0) // not encrypted
        sqlite3_bind_int64(s, 5, Int64(status.rawValue))
        sqlite3_bind_double(s, 6, date)
        sqlite3_bind_int64(s, 7, 1) // a root
        sqlite3_bind_text(s, 8, "[]", -1, sqliteTransient)
        sqlite3_bind_int64(s, 9, downloaded ? 1 : 0)
        sqlite3_bind_int64(s, 10, 0) // one park: nothing folded
        sqlite3_bind_null(s, 11)
        try run(s)
    }
}
