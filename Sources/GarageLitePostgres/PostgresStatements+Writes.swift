import Foundation
import GarageLite
import PostgresNIO

// The statements that write rows and facts. The rules' writes (park, delete, statuses, claims'
// ends, releases) are ``RowWriteStatements``' defaults, on `record` and `putRow` below.
extension PostgresStatements {
    /// Stored with the transaction's next rows in one upsert (``buffer(_:)``). The encryption
    /// guard, an `AFTER` trigger, sees an insert or an update as it is, as SQLite's
    /// update-else-insert shows it its triggers.
    func putRow(_ row: StoredRow) throws {
        try buffer(row)
        wrote(row.key, .some(row))
    }

    /// The columns ``PostgresStatement/upsert`` writes, and their types.
    static let upsertColumns: [(name: String, type: String)] = [
        ("type", "text"), ("identifier", "text"), ("data", "text"), ("is_encrypted", "bool"), ("sync_status", "int8"),
        ("creation_date", "float8"), ("modification_date", "float8"), ("revision", "int8"), ("is_root", "bool"),
        ("refs", "text"), ("claim", "text"), ("claimed_at", "float8"), ("is_deleted", "bool"), ("is_remote", "bool"),
        ("attempts", "int8"), ("last_error", "text"), ("retry_at", "float8"), ("base", "text"), ("server_version", "text"),
        ("references_known", "bool"),
    ]

    /// The columns ``PostgresStatement/updateStatuses`` writes (after the key), and their types.
    static let statusColumns: [(name: String, type: String)] = [
        ("type", "text"), ("identifier", "text"), ("sync_status", "int8"), ("claim", "text"), ("claimed_at", "float8"),
        ("attempts", "int8"), ("last_error", "text"), ("retry_at", "float8"), ("base", "text"), ("server_version", "text"),
        ("is_remote", "bool"),
    ]

    /// The parameters of ``PostgresStatement/updateStatuses`` for `rows`: one array a column.
    static func statusBinds(_ rows: [StoredRow]) -> [PostgresData] {
        [
            PostgresArray.texts(rows.map(\.key.typeName)), PostgresArray.texts(rows.map(\.key.identifier)),
            PostgresArray.int8s(rows.map { Int64($0.syncStatus.rawValue) }), PostgresArray.texts(rows.map(\.claim)),
            PostgresArray.float8s(rows.map { $0.claimedAt?.timeIntervalSince1970 }), PostgresArray.int8s(rows.map(\.attempts)),
            PostgresArray.texts(rows.map(\.lastError)), PostgresArray.float8s(rows.map { $0.retryAt?.timeIntervalSince1970 }),
            PostgresArray.texts(rows.map(\.base)), PostgresArray.texts(rows.map(\.serverVersion)),
            PostgresArray.bools(rows.map(\.isRemote)),
        ]
    }

    /// The parameters of ``PostgresStatement/upsert`` for `rows`: one array a column.
    static func upsertBinds(_ rows: [StoredRow]) -> [PostgresData] {
        [
            PostgresArray.texts(rows.map(\.key.typeName)), PostgresArray.texts(rows.map(\.key.identifier)),
            PostgresArray.texts(rows.map(\.data)), PostgresArray.bools(rows.map(\.isEncrypted)),
            PostgresArray.int8s(rows.map { Int64($0.syncStatus.rawValue) }),
            PostgresArray.float8s(rows.map(\.creationDate.timeIntervalSince1970)),
            PostgresArray.float8s(rows.map(\.modificationDate.timeIntervalSince1970)),
            PostgresArray.int8s(rows.map(\.revision)), PostgresArray.bools(rows.map(\.isRoot)),
            PostgresArray.texts(rows.map(\.references)), PostgresArray.texts(rows.map(\.claim)),
            PostgresArray.float8s(rows.map { $0.claimedAt?.timeIntervalSince1970 }),
            PostgresArray.bools(rows.map(\.isDeleted)), PostgresArray.bools(rows.map(\.isRemote)),
            PostgresArray.int8s(rows.map(\.attempts)), PostgresArray.texts(rows.map(\.lastError)),
            PostgresArray.float8s(rows.map { $0.retryAt?.timeIntervalSince1970 }), PostgresArray.texts(rows.map(\.base)),
            PostgresArray.texts(rows.map(\.serverVersion)), PostgresArray.bools(rows.map(\.referencesKnown)),
        ]
    }

    @discardableResult
    func purge(_ key: ObjectKey) throws -> Bool {
        if let locked = lockedRow(key) {
            // Known: no need to wait for the count.
            try send("DELETE FROM \(unescaped: objects) WHERE type = \(key.typeName) AND identifier = \(key.identifier)")
            wrote(key, .some(nil))
            return locked != nil
        }
        defer { wrote(key, .some(nil)) }
        return try changes("DELETE FROM \(unescaped: objects) WHERE type = \(key.typeName) AND identifier = \(key.identifier)") > 0
    }

    @discardableResult
    func insertImported(_ key: ObjectKey, _ row: ImportedRow) throws -> Bool {
        wrote(key)
        return try changes("""
            INSERT INTO \(unescaped: objects) (type, identifier, data, is_encrypted, sync_status, creation_date,
                modification_date, revision, is_root, refs, is_remote, references_known)
            VALUES (\(key.typeName), \(key.identifier), \(row.data), \(row.isEncrypted), \(Int64(row.syncStatus.rawValue)),
                \(row.creationDate.timeIntervalSince1970), \(row.modificationDate.timeIntervalSince1970), 1, true,
                \(row.references), \(row.isRemote), false)
            ON CONFLICT (type, identifier) DO NOTHING
            """) > 0
    }

    @discardableResult
    func insertRecord(_ key: ObjectKey, _ row: StoredRow) throws -> Bool {
        wrote(key)
        return try changes("""
            INSERT INTO \(unescaped: objects) (type, identifier, data, is_encrypted, sync_status, creation_date,
                modification_date, revision, is_root, refs, is_deleted, is_remote, attempts, last_error, retry_at, base,
                server_version, references_known)
            VALUES (\(key.typeName), \(key.identifier), \(row.data), \(row.isEncrypted), \(Int64(row.syncStatus.rawValue)),
                \(row.creationDate.timeIntervalSince1970), \(row.modificationDate.timeIntervalSince1970), \(row.revision),
                \(row.isRoot), \(row.references), \(row.isDeleted), \(row.isRemote), \(row.attempts), \(row.lastError),
                \(row.retryAt?.timeIntervalSince1970), \(row.base), \(row.serverVersion), true)
            ON CONFLICT (type, identifier) DO NOTHING
            """) > 0
    }

    func deleteAll(ofType type: String?, now: Date) throws -> Int {
        guard let type else {
            wrote()
            return try changes("DELETE FROM \(unescaped: objects)")
        }
        return try deleteAllByRule(ofType: type, now: now)
    }

    func forgetAttempts(ofType type: String, identifiers: [String]?) throws -> Int {
        wrote()
        guard let identifiers else {
            return try changes("""
                UPDATE \(unescaped: objects) SET attempts = 0, retry_at = NULL
                WHERE type = \(type) AND (attempts > 0 OR retry_at IS NOT NULL)
                """)
        }
        return try changes("""
            UPDATE \(unescaped: objects) SET attempts = 0, retry_at = NULL
            WHERE type = \(type) AND identifier = ANY(\(identifiers)) AND (attempts > 0 OR retry_at IS NOT NULL)
            """)
    }

    // MARK: - Encryption

    func rows(encrypted: Bool, after key: ObjectKey?, limit: Int) throws -> [(key: ObjectKey, data: String, base: String?)] {
        try run("""
            SELECT type, identifier, data, base FROM \(unescaped: objects)
            WHERE (type, identifier) > (\(key?.typeName ?? ""), \(key?.identifier ?? "")) AND is_encrypted = \(encrypted)
                AND data <> ''
            ORDER BY type, identifier LIMIT \(Int64(limit))
            """).rows.map { row in
            let (type, identifier, data, base) = try row.decode((String, String, String, String?).self)
            return (ObjectKey(typeName: type, identifier: identifier), data, base)
        }
    }

    func countRows(encrypted: Bool) throws -> Int {
        guard let row = try run("""
            SELECT count(*) FROM \(unescaped: objects) WHERE is_encrypted = \(encrypted) AND data <> ''
            """).rows.first else { return 0 }
        return Int(try row.decode(Int64.self))
    }

    @discardableResult
    func replaceData(of key: ObjectKey, previous: String, with data: String, base: String?, isEncrypted: Bool) throws -> Bool {
        wrote(key)
        return try changes("""
            UPDATE \(unescaped: objects) SET data = \(data), base = \(base), is_encrypted = \(isEncrypted)
            WHERE type = \(key.typeName) AND identifier = \(key.identifier) AND data = \(previous)
            """) > 0
    }

    // MARK: - Erasing what the rewrites replaced (ErasesFreedContent)

    /// PostgreSQL has no setting that overwrites what a write frees: an update leaves the row's
    /// old version in the table's pages, and its index entries in the indexes', until they are
    /// rewritten. ``compactAndTruncateLog()`` rewrites them.
    func setErasesFreedContent(_ erases: Bool) throws -> Bool {
        false
    }

    /// `VACUUM (FULL, ANALYZE)` of the object table: PostgreSQL writes the table's live rows
    /// into new files, with its TOAST table (the long data), rebuilds its indexes, and drops
    /// the old files, so that no earlier version of a row, nor an index entry of one, is left
    /// in them; `ANALYZE` replaces the statistics, which sample the column's values. Plain
    /// `VACUUM` only marks the old versions' space as free, and leaves their bytes there.
    ///
    /// It holds the table's `ACCESS EXCLUSIVE` lock while it runs (every garage on the schema
    /// waits), and waits for it up to the lock timeout (the busy timeout, then
    /// ``GarageError/storeBusy(operation:path:)``: call again). A row version that a transaction
    /// open since before the rewrite may still read is copied, not dropped: a `VACUUM FULL` once
    /// it ended drops it. PostgreSQL's write-ahead log is the server's: it keeps the old
    /// versions until it recycles its segments (after checkpoints; what archives, replicas and
    /// base backups keep is theirs), so this returns `false`.
    ///
    /// - throws: ``GarageError/storageFailure(operation:reason:)`` when PostgreSQL skipped the
    ///   table (it vacuums a table for its owner, the database's or a superuser only, and says
    ///   so in a warning alone).
    func compactAndTruncateLog() throws -> Bool {
        let before = try relationFile()
        // As long as copying the table takes (a day at most): not an ordinary answer's deadline.
        try run(PostgresQuery(unsafeSQL: "VACUUM (FULL, ANALYZE) \(objects)"), deadline: 86_400)
        guard try relationFile() != before else {
            throw GarageError.storageFailure(
                operation: "erase the data the rewrite replaced (VACUUM FULL \(objects))",
                reason: "PostgreSQL skipped the table: it vacuums a table for its owner, the database's owner or a superuser "
                    + "only, and this garage's role is none of them; the rows are rewritten, and their earlier versions stay "
                    + "in the table's files until one of those runs VACUUM FULL \(objects)")
        }
        return false
    }

    /// The file node of the object table: VACUUM FULL gives it new files.
    private func relationFile() throws -> Int64 {
        guard let row = try run(PostgresQuery(unsafeSQL: "SELECT pg_relation_filenode('\(objects)'::regclass)::bigint"))
            .rows.first else { return 0 }
        return try row.decode(Int64?.self) ?? 0
    }

    // MARK: - Facts

    @discardableResult
    func replaceMetadata(_ name: String, previous: String?, with value: String?) throws -> Bool {
        switch (previous, value) {
        case (nil, nil):
            return try metadata(name) == nil
        case let (nil, value?):
            return try changes("INSERT INTO \(unescaped: facts) (name, value) VALUES (\(name), \(value)) ON CONFLICT DO NOTHING") > 0
        case let (previous?, nil):
            return try changes("DELETE FROM \(unescaped: facts) WHERE name = \(name) AND value = \(previous)") > 0
        case let (previous?, value?):
            return try changes("UPDATE \(unescaped: facts) SET value = \(value) WHERE name = \(name) AND value = \(previous)") > 0
        }
    }

    func setMetadata(_ name: String, _ value: String) throws {
        try run("""
            INSERT INTO \(unescaped: facts) (name, value) VALUES (\(name), \(value))
            ON CONFLICT (name) DO UPDATE SET value = excluded.value
            """)
    }

    func setEncryptionCount(_ count: Int64) throws {
        try setMetadata("encryptions", String(count))
    }

    func setEncryptionGuard(_ guard: EncryptionGuard) throws {
        try execute(PostgresSchema.encryptionGuard(`guard`, schema: schema))
        if `guard`.current == nil {
            try run("DELETE FROM \(unescaped: facts) WHERE name = 'encryptions'")
        }
    }
}

// Parks in batches: the batch's rows read at once, the rules applied, the rows written with
// one statement (``PostgresStatements/buffer(_:)``), sent without waiting.
extension PostgresStatements {
    func park(_ rows: [(key: ObjectKey, payload: RowPayload)], now: Date) throws -> [Bool] {
        try prepareToWrite(rows.map(\.key))
        return try rows.map { try parkByRule($0.key, $0.payload, now: now) }
    }

    /// Reads and locks the rows of `keys` this transaction doesn't know yet, in one statement,
    /// in key order: the rules' reads of them that follow cost nothing, and two transactions that
    /// lock rows so (a batch of parks, a claim's end) can't wait for each other in a cycle.
    func prepareToWrite(_ keys: [ObjectKey]) throws {
        guard keys.count > 1, isInTransaction, writes else { return }
        let unknown = keys.filter { lockedRow($0) == nil }
        guard !unknown.isEmpty else { return }
        let found = try readRows(.lockRows, [PostgresArray.texts(unknown.map(\.typeName)),
                                              PostgresArray.texts(unknown.map(\.identifier))]).map { try $0.get() }
        for key in unknown { wrote(key, .some(nil)) }
        for row in found { wrote(row.key, .some(row)) }
    }
}

// Claims' ends without reads.
extension PostgresStatements {
    /// One statement (``PostgresStatement/endClaimsIfUnchanged``), which takes the schema's
    /// lock shared, as ``claimEndTransaction(_:)`` does, and commits alone. A claim's end in a
    /// transaction already open (none the store runs) reads its rows instead.
    func endClaimsIfUnchanged(_ rows: [StoredRow]) throws -> Set<ObjectKey> {
        guard !isInTransaction, !rows.isEmpty else { return [] }
        var stamps: [Int64] = []
        for row in rows {
            guard let stamp = row.rowVersion else { return [] }
            stamps.append(stamp)
        }
        let ended = try run(.endClaimsIfUnchanged, Self.statusBinds(rows) + [
            PostgresArray.int8s(stamps), PostgresData(string: PostgresSchema.lockName(schema))])
        return try Set(ended.map { row in
            var cells = Cells(row)
            return ObjectKey(typeName: rows[0].key.typeName, identifier: try cells.text())
        })
    }
}
