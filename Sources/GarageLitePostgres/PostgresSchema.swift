import Foundation
import GarageLite
import PostgresNIO

/// The format of a garage in a PostgreSQL schema: its tables, triggers and functions, its format
/// version (`garage_format`, one row) and the migrations between versions.
///
/// The rows are SQLite's format 6, column for column (snake_case), in types PostgreSQL checks:
/// the data and references are `text` (not `jsonb`, which reorders keys and refuses `\u0000`),
/// dates are seconds since 1970 as `double precision` (SQLite's REAL), keys are `COLLATE "C"`
/// so that identifier order is the order of their UTF-8 bytes, as on SQLite.
enum PostgresSchema {
    /// The format version this version of GarageLite writes in a schema, and the newest it reads.
    /// PostgreSQL's numbering is its own: version 1 holds SQLite's format 6 rows; version 2 the
    /// same rows, with triggers that run only for the rows they concern.
    static let formatVersion = 2

    /// What `garage_format.application` says of a garage's schema.
    static let application = "GarageLite"

    /// A step that takes a schema from the previous format version to `version`: SQL run in the
    /// migrating transaction, with `SCHEMA` replaced by the schema's name.
    typealias Migration = (version: Int, sql: String)

    static let migrations: [Migration] = [(1, createVersion1), (2, conditionalTriggers)]

    /// Whether `name` can name a garage's schema: a lowercase identifier that needs no quoting,
    /// short enough for its notification channel and lock names.
    static func isValidName(_ name: String) -> Bool {
        guard let first = name.unicodeScalars.first, name.unicodeScalars.count <= 48,
              first == "_" || ("a"..."z").contains(first) else { return false }
        return name.unicodeScalars.allSatisfy { $0 == "_" || ("a"..."z").contains($0) || ("0"..."9").contains($0) }
    }

    /// The channel the schema's commits notify (see ``PostgresCommitListener``).
    static func channel(_ schema: String) -> String { "garage_\(schema)" }

    /// The name of the schema's write lock (an advisory lock on its hash).
    static func lockName(_ schema: String) -> String { "GarageLite write \(schema)" }

    /// The store's address in errors: `postgres://user@host:port/database?schema=schema`, no
    /// password (a Unix socket's folder in a `host` query item), as `Garage(postgresURL:)` reads it.
    static func address(_ configuration: PostgresConnection.Configuration, schema: String) -> String {
        let database = configuration.database ?? configuration.username
        if let socket = configuration.unixSocketPath {
            let folder = (socket as NSString).deletingLastPathComponent
            let port = socket.split(separator: ".").last.map(String.init) ?? "5432"
            return "postgres://\(configuration.username)@localhost:\(port)/\(database)?host=\(folder)&schema=\(schema)"
        }
        return "postgres://\(configuration.username)@\(configuration.host ?? "localhost"):\(configuration.port ?? 5432)/\(database)"
            + "?schema=\(schema)"
    }

    /// Brings the schema to ``formatVersion``, creating it when it does not exist, or refuses it
    /// untouched: a schema with tables but no `garage_format`, or of another application, is not
    /// a garage; a newer version is refused. One transaction, under the schema's lock, so that two
    /// instances opening a new schema at once create it once.
    static func migrate(_ statements: PostgresStatements, path: String, creating: Bool = true,
                        migrations: [Migration] = Self.migrations) throws {
        let schema = statements.schema
        let newestVersion = migrations.last?.version ?? 0
        try statements.transaction {
            let tables = try statements.run("""
                SELECT table_name::text FROM information_schema.tables WHERE table_schema = \(schema)
                """).rows.map { try $0.decode(String.self) }
            var version = 0
            if tables.contains("garage_format") {
                guard let row = try statements.run("SELECT application, version FROM \(unescaped: schema).garage_format").rows.first,
                      let (application, stored) = try? row.decode((String, Int32).self), application == Self.application else {
                    throw GarageError.notAGarageStore(path: path, reason: "its garage_format table is not GarageLite's")
                }
                version = Int(stored)
            } else if !tables.isEmpty {
                throw GarageError.notAGarageStore(
                    path: path, reason: "the schema \(schema) holds tables of another application (\(tables.sorted().prefix(3).joined(separator: ", ")))")
            }
            guard version <= newestVersion else {
                throw GarageError.newerFormatVersion(path: path, version: version, supportedVersion: newestVersion)
            }
            guard version < newestVersion else { return }
            if version == 0, tables.isEmpty, !creating {
                throw GarageError.cannotOpenStore(path: path, reason: "there is no garage in the schema \(schema) (opening it "
                    + "with PostgresGarageOptions.createsSchema creates one there, as garage import does)")
            }
            if version == 0 {
                try statements.execute("""
                    CREATE SCHEMA IF NOT EXISTS \(schema);
                    CREATE TABLE \(schema).garage_format (application text NOT NULL, version integer NOT NULL);
                    INSERT INTO \(schema).garage_format VALUES ('\(Self.application)', 0);
                    """)
            }
            for migration in migrations where migration.version > version {
                try statements.execute(migration.sql.replacingOccurrences(of: "SCHEMA", with: schema))
            }
            try statements.run("UPDATE \(unescaped: schema).garage_format SET version = \(Int32(newestVersion))")
        }
    }

    /// Version 1: the object table (SQLite's format 6), the index of references kept by a
    /// trigger whatever writes the rows, the facts, and the notification of each transaction
    /// that changes them.
    private static let createVersion1 = """
        CREATE TABLE SCHEMA.garage_object (
            type text COLLATE "C" NOT NULL,
            identifier text COLLATE "C" NOT NULL,
            data text NOT NULL,
            is_encrypted boolean NOT NULL DEFAULT false,
            sync_status bigint NOT NULL DEFAULT 0,
            creation_date double precision NOT NULL,
            modification_date double precision NOT NULL,
            revision bigint NOT NULL DEFAULT 1,
            is_root boolean NOT NULL DEFAULT false,
            refs text NOT NULL DEFAULT '[]',
            claim text,
            claimed_at double precision,
            is_deleted boolean NOT NULL DEFAULT false,
            is_remote boolean NOT NULL DEFAULT false,
            attempts bigint NOT NULL DEFAULT 0,
            retry_at double precision,
            last_error text,
            references_known boolean NOT NULL DEFAULT true,
            base text,
            server_version text,
            PRIMARY KEY (type, identifier)
        );
        CREATE INDEX garage_object_sync ON SCHEMA.garage_object (sync_status, type, modification_date, is_deleted);
        CREATE INDEX garage_object_claim ON SCHEMA.garage_object (claimed_at) WHERE claim IS NOT NULL;
        CREATE TABLE SCHEMA.garage_reference (
            to_type text COLLATE "C" NOT NULL,
            to_identifier text COLLATE "C" NOT NULL,
            from_type text COLLATE "C" NOT NULL,
            from_identifier text COLLATE "C" NOT NULL,
            PRIMARY KEY (to_type, to_identifier, from_type, from_identifier)
        );
        CREATE INDEX garage_reference_from ON SCHEMA.garage_reference (from_type, from_identifier);
        CREATE TABLE SCHEMA.garage_meta (name text COLLATE "C" PRIMARY KEY, value text NOT NULL);

        -- The valid [type, identifier] pairs of a reference list (none of a list that is not JSON).
        CREATE FUNCTION SCHEMA.garage_reference_pairs(list text) RETURNS TABLE (to_type text, to_identifier text)
        LANGUAGE plpgsql IMMUTABLE AS $$
        DECLARE parsed json;
        BEGIN
            IF list = '[]' THEN RETURN; END IF;
            BEGIN
                parsed := list::json;
            EXCEPTION WHEN others THEN
                RETURN;
            END;
            IF json_typeof(parsed) <> 'array' THEN RETURN; END IF;
            RETURN QUERY SELECT element->>0, element->>1 FROM json_array_elements(parsed) AS element
                WHERE json_typeof(element) = 'array' AND json_array_length(element) = 2
                    AND json_typeof(element->0) = 'string' AND json_typeof(element->1) = 'string';
        END $$;

        CREATE FUNCTION SCHEMA.garage_keep_references() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            IF TG_OP = 'UPDATE' AND old.refs = new.refs AND old.type = new.type AND old.identifier = new.identifier THEN
                RETURN NULL;
            END IF;
            IF TG_OP <> 'INSERT' AND old.refs <> '[]' THEN
                DELETE FROM SCHEMA.garage_reference WHERE from_type = old.type AND from_identifier = old.identifier;
            END IF;
            IF TG_OP <> 'DELETE' AND new.refs <> '[]' THEN
                INSERT INTO SCHEMA.garage_reference (to_type, to_identifier, from_type, from_identifier)
                SELECT pair.to_type, pair.to_identifier, new.type, new.identifier
                FROM SCHEMA.garage_reference_pairs(new.refs) AS pair ON CONFLICT DO NOTHING;
            END IF;
            RETURN NULL;
        END $$;
        CREATE TRIGGER garage_keep_references AFTER INSERT OR UPDATE OR DELETE ON SCHEMA.garage_object
            FOR EACH ROW EXECUTE FUNCTION SCHEMA.garage_keep_references();

        -- One notification per transaction that changes rows or facts (PostgreSQL folds those of
        -- one transaction with one payload), carrying the garage.origin of the writer.
        CREATE FUNCTION SCHEMA.garage_notify() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            PERFORM pg_notify('garage_SCHEMA', coalesce(current_setting('garage.origin', true), ''));
            RETURN NULL;
        END $$;
        CREATE TRIGGER garage_notify_objects AFTER INSERT OR UPDATE OR DELETE ON SCHEMA.garage_object
            FOR EACH STATEMENT EXECUTE FUNCTION SCHEMA.garage_notify();
        CREATE TRIGGER garage_notify_facts AFTER INSERT OR UPDATE OR DELETE ON SCHEMA.garage_meta
            FOR EACH STATEMENT EXECUTE FUNCTION SCHEMA.garage_notify();

        -- The encryption guard (setEncryptionGuard replaces this function): none until a key. After
        -- the write, as SQLite counts: an insert that does nothing (ON CONFLICT DO NOTHING) counts nothing.
        CREATE FUNCTION SCHEMA.garage_encryption_guard() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN RETURN new; END $$;
        CREATE TRIGGER garage_encryption_guard AFTER INSERT OR UPDATE OF data, is_encrypted ON SCHEMA.garage_object
            FOR EACH ROW EXECUTE FUNCTION SCHEMA.garage_encryption_guard();
        """

    /// Version 2: the row triggers run only for the rows they concern. A row trigger's `WHEN`
    /// is evaluated by the server without calling the function; version 1 called a PL/pgSQL
    /// function for every row written, twice (the index of references, and the encryption
    /// guard, which did nothing in a store without a key), about half of what the server spent
    /// on a parkAll of flat objects (no references) beyond the floor's statements.
    ///
    /// The index of references: three triggers with one function, for an insert or a deletion
    /// of a row that holds references, and an update that changes its references or its key.
    /// The encryption guard's trigger exists only while there is a guard
    /// (``encryptionGuard(_:schema:)`` creates and drops it); the migration drops it from a
    /// store whose guard function is version 1's, which does nothing.
    private static let conditionalTriggers = """
        DROP TRIGGER garage_keep_references ON SCHEMA.garage_object;
        CREATE TRIGGER garage_reference_insert AFTER INSERT ON SCHEMA.garage_object
            FOR EACH ROW WHEN (new.refs <> '[]') EXECUTE FUNCTION SCHEMA.garage_keep_references();
        CREATE TRIGGER garage_reference_update AFTER UPDATE ON SCHEMA.garage_object
            FOR EACH ROW WHEN (old.refs IS DISTINCT FROM new.refs OR old.type IS DISTINCT FROM new.type
                OR old.identifier IS DISTINCT FROM new.identifier)
            EXECUTE FUNCTION SCHEMA.garage_keep_references();
        CREATE TRIGGER garage_reference_delete AFTER DELETE ON SCHEMA.garage_object
            FOR EACH ROW WHEN (old.refs <> '[]') EXECUTE FUNCTION SCHEMA.garage_keep_references();
        DO $$ BEGIN
            IF NOT EXISTS (SELECT 1 FROM pg_proc AS p JOIN pg_namespace AS n ON n.oid = p.pronamespace
                    WHERE n.nspname = 'SCHEMA' AND p.proname = 'garage_encryption_guard' AND p.prosrc LIKE '%RAISE%') THEN
                DROP TRIGGER garage_encryption_guard ON SCHEMA.garage_object;
            END IF;
        END $$;
        """

    /// The guard's function for `guard` (``EncryptionGuard``, the rule), replacing the one there
    /// was, and its trigger when it checks anything: a refusal raises the
    /// ``EncryptionGuard/Refusal``'s raw value, which `PostgresEngine.garageError(_:operation:)`
    /// reads back.
    static func encryptionGuard(_ guard: EncryptionGuard, schema: String) -> String {
        func literal(_ text: String) -> String { "'" + text.replacingOccurrences(of: "'", with: "''") + "'" }
        func startsWithOne(of prefixes: [String]) -> String {
            prefixes.isEmpty ? "false" : "(" + prefixes.map { "starts_with(new.data, \(literal($0)))" }.joined(separator: " OR ") + ")"
        }
        var checks = ""
        if let current = `guard`.current {
            checks += """
                IF NOT new.is_encrypted AND new.data <> '' AND (TG_OP = 'INSERT' OR new.data IS DISTINCT FROM old.data
                        OR old.is_encrypted) THEN
                    RAISE EXCEPTION USING MESSAGE = \(literal(EncryptionGuard.Refusal.plaintext.rawValue));
                END IF;
                IF new.is_encrypted AND (TG_OP = 'INSERT' OR new.data IS DISTINCT FROM old.data) THEN
                    IF NOT \(startsWithOne(of: current.envelopePrefixes)) THEN
                        RAISE EXCEPTION USING MESSAGE = \(literal(EncryptionGuard.Refusal.staleKey.rawValue));
                    END IF;
                    UPDATE \(schema).garage_meta SET value = (value::bigint + 1)::text WHERE name = 'encryptions'
                        RETURNING value::bigint INTO counted;
                    IF counted > \(current.limit) THEN
                        RAISE EXCEPTION USING MESSAGE = \(literal(EncryptionGuard.Refusal.limitReached.rawValue));
                    END IF;
                END IF;

                """
        }
        if !`guard`.retired.isEmpty {
            checks += """
                IF new.is_encrypted AND (TG_OP = 'INSERT' OR new.data IS DISTINCT FROM old.data)
                        AND \(startsWithOne(of: `guard`.retired)) THEN
                    RAISE EXCEPTION USING MESSAGE = \(literal(EncryptionGuard.Refusal.staleKey.rawValue));
                END IF;

                """
        }
        // The trigger only while there is something to check (version 2): without it, no row
        // written calls the function.
        let trigger = checks.isEmpty ? "" : """
            CREATE TRIGGER garage_encryption_guard AFTER INSERT OR UPDATE OF data, is_encrypted ON \(schema).garage_object
                FOR EACH ROW EXECUTE FUNCTION \(schema).garage_encryption_guard();
            """
        return """
            CREATE OR REPLACE FUNCTION \(schema).garage_encryption_guard() RETURNS trigger LANGUAGE plpgsql AS $$
            DECLARE counted bigint;
            BEGIN
            \(checks)RETURN new;
            END $$;
            DROP TRIGGER IF EXISTS garage_encryption_guard ON \(schema).garage_object;
            \(trigger)
            """
    }
}
