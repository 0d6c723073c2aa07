import Foundation
import GarageLite
import NIOCore
import PostgresNIO

/// The floor: what a competent program writes by hand with postgres-nio and Foundation's
/// `JSONEncoder`/`JSONDecoder`, on GarageLite's own table.
///
/// Its schema is made by opening a Garage on it (then closed), so that the floor writes the very
/// table GarageLite writes, with its indexes and its triggers (the reference index's row
/// trigger, the notification's statement trigger, the encryption guard): the difference
/// between the two is then the library's work, not the schema's. One connection, its
/// `search_path` set to the schema; the statements run again and again are named prepared
/// statements (parsed and planned once per connection); a `parkAll` is one transaction of
/// multi-row upserts (`unnest` of arrays, 1,000 rows a statement), the next batch encoded
/// while the previous one is on the server; a claim is one statement (`UPDATE … WHERE (type,
/// identifier) IN (SELECT … FOR UPDATE SKIP LOCKED) RETURNING`), its completion another (by
/// primary key and claim). Claims run in autocommit: each statement is its own transaction.
final class Floor: Contender {
    let name = "floor"
    private let connection: PostgresConnection
    private let encoder = JSONEncoder()
    private let decoder = JSONDecoder()

    /// Rows a `parkAll` statement upserts.
    static let batchSize = 1_000

    private init(connection: PostgresConnection) {
        self.connection = connection
    }

    /// Connects to `schema`, which must hold a garage's tables (``ContenderKind/createSchema(_:on:)``).
    static func open(_ server: ServerAddress, schema: String) async throws -> Floor {
        Floor(connection: try await server.connect(schema: schema))
    }

    func close() async {
        try? await connection.close()
    }

    // MARK: - Writing

    func parkAll(_ notes: [BenchNote]) async throws {
        let connection = connection
        let now = Date().timeIntervalSince1970
        try await connection.query("BEGIN", logger: quietLogger)
        do {
            var inFlight: Task<Void, any Error>?
            var start = 0
            while start < notes.count {
                let end = min(start + Self.batchSize, notes.count)
                var identifiers: [String] = []
                var data: [String] = []
                identifiers.reserveCapacity(end - start)
                data.reserveCapacity(end - start)
                for note in notes[start..<end] {
                    identifiers.append(note.id)
                    data.append(String(decoding: try encoder.encode(note), as: UTF8.self))
                }
                // One statement on the server at a time (a connection runs them in order); this
                // batch was encoded while the previous one ran.
                try await inFlight?.value
                let query = Self.upsert(identifiers: identifiers, data: data, now: now)
                inFlight = Task { try await connection.query(query, logger: quietLogger) }
                start = end
            }
            try await inFlight?.value
            try await connection.query("COMMIT", logger: quietLogger)
        } catch {
            _ = try? await connection.query("ROLLBACK", logger: quietLogger)
            throw error
        }
    }

    /// Inserts or updates the rows of `identifiers`: `.notSynced`, roots, a new revision when
    /// they existed (the columns GarageLite sets for a park of a flat object).
    private static func upsert(identifiers: [String], data: [String], now: Double) -> PostgresQuery {
        """
        INSERT INTO garage_object (type, identifier, data, sync_status, creation_date, modification_date, is_root)
        SELECT \(BenchData.typeName), item.identifier, item.data, \(Int64(SyncStatus.notSynced.rawValue)), \(now), \(now), true
        FROM unnest(\(identifiers)::text[], \(data)::text[]) AS item(identifier, data)
        ON CONFLICT (type, identifier) DO UPDATE SET data = excluded.data, sync_status = excluded.sync_status,
            modification_date = excluded.modification_date, revision = garage_object.revision + 1
        """
    }

    // MARK: - Reading

    func retrieve(id: String) async throws -> BenchNote? {
        for try await data in try await connection.execute(SelectData(identifier: id), logger: quietLogger) {
            return try decoder.decode(BenchNote.self, from: Data(data.utf8))
        }
        return nil
    }

    func retrieveAll() async throws -> [BenchNote] {
        var notes: [BenchNote] = []
        for try await data in try await connection.execute(SelectAllData(), logger: quietLogger) {
            notes.append(try decoder.decode(BenchNote.self, from: Data(data.utf8)))
        }
        return notes
    }

    // MARK: - Claims

    func claimAndComplete(limit: Int) async throws -> Int {
        let claim = UUID().uuidString
        var notes: [BenchNote] = []
        var identifiers: [String] = []
        let statement = ClaimRows(claim: claim, claimedAt: Date().timeIntervalSince1970, limit: Int64(limit))
        for try await (identifier, data) in try await connection.execute(statement, logger: quietLogger) {
            var note = try decoder.decode(BenchNote.self, from: Data(data.utf8))
            note.syncStatus = .syncing
            notes.append(note)
            identifiers.append(identifier)
        }
        guard !notes.isEmpty else { return 0 }
        // (The upload of `notes` would be here.)
        _ = try await connection.execute(CompleteClaim(claim: claim, identifiers: identifiers), logger: quietLogger)
        return notes.count
    }
}

// MARK: - The floor's prepared statements

/// The data of one note, by primary key.
struct SelectData: PostgresPreparedStatement {
    static let sql = "SELECT data FROM garage_object WHERE type = $1 AND identifier = $2"
    typealias Row = String

    var identifier: String

    func makeBindings() -> PostgresBindings {
        var bindings = PostgresBindings()
        bindings.append(BenchData.typeName)
        bindings.append(identifier)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> String { try row.decode(String.self) }
}

/// The data of every note, in identifier order.
struct SelectAllData: PostgresPreparedStatement {
    static let sql = "SELECT data FROM garage_object WHERE type = $1 ORDER BY identifier"
    typealias Row = String

    func makeBindings() -> PostgresBindings {
        var bindings = PostgresBindings()
        bindings.append(BenchData.typeName)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> String { try row.decode(String.self) }
}

/// Takes up to `limit` `.notSynced` notes, oldest change first, skipping the rows other
/// workers' claims hold: `.syncing` under `claim`, their identifiers and data returned. One
/// statement.
struct ClaimRows: PostgresPreparedStatement {
    static let sql = """
        UPDATE garage_object SET sync_status = \(SyncStatus.syncing.rawValue), claim = $1, claimed_at = $2
        WHERE (type, identifier) IN (
            SELECT type, identifier FROM garage_object
            WHERE sync_status = \(SyncStatus.notSynced.rawValue) AND type = $3 AND claim IS NULL
            ORDER BY modification_date LIMIT $4 FOR UPDATE SKIP LOCKED)
        RETURNING identifier, data
        """
    typealias Row = (String, String)

    var claim: String
    var claimedAt: Double
    var limit: Int64

    func makeBindings() -> PostgresBindings {
        var bindings = PostgresBindings()
        bindings.append(claim)
        bindings.append(claimedAt)
        bindings.append(BenchData.typeName)
        bindings.append(limit)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> (String, String) { try row.decode((String, String).self) }
}

/// Ends the claim `claim`: its rows `.synced`, unclaimed. By primary key: the schema's index of
/// claims is on `claimed_at`, so `WHERE claim = $1` alone would read the whole table.
struct CompleteClaim: PostgresPreparedStatement {
    static let sql = """
        UPDATE garage_object SET sync_status = \(SyncStatus.synced.rawValue), claim = NULL, claimed_at = NULL
        WHERE type = $2 AND identifier = ANY($3) AND claim = $1
        """
    typealias Row = ()

    var claim: String
    var identifiers: [String]

    func makeBindings() -> PostgresBindings {
        var bindings = PostgresBindings()
        bindings.append(claim)
        bindings.append(BenchData.typeName)
        bindings.append(identifiers)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws {}
}
