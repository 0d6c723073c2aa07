import Foundation
import GRDB
import GarageLiteCore

/// The file format: the object table, its index, and the migrations between versions.
///
/// A store records its format version in SQLite's `user_version` and marks itself as a
/// GarageLite store with SQLite's `application_id`. Opening a store runs the migrations it
/// lacks, all in one immediate transaction, so that two processes opening a new file at the
/// same time cannot both create the schema (``Store/open(path:busyTimeout:)`` also retries the
/// switch to WAL mode, which SQLite does not wait for).
package enum Schema {
    /// The format version this version of GarageLite writes, and the newest it reads.
    package static let formatVersion = 6

    /// `"GarL"`, in SQLite's `application_id` header field.
    package static let applicationID: Int32 = 0x4761_724C

    /// A step that takes a store from the previous format version to `version`.
    package typealias Migration = (version: Int, migrate: @Sendable (Database) throws -> Void)

    /// Each migration takes a store from the previous version to its own, in order. A new
    /// format version appends its migration here and raises ``formatVersion`` to match
    /// (`SchemaMigrationTests` checks both); the golden files in `Fixtures/` prove that the
    /// stores of every earlier version still open.
    package static let migrations: [Migration] = [
        (1, createVersion1),
        (2, addTombstones),
        (3, addReferenceIndex),
        (4, addMetadata),
        (5, addDeletedToSyncIndex),
        (6, addSyncColumns),
    ]

    private static func createVersion1(_ db: Database) throws {
        // `claim` and `claimedAt` belong to sync jobs: the claim that holds the row, and when
        // it was taken. The sync index serves "rows of type T with status S, oldest change
        // first" and "counts per type for status S" as range scans; the claim index holds only
        // claimed rows, so finding stale claims costs what there is to find.
        try db.execute(sql: """
            CREATE TABLE garage_object (
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
                PRIMARY KEY (type, identifier)
            );
            CREATE INDEX garage_object_sync ON garage_object (syncStatus, type, modificationDate);
            CREATE INDEX garage_object_claim ON garage_object (claimedAt) WHERE claim IS NOT NULL;
            """)
    }

    /// Version 2: deletions a sync job must upload, and uploads that keep failing.
    ///
    /// `isDeleted` marks a tombstone, the row of an object deleted after a copy may have
    /// reached the server (which `isRemote` says: the row was once claimed, or once `.synced`).
    /// Every read but a claim's skips tombstones; a claim hands them to its job as deletions,
    /// and completing it purges them. `attempts` counts the failed uploads since the row last
    /// changed or synced, `retryAt` holds it back from claims until then, `lastError` says why
    /// the last one failed; a row with too many attempts is held.
    ///
    /// A version 1 row can't tell whether it was ever uploaded (an edited one is `.notSynced`
    /// again), so every row with a sync status counts as maybe on the server: deleting one
    /// that never was makes a job upload a deletion the server can ignore, which is better
    /// than a deletion never uploaded.
    private static func addTombstones(_ db: Database) throws {
        try db.execute(sql: """
            ALTER TABLE garage_object ADD COLUMN isDeleted INTEGER NOT NULL DEFAULT 0;
            ALTER TABLE garage_object ADD COLUMN isRemote INTEGER NOT NULL DEFAULT 0;
            ALTER TABLE garage_object ADD COLUMN attempts INTEGER NOT NULL DEFAULT 0;
            ALTER TABLE garage_object ADD COLUMN retryAt REAL;
            ALTER TABLE garage_object ADD COLUMN lastError TEXT;
            UPDATE garage_object SET isRemote = 1 WHERE syncStatus <> 0 OR claim IS NOT NULL;
            """)
    }

    /// Version 3: the reverse of every row's reference list, so that the objects referencing
    /// an object are found without reading the table (`referrers(of:)`, delete rules).
    ///
    /// `garage_reference` holds one entry per reference of a live row: the referenced key
    /// first, so that the referrers of an object (or of a type) are a range of its primary key.
    /// Triggers on `garage_object` keep it equal to the rows' `refs`, whatever writes them, and
    /// the migration fills it from the rows there are. A damaged reference list (not text, not
    /// JSON, not an array of `[type, identifier]` string pairs) contributes only its valid
    /// pairs: the triggers never fail a write, and ``SQLiteConnection`` `check()` reports the
    /// damage. A tombstone's list is empty.
    ///
    /// `referencesKnown` is 0 for a row whose reference list is a guess: an object imported
    /// from a GarageStorage store, whose Swift type was not there to say which of its strings
    /// are references. Its list then names every imported object one of its strings names
    /// (the index serves delete rules, which then refuse rather than leave a reference
    /// dangling), and `check()` reports none of its references as dangling. Parking the object
    /// again makes its list exact.
    private static func addReferenceIndex(_ db: Database) throws {
        try db.execute(sql: """
            ALTER TABLE garage_object ADD COLUMN referencesKnown INTEGER NOT NULL DEFAULT 1;
            CREATE TABLE garage_reference (
                toType TEXT NOT NULL,
                toIdentifier TEXT NOT NULL,
                fromType TEXT NOT NULL,
                fromIdentifier TEXT NOT NULL,
                PRIMARY KEY (toType, toIdentifier, fromType, fromIdentifier)
            ) WITHOUT ROWID;
            CREATE TRIGGER garage_reference_insert AFTER INSERT ON garage_object
            WHEN \(hasReferences("new"))
            BEGIN
                \(insertReferences("new"));
            END;
            CREATE TRIGGER garage_reference_update AFTER UPDATE OF type, identifier, refs ON garage_object
            WHEN old.refs IS NOT new.refs OR old.type IS NOT new.type OR old.identifier IS NOT new.identifier
            BEGIN
                \(deleteReferences("old"));
                \(insertReferences("new"));
            END;
            CREATE TRIGGER garage_reference_delete AFTER DELETE ON garage_object
            WHEN \(hasReferences("old"))
            BEGIN
                \(deleteReferences("old"));
            END;
            INSERT OR IGNORE INTO garage_reference (toType, toIdentifier, fromType, fromIdentifier)
            SELECT \(referencePairs("row"))
            FROM garage_object AS row, json_each(\(usableList("row"))) AS element
            WHERE \(hasReferences("row")) AND \(isPair);
            """)
    }

    /// Version 4: facts about the store itself, beside its objects: `garage_meta` holds one
    /// value per name (any SQLite type). An encrypted store keeps there its key record
    /// (`Keyring`, under `"encryption"`) and how many objects its current key encrypted
    /// (`"encryptions"`); see ``encryptionGuard(limit:envelopePrefixes:)``.
    private static func addMetadata(_ db: Database) throws {
        try db.execute(sql: "CREATE TABLE garage_meta (name TEXT PRIMARY KEY NOT NULL, value NOT NULL) WITHOUT ROWID")
    }

    /// Version 5: the sync index holds `isDeleted` too, after the columns it is searched and
    /// ordered by, so that counts by status, and by type (through each status), read the index
    /// alone: without it, every counted row was read from the table to skip tombstones (a
    /// count of 500,000 objects among 1M took 250 ms instead of 25). The same index, one byte
    /// longer an entry, still orders claims and listings by modification date; a write touches
    /// no more indexes than before.
    private static func addDeletedToSyncIndex(_ db: Database) throws {
        try db.execute(sql: """
            DROP INDEX garage_object_sync;
            CREATE INDEX garage_object_sync ON garage_object (syncStatus, type, modificationDate, isDeleted);
            """)
    }

    /// Version 6: what a sync engine needs of each row. `base`: for a row with local changes
    /// the server has not seen, the data of the last version both sides had, for three-way
    /// merges (``RowRules``, "Bases"). `serverVersion`: the server's version the row is based on,
    /// as the engine's transport gave it. NULL in every row of an older store: its merges have no
    /// base, as before, and its objects no known version.
    private static func addSyncColumns(_ db: Database) throws {
        try db.execute(sql: """
            ALTER TABLE garage_object ADD COLUMN base TEXT;
            ALTER TABLE garage_object ADD COLUMN serverVersion TEXT;
            """)
    }

    /// The triggers that enforce `guard` (``EncryptionGuard``, the rule), replacing any there
    /// were: ``encryptionGuard(limit:envelopePrefixes:)`` for the current key,
    /// ``retiredKeyGuard(envelopePrefixes:)`` for retired ones. Their errors' messages are the
    /// ``EncryptionGuard/Refusal``s' raw values, which `SQLiteEngine.garageError(_:operation:)`
    /// reads back.
    package static func encryptionGuard(_ guard: EncryptionGuard) -> String {
        var sql = dropEncryptionGuard
        if let current = `guard`.current {
            sql += "\n" + encryptionGuard(limit: current.limit, envelopePrefixes: current.envelopePrefixes)
        }
        if !`guard`.retired.isEmpty { sql += "\n" + retiredKeyGuard(envelopePrefixes: `guard`.retired) }
        return sql
    }

    private static let plaintextRefusal = EncryptionGuard.Refusal.plaintext.rawValue
    private static let encryptionLimitRefusal = EncryptionGuard.Refusal.limitReached.rawValue
    private static let staleKeyRefusal = EncryptionGuard.Refusal.staleKey.rawValue

    /// The triggers of an encrypted store, whoever writes it (another garage, another process):
    /// a row can't be written unencrypted (a tombstone, without data, can), nor encrypted with
    /// another data key than the current one (its envelope doesn't start with one of
    /// `envelopePrefixes`: a garage that missed a rotation would write what the rotation's end
    /// makes unreadable); each encrypted write of a row's data counts one encryption, refused
    /// once `limit` are counted (the nonces' budget).
    private static func encryptionGuard(limit: Int64, envelopePrefixes: [String]) -> String {
        let prefixes = envelopePrefixes.map { "'\($0)'" }.joined(separator: ", ")
        let length = envelopePrefixes.first?.count ?? 0
        let count = """
            BEGIN
                SELECT RAISE(ABORT, '\(staleKeyRefusal)') WHERE substr(new.data, 1, \(length)) NOT IN (\(prefixes));
                SELECT RAISE(ABORT, '\(encryptionLimitRefusal)')
                    WHERE (SELECT value FROM garage_meta WHERE name = 'encryptions') >= \(limit);
                UPDATE garage_meta SET value = value + 1 WHERE name = 'encryptions';
            END;
            """
        return """
            CREATE TRIGGER garage_encrypted_insert BEFORE INSERT ON garage_object
            WHEN new.isEncrypted = 0 AND new.data <> ''
            BEGIN SELECT RAISE(ABORT, '\(plaintextRefusal)'); END;
            CREATE TRIGGER garage_encrypted_update BEFORE UPDATE OF data, isEncrypted ON garage_object
            WHEN new.isEncrypted = 0 AND new.data <> '' AND (new.data IS NOT old.data OR old.isEncrypted <> 0)
            BEGIN SELECT RAISE(ABORT, '\(plaintextRefusal)'); END;
            CREATE TRIGGER garage_encryption_count_insert AFTER INSERT ON garage_object
            WHEN new.isEncrypted <> 0
            \(count)
            CREATE TRIGGER garage_encryption_count_update AFTER UPDATE OF data ON garage_object
            WHEN new.isEncrypted <> 0 AND new.data IS NOT old.data
            \(count)
            """
    }

    /// The triggers of a store that was encrypted with a key and is being, or was, decrypted:
    /// an object encrypted with one of the data keys it had (its envelope starts with one of
    /// `envelopePrefixes`) is refused, since the store forgets those keys (a garage opened
    /// before the decryption would write what no one can read). Other ciphers' rows pass.
    private static func retiredKeyGuard(envelopePrefixes: [String]) -> String {
        let prefixes = envelopePrefixes.map { "'\($0)'" }.joined(separator: ", ")
        let length = envelopePrefixes.first?.count ?? 0
        let refuse = """
            BEGIN SELECT RAISE(ABORT, '\(staleKeyRefusal)') WHERE substr(new.data, 1, \(length)) IN (\(prefixes)); END;
            """
        return """
            CREATE TRIGGER garage_retired_key_insert AFTER INSERT ON garage_object WHEN new.isEncrypted <> 0
            \(refuse)
            CREATE TRIGGER garage_retired_key_update AFTER UPDATE OF data ON garage_object
            WHEN new.isEncrypted <> 0 AND new.data IS NOT old.data
            \(refuse)
            """
    }

    /// Drops ``encryptionGuard(limit:envelopePrefixes:)``'s and ``retiredKeyGuard(envelopePrefixes:)``'s triggers.
    package static let dropEncryptionGuard = """
        DROP TRIGGER IF EXISTS garage_retired_key_insert;
        DROP TRIGGER IF EXISTS garage_retired_key_update;
        DROP TRIGGER IF EXISTS garage_encrypted_insert;
        DROP TRIGGER IF EXISTS garage_encrypted_update;
        DROP TRIGGER IF EXISTS garage_encryption_count_insert;
        DROP TRIGGER IF EXISTS garage_encryption_count_update;
        """

    /// Whether `row`'s reference list may hold references: a JSON array other than `[]`,
    /// under a key of text. (A CASE: only CASE promises not to run SQLite's JSON functions,
    /// which fail the statement on malformed JSON, before its condition holds.)
    private static func hasReferences(_ row: String) -> String {
        """
        CASE WHEN \(row).refs = '[]' OR typeof(\(row).refs) <> 'text' OR typeof(\(row).type) <> 'text'
                OR typeof(\(row).identifier) <> 'text' THEN 0
            WHEN json_valid(\(row).refs) THEN json_type(\(row).refs) = 'array'
            ELSE 0 END
        """
    }

    /// `row`'s reference list when it may hold references, `'[]'` otherwise.
    private static func usableList(_ row: String) -> String {
        "CASE WHEN \(hasReferences(row)) THEN \(row).refs ELSE '[]' END"
    }

    /// Whether the `element` of a reference list is a `[type, identifier]` pair of strings.
    private static let isPair = """
        CASE WHEN element.type = 'array' THEN json_array_length(element.value) = 2
            AND json_type(element.value, '$[0]') IS 'text' AND json_type(element.value, '$[1]') IS 'text'
            ELSE 0 END
        """

    /// The index entry of `element`, a reference of `row`.
    private static func referencePairs(_ row: String) -> String {
        "json_extract(element.value, '$[0]'), json_extract(element.value, '$[1]'), \(row).type, \(row).identifier"
    }

    private static func insertReferences(_ row: String) -> String {
        """
        INSERT OR IGNORE INTO garage_reference (toType, toIdentifier, fromType, fromIdentifier)
            SELECT \(referencePairs(row)) FROM json_each(\(usableList(row))) AS element WHERE \(isPair)
        """
    }

    private static func deleteReferences(_ row: String) -> String {
        """
        DELETE FROM garage_reference WHERE (toType, toIdentifier, fromType, fromIdentifier) IN
            (SELECT \(referencePairs(row)) FROM json_each(\(usableList(row))) AS element WHERE \(isPair))
        """
    }

    /// Brings the store to the version of the last of `migrations` (``formatVersion``), or
    /// refuses it.
    ///
    /// Tests pass ``migrations`` with a version of their own appended, to prove that a store
    /// moves to a next version (see ``Store/open(path:busyTimeout:migrations:)``).
    package static func migrate(_ db: Database, path: String, migrations: [Migration] = Schema.migrations) throws {
        let newestVersion = migrations.last?.version ?? 0
        let applicationID = try Int32.fetchOne(db, sql: "PRAGMA application_id") ?? 0
        let version = try Int.fetchOne(db, sql: "PRAGMA user_version") ?? 0
        if applicationID != Self.applicationID {
            let tableCount = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM sqlite_master") ?? 0
            guard applicationID == 0, version == 0, tableCount == 0 else {
                throw GarageError.notAGarageStore(
                    path: path, reason: "it is an SQLite database of another application")
            }
        }
        guard version <= newestVersion else {
            throw GarageError.newerFormatVersion(path: path, version: version, supportedVersion: newestVersion)
        }
        guard version < newestVersion else { return }
        for migration in migrations where migration.version > version {
            try migration.migrate(db)
        }
        // Pragmas take no parameters; both values are integers of this file's migrations.
        try db.execute(sql: "PRAGMA application_id = \(Self.applicationID)")
        try db.execute(sql: "PRAGMA user_version = \(newestVersion)")
    }
}
