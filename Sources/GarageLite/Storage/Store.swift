import Foundation
import GRDB

/// The only place that talks to SQLite: opening a store file, and every statement the
/// garage runs on the object table.
///
/// File stores use a `DatabasePool` (WAL mode: readers never wait for the writer, and
/// each read runs in one snapshot). In-memory stores use a `DatabaseQueue`.
final class Store: Sendable {
    let writer: any DatabaseWriter
    /// The file path, or `nil` for an in-memory store.
    let path: String?

    private init(writer: any DatabaseWriter, path: String?) {
        self.writer = writer
        self.path = path
    }

    private static func configuration(busyTimeout: TimeInterval) -> Configuration {
        var configuration = Configuration()
        configuration.label = "GarageLite"
        // Under ordinary contention a writer waits for the lock instead of failing.
        configuration.busyMode = .timeout(busyTimeout)
        return configuration
    }

    /// Opens the store file at `path`, creating it if needed.
    ///
    /// A file that is not a GarageLite store, or that was written by a newer format
    /// version, is refused before anything is written to it.
    static func open(path: String, busyTimeout: TimeInterval) throws -> Store {
        let deadline = Date().addingTimeInterval(busyTimeout)
        while true {
            do {
                return try openOnce(path: path, busyTimeout: busyTimeout)
            } catch let error as DatabaseError where error.resultCode == .SQLITE_BUSY && Date() < deadline {
                // Switching a new file to WAL mode needs it alone, and SQLite does not wait for
                // that under the busy timeout: when other connections open the same new file at
                // the same moment, try again until the timeout.
                Thread.sleep(forTimeInterval: 0.005)
            } catch let error as GarageError {
                throw error
            } catch {
                throw openingError(error, path: path)
            }
        }
    }

    private static func openOnce(path: String, busyTimeout: TimeInterval) throws -> Store {
        try StoreFile.checkBeforeOpening(path: path)
        let pool = try DatabasePool(path: path, configuration: configuration(busyTimeout: busyTimeout))
        try pool.writeWithoutTransaction { db in
            try inTransaction(db) { db in try Schema.migrate(db, path: path) }
        }
        return Store(writer: pool, path: path)
    }

    /// Opens a new, empty store in memory.
    static func inMemory() throws -> Store {
        do {
            let queue = try DatabaseQueue(configuration: configuration(busyTimeout: 0))
            try queue.writeWithoutTransaction { db in
                try inTransaction(db) { db in try Schema.migrate(db, path: ":memory:") }
            }
            return Store(writer: queue, path: nil)
        } catch let error as GarageError {
            throw error
        } catch {
            throw GarageError.cannotOpenStore(path: ":memory:", reason: reason(error))
        }
    }

    static func openingError(_ error: any Error, path: String) -> GarageError {
        if let error = error as? DatabaseError, error.resultCode == .SQLITE_NOTADB {
            return .notAGarageStore(path: path, reason: "it is not an SQLite database")
        }
        return .cannotOpenStore(path: path, reason: reason(error))
    }

    static func reason(_ error: any Error) -> String {
        if let error = error as? DatabaseError {
            return "\(error.message ?? "\(error.resultCode)") (SQLite error \(error.extendedResultCode.rawValue))"
        }
        return "\(error)"
    }

    /// The garage's error for an SQLite error met while performing `operation`.
    private func garageError(_ error: DatabaseError, operation: String) -> GarageError {
        if error.resultCode == .SQLITE_BUSY || error.resultCode == .SQLITE_LOCKED {
            return .storeBusy(operation: operation, path: path ?? ":memory:")
        }
        return .storageFailure(operation: operation, reason: Self.reason(error))
    }

    // MARK: - Access

    /// Whether the current thread runs inside one of the store's database accesses.
    ///
    /// User code runs there (`init(from:)`, the encryption delegate, a custom date strategy).
    /// If it calls the garage, GRDB would stop the process ("Database methods are not
    /// reentrant"): the store throws instead.
    @TaskLocal private static var isAccessing = false

    private static func checkNotReentrant(_ operation: String) throws {
        if isAccessing {
            throw GarageError.reentrantCall(operation: operation)
        }
    }

    /// Runs `body` in one read transaction: everything it reads comes from one snapshot.
    func read<T>(_ operation: String, _ body: (Database) throws -> T) throws -> T {
        try Self.checkNotReentrant(operation)
        do {
            return try writer.read { db in try Self.$isAccessing.withValue(true) { try body(db) } }
        } catch let error as DatabaseError {
            throw garageError(error, operation: operation)
        }
    }

    /// Runs `body` with a reader connection outside any transaction: each statement is its
    /// own snapshot. `body` opens a transaction (``inSnapshot(_:_:)``) when it reads more than
    /// one statement must agree on.
    ///
    /// A retrieve of an object without references reads one row: one statement, with none of
    /// the cost of beginning and committing a transaction.
    func readWithoutTransaction<T>(_ operation: String, _ body: (Database) throws -> T) throws -> T {
        try Self.checkNotReentrant(operation)
        do {
            return try writer.unsafeRead { db in try Self.$isAccessing.withValue(true) { try body(db) } }
        } catch let error as DatabaseError {
            throw garageError(error, operation: operation)
        }
    }

    /// Runs `body` in a read transaction, on a connection that is in none.
    static func inSnapshot<T>(_ db: Database, _ body: (Database) throws -> T) throws -> T {
        try inTransaction(db, kind: .deferred, body)
    }

    /// Runs `body` in one read transaction, without blocking the calling thread.
    func read<T: Sendable>(_ operation: String, _ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try Self.checkNotReentrant(operation)
        do {
            return try await writer.read { db in try Self.$isAccessing.withValue(true) { try body(db) } }
        } catch let error as DatabaseError {
            throw garageError(error, operation: operation)
        }
    }

    /// Set while this thread feeds a ``RowStream``: the writer waits for it, so a write from
    /// it (from an `encode(to:)` or the encryption delegate) could never run.
    @TaskLocal static var isFeedingWriter = false

    private static func checkNotReentrant(writing operation: String) throws {
        try checkNotReentrant(operation)
        if isFeedingWriter {
            throw GarageError.reentrantCall(operation: operation)
        }
    }

    /// Writes the rows `produce` sends to `stream` in one immediate transaction, on the writer,
    /// while `produce` runs on this thread. Returns the changes written when `observed`.
    func write(_ operation: String, streaming produce: (RowStream) throws -> Void, observed: Bool) throws -> ChangeSet? {
        try Self.checkNotReentrant(writing: operation)
        let stream = RowStream()
        writer.asyncWriteWithoutTransaction { db in
            do {
                var written: ChangeSet? = observed ? ChangeSet() : nil
                try Self.$isAccessing.withValue(true) {
                    try Self.inTransaction(db) { db in
                        let now = Date()
                        while let batch = try stream.next() {
                            for (key, payload) in batch {
                                try Self.park(db, key: key, payload: payload, now: now)
                                written?.record(.park(payload), for: key)
                            }
                        }
                    }
                }
                stream.complete(.success(written))
            } catch {
                stream.complete(.failure(error))
            }
        }
        do {
            try Self.$isFeedingWriter.withValue(true) { try produce(stream) }
            stream.finish(failed: false)
        } catch {
            stream.finish(failed: true)
            _ = stream.waitForOutcome()
            throw error
        }
        switch stream.waitForOutcome() {
        case .success(let written):
            return written
        case .failure(let error as DatabaseError):
            throw garageError(error, operation: operation)
        case .failure(let error):
            throw error
        }
    }

    /// Runs `body` with the writer connection, alone: writes of this store are serialised.
    /// `body` opens its transactions itself, with ``inTransaction(_:_:)``.
    func write<T>(_ operation: String, _ body: (Database) throws -> T) throws -> T {
        try Self.checkNotReentrant(writing: operation)
        do {
            return try writer.writeWithoutTransaction { db in
                try Self.$isAccessing.withValue(true) { try body(db) }
            }
        } catch let error as DatabaseError {
            throw garageError(error, operation: operation)
        }
    }

    /// Runs `body` with the writer connection, alone, without blocking the calling thread.
    func write<T: Sendable>(_ operation: String, _ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try Self.checkNotReentrant(writing: operation)
        do {
            return try await writer.writeWithoutTransaction { db in
                try Self.$isAccessing.withValue(true) { try body(db) }
            }
        } catch let error as DatabaseError {
            throw garageError(error, operation: operation)
        }
    }

    /// Runs `body` in a transaction, committed when it returns. By default an immediate one:
    /// the write lock is taken at the start (waiting for it under the busy timeout), never
    /// upgraded midway.
    static func inTransaction<T>(
        _ db: Database, kind: Database.TransactionKind = .immediate, _ body: (Database) throws -> T
    ) throws -> T {
        var result: T?
        try db.inTransaction(kind) {
            result = try body(db)
            return .commit
        }
        guard let result else {
            throw GarageError.storageFailure(operation: "commit", reason: "the transaction ended without a result")
        }
        return result
    }

    // MARK: - Reading rows

    private static let columns = """
        type, identifier, data, isEncrypted, syncStatus, creationDate, modificationDate, revision, isRoot, refs, \
        claim, claimedAt
        """

    private static func storedRow(_ row: Row) throws -> StoredRow {
        let key = RowKey(type: try row.decode(String.self, atIndex: 0),
                         identifier: try row.decode(String.self, atIndex: 1))
        let statusValue = try row.decode(Int.self, atIndex: 4)
        guard let status = SyncStatus(rawValue: statusValue) else {
            throw GarageError.corruptData(typeName: key.type, identifier: key.identifier,
                                          reason: "unknown sync status \(statusValue)")
        }
        return StoredRow(
            key: key,
            data: try row.decode(String.self, atIndex: 2),
            isEncrypted: try row.decode(Bool.self, atIndex: 3),
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
    static func contentRow(_ db: Database, _ key: RowKey) throws -> StoredRow? {
        let statement = try db.cachedStatement(
            sql: "SELECT data, isEncrypted, syncStatus, refs FROM garage_object WHERE type = ? AND identifier = ?")
        let cursor = try Row.fetchCursor(statement, arguments: [key.type, key.identifier])
        guard let row = try cursor.next() else { return nil }
        let statusValue = try row.decode(Int.self, atIndex: 2)
        guard let status = SyncStatus(rawValue: statusValue) else {
            throw GarageError.corruptData(typeName: key.type, identifier: key.identifier,
                                          reason: "unknown sync status \(statusValue)")
        }
        return StoredRow(
            key: key, data: try row.decode(String.self, atIndex: 0), isEncrypted: try row.decode(Bool.self, atIndex: 1),
            syncStatus: status, creationDate: .distantPast, modificationDate: .distantPast, revision: 0,
            isRoot: false, references: try row.decode(String.self, atIndex: 3))
    }

    static func row(_ db: Database, _ key: RowKey) throws -> StoredRow? {
        let statement = try db.cachedStatement(
            sql: "SELECT \(columns) FROM garage_object WHERE type = ? AND identifier = ?")
        guard let row = try Row.fetchOne(statement, arguments: [key.type, key.identifier]) else { return nil }
        return try storedRow(row)
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

extension Store {
    // MARK: - Claims

    /// Up to `limit` unclaimed rows of `type` with `status`, oldest modification first.
    static func claimableRows(_ db: Database, type: String, status: SyncStatus, limit: Int) throws -> [StoredRow] {
        let statement = try db.cachedStatement(sql: """
            SELECT \(columns) FROM garage_object
            WHERE syncStatus = ? AND type = ? AND claim IS NULL
            ORDER BY modificationDate LIMIT ?
            """)
        return try Row.fetchCursor(statement, arguments: [status.rawValue, type, limit])
            .map(storedRow).reduce(into: []) { $0.append($1) }
    }

    /// Moves the row to `.syncing` under `claim`.
    static func markClaimed(_ db: Database, key: RowKey, claim: String, at date: Date) throws {
        try db.cachedStatement(sql: """
            UPDATE garage_object SET syncStatus = ?, claim = ?, claimedAt = ? WHERE type = ? AND identifier = ?
            """).execute(arguments: [SyncStatus.syncing.rawValue, claim, date.timeIntervalSince1970,
                                     key.type, key.identifier])
    }

    /// Ends the row's claim, setting its status to `status` (or leaving it when `nil`).
    static func endClaim(_ db: Database, key: RowKey, status: SyncStatus?) throws {
        try db.cachedStatement(sql: """
            UPDATE garage_object SET syncStatus = coalesce(?, syncStatus), claim = NULL, claimedAt = NULL
            WHERE type = ? AND identifier = ?
            """).execute(arguments: [status?.rawValue, key.type, key.identifier])
    }

    /// Ends every claim taken before `cutoff`: rows still `.syncing` go back to `.notSynced`.
    /// Returns the rows released.
    static func releaseClaims(_ db: Database, takenBefore cutoff: Date) throws -> [RowKey] {
        let rows = try Row.fetchAll(db, sql: """
            UPDATE garage_object
            SET syncStatus = CASE WHEN syncStatus = ? THEN ? ELSE syncStatus END, claim = NULL, claimedAt = NULL
            WHERE claim IS NOT NULL AND claimedAt < ?
            RETURNING type, identifier
            """, arguments: [SyncStatus.syncing.rawValue, SyncStatus.notSynced.rawValue, cutoff.timeIntervalSince1970])
        return try rows.map {
            RowKey(type: try $0.decode(String.self, atIndex: 0), identifier: try $0.decode(String.self, atIndex: 1))
        }
    }
}

/// The JSON form of a row's outgoing references: `[["Type","identifier"], ...]`.
///
/// Kept as JSON so that tools can read it with SQLite's `json_each`, without the app's types.
enum ReferenceList {
    /// The list of a row that references nothing.
    static let empty = "[]"

    static func encode(_ keys: [RowKey]) -> String {
        if keys.isEmpty { return empty }
        return JSONWriter.string(from: .array(keys.map { .array([.string($0.type), .string($0.identifier)]) }))
    }

    static func decode(_ text: String) throws -> [RowKey] {
        guard case .array(let pairs) = try JSONReader.parse(text) else {
            throw JSONReader.Failure(reason: "the reference list is not an array", offset: 0)
        }
        return try pairs.map { pair in
            guard case .array(let parts) = pair, parts.count == 2,
                  case .string(let type) = parts[0], case .string(let identifier) = parts[1] else {
                throw JSONReader.Failure(reason: "a reference is not a [type, identifier] pair", offset: 0)
            }
            return RowKey(type: type, identifier: identifier)
        }
    }
}
