import Foundation
import GarageLite
import PostgresNIO

// The statements that write rows and facts. The rules' writes (park, delete, statuses, claims'
// ends, releases) are ``RowWriteStatements``' defaults, on `record` and `putRow` below.
extension PostgresStatements {
    /// One upsert, sent without waiting (``send(_:)``). The encryption guard, an `AFTER` trigger,
    /// sees an insert or an update as it is, as SQLite's update-else-insert shows it its triggers.
    func putRow(_ row: StoredRow) throws {
        try send("""
            INSERT INTO \(unescaped: objects) (type, identifier, data, is_encrypted, sync_status, creation_date,
                modification_date, revision, is_root, refs, claim, claimed_at, is_deleted, is_remote, attempts, last_error,
                retry_at, base, server_version, references_known)
            VALUES (\(row.key.typeName), \(row.key.identifier), \(row.data), \(row.isEncrypted),
                \(Int64(row.syncStatus.rawValue)), \(row.creationDate.timeIntervalSince1970),
                \(row.modificationDate.timeIntervalSince1970), \(row.revision), \(row.isRoot), \(row.references),
                \(row.claim), \(row.claimedAt?.timeIntervalSince1970), \(row.isDeleted), \(row.isRemote), \(row.attempts),
                \(row.lastError), \(row.retryAt?.timeIntervalSince1970), \(row.base), \(row.serverVersion), true)
            ON CONFLICT (type, identifier) DO UPDATE SET
                data = excluded.data, is_encrypted = excluded.is_encrypted, sync_status = excluded.sync_status,
                creation_date = excluded.creation_date, modification_date = excluded.modification_date,
                revision = excluded.revision, is_root = excluded.is_root, refs = excluded.refs, claim = excluded.claim,
                claimed_at = excluded.claimed_at, is_deleted = excluded.is_deleted, is_remote = excluded.is_remote,
                attempts = excluded.attempts, last_error = excluded.last_error, retry_at = excluded.retry_at,
                base = excluded.base, server_version = excluded.server_version, references_known = true
            """)
        wrote(row.key, .some(row))
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
