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

    /// The upsert of `row`.
    static func upsert(into objects: String, _ row: StoredRow) -> PostgresQuery {
        """
        INSERT INTO \(unescaped: objects) (type, identifier, data, is_encrypted, sync_status, creation_date,
            modification_date, revision, is_root, refs, claim, claimed_at, is_deleted, is_remote, attempts, last_error,
            retry_at, base, server_version, references_known)
        VALUES (\(row.key.typeName), \(row.key.identifier), \(row.data), \(row.isEncrypted),
            \(Int64(row.syncStatus.rawValue)), \(row.creationDate.timeIntervalSince1970),
            \(row.modificationDate.timeIntervalSince1970), \(row.revision), \(row.isRoot), \(row.references),
            \(row.claim), \(row.claimedAt?.timeIntervalSince1970), \(row.isDeleted), \(row.isRemote), \(row.attempts),
            \(row.lastError), \(row.retryAt?.timeIntervalSince1970), \(row.base), \(row.serverVersion), true)
        \(unescaped: onConflict)
        """
    }

    /// The upsert of `rows` (distinct keys), in one statement.
    static func upsert(into objects: String, _ rows: [StoredRow]) throws -> PostgresQuery {
        let json = String(decoding: try JSONEncoder().encode(rows.map(UpsertRecord.init)), as: UTF8.self)
        return """
            INSERT INTO \(unescaped: objects) (\(unescaped: UpsertRecord.columns))
            SELECT \(unescaped: UpsertRecord.columns) FROM json_populate_recordset(NULL::\(unescaped: objects), \(json)::json)
            \(unescaped: onConflict)
            """
    }

    private static let onConflict = """
        ON CONFLICT (type, identifier) DO UPDATE SET
            data = excluded.data, is_encrypted = excluded.is_encrypted, sync_status = excluded.sync_status,
            creation_date = excluded.creation_date, modification_date = excluded.modification_date,
            revision = excluded.revision, is_root = excluded.is_root, refs = excluded.refs, claim = excluded.claim,
            claimed_at = excluded.claimed_at, is_deleted = excluded.is_deleted, is_remote = excluded.is_remote,
            attempts = excluded.attempts, last_error = excluded.last_error, retry_at = excluded.retry_at,
            base = excluded.base, server_version = excluded.server_version, references_known = true
        """

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

    func renameType(from: String, to: String, reseal: RowResealer?) throws -> Int {
        // The rules' way, which any engine can take: each row of `from` is stored under `to`
        // (replacing the row of `to` with its identifier, but for a tombstone over a live object), then
        // the references to them are rewritten.
        var moved = 0
        for row in try everyRow(ofType: from) {
            let newKey = ObjectKey(typeName: to, identifier: row.key.identifier)
            var renamed = row
            renamed.key = newKey
            if let reseal, row.isEncrypted, !row.data.isEmpty {
                do {
                    renamed.data = try reseal.reseal(row.data, row.key, newKey)
                } catch {
                    throw GarageError.decryptionFailed(
                        typeName: from, identifier: row.key.identifier,
                        reason: "it can't be re-encrypted for its new type \(to), so no \(from) was moved (\(error)); "
                            + "delete it, or park it again, then move the others")
                }
                renamed.base = row.base.flatMap { try? reseal.reseal($0, row.key, newKey) }
            }
            if row.isDeleted, let existing = try record(newKey)?.get(), !existing.isDeleted {
                // A tombstone of the old type doesn't replace a live object of the new one: it goes.
                try purge(row.key)
                continue
            }
            try purge(row.key)
            try purge(newKey)
            try putRow(renamed)
            moved += 1
        }
        wrote()
        let needle = "\"\(from)\""
        for row in try run("""
            SELECT type, identifier, refs FROM \(unescaped: objects) WHERE strpos(refs, \(needle)) > 0
            """).rows {
            let (type, identifier, refs) = try row.decode((String, String, String).self)
            guard let keys = try? ReferenceList.decode(refs) else { continue }
            let renamed = keys.map { $0.typeName == from ? ObjectKey(typeName: to, identifier: $0.identifier) : $0 }
            try run("""
                UPDATE \(unescaped: objects) SET refs = \(ReferenceList.encode(renamed))
                WHERE type = \(type) AND identifier = \(identifier)
                """)
        }
        return moved
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
        let found = try readRows("""
            SELECT \(unescaped: Self.columns) FROM \(unescaped: objects)
            WHERE (type, identifier) IN (SELECT * FROM unnest(\(unknown.map(\.typeName))::text[], \(unknown.map(\.identifier))::text[]))
            ORDER BY type, identifier FOR UPDATE
            """).map { try $0.get() }
        for key in unknown { wrote(key, .some(nil)) }
        for row in found { wrote(row.key, .some(row)) }
    }
}

/// A row as `json_populate_recordset` reads it: the object table's columns by name.
private struct UpsertRecord: Encodable {
    static let columns = """
        type, identifier, data, is_encrypted, sync_status, creation_date, modification_date, revision, is_root, refs, \
        claim, claimed_at, is_deleted, is_remote, attempts, last_error, retry_at, base, server_version, references_known
        """

    var type: String
    var identifier: String
    var data: String
    var is_encrypted: Bool
    var sync_status: Int
    var creation_date: Double
    var modification_date: Double
    var revision: Int64
    var is_root: Bool
    var refs: String
    var claim: String?
    var claimed_at: Double?
    var is_deleted: Bool
    var is_remote: Bool
    var attempts: Int64
    var last_error: String?
    var retry_at: Double?
    var base: String?
    var server_version: String?
    var references_known = true

    init(_ row: StoredRow) {
        type = row.key.typeName
        identifier = row.key.identifier
        data = row.data
        is_encrypted = row.isEncrypted
        sync_status = row.syncStatus.rawValue
        creation_date = row.creationDate.timeIntervalSince1970
        modification_date = row.modificationDate.timeIntervalSince1970
        revision = row.revision
        is_root = row.isRoot
        refs = row.references
        claim = row.claim
        claimed_at = row.claimedAt?.timeIntervalSince1970
        is_deleted = row.isDeleted
        is_remote = row.isRemote
        attempts = row.attempts
        last_error = row.lastError
        retry_at = row.retryAt?.timeIntervalSince1970
        base = row.base
        server_version = row.serverVersion
    }

    /// `nil` as JSON's `null` (the synthesized encoding leaves the key out, which reads as NULL too).
    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(type, forKey: .type)
        try container.encode(identifier, forKey: .identifier)
        try container.encode(data, forKey: .data)
        try container.encode(is_encrypted, forKey: .is_encrypted)
        try container.encode(sync_status, forKey: .sync_status)
        try container.encode(creation_date, forKey: .creation_date)
        try container.encode(modification_date, forKey: .modification_date)
        try container.encode(revision, forKey: .revision)
        try container.encode(is_root, forKey: .is_root)
        try container.encode(refs, forKey: .refs)
        try container.encode(claim, forKey: .claim)
        try container.encode(claimed_at, forKey: .claimed_at)
        try container.encode(is_deleted, forKey: .is_deleted)
        try container.encode(is_remote, forKey: .is_remote)
        try container.encode(attempts, forKey: .attempts)
        try container.encode(last_error, forKey: .last_error)
        try container.encode(retry_at, forKey: .retry_at)
        try container.encode(base, forKey: .base)
        try container.encode(server_version, forKey: .server_version)
        try container.encode(references_known, forKey: .references_known)
    }

    private enum CodingKeys: String, CodingKey {
        case type, identifier, data, is_encrypted, sync_status, creation_date, modification_date, revision, is_root, refs
        case claim, claimed_at, is_deleted, is_remote, attempts, last_error, retry_at, base, server_version, references_known
    }
}
