import Foundation
import GRDB

/// The only place that talks to SQLite: opening a store file and accessing it (here), the
/// statements on the object table (`Store+Rows.swift`) and those of sync jobs' claims
/// (`Store+Claims.swift`).
///
/// File stores use a `DatabasePool` (WAL mode: readers never wait for the writer, and
/// each read runs in one snapshot), and read synchronously through ``ReaderConnections``,
/// which cost less per read than the pool's readers. In-memory stores use a `DatabaseQueue`.
final class Store: Sendable {
    let writer: any DatabaseWriter
    /// The file path, or `nil` for an in-memory store.
    let path: String?
    /// The read-only connections of a file store's synchronous reads.
    private let readers: ReaderConnections?
    /// Why the store can only be read, or `nil` when it can be written.
    let readOnlyReason: String?

    private init(writer: any DatabaseWriter, path: String?, readers: ReaderConnections? = nil,
                 readOnlyReason: String? = nil) {
        self.writer = writer
        self.path = path
        self.readers = readers
        self.readOnlyReason = readOnlyReason
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
    ///
    /// - parameter migrations: ``Schema/migrations``, or in tests, those with a next version
    ///   appended.
    static func open(
        path: String, busyTimeout: TimeInterval, migrations: [Schema.Migration] = Schema.migrations
    ) throws -> Store {
        let deadline = Date().addingTimeInterval(busyTimeout)
        while true {
            do {
                return try openOnce(path: path, busyTimeout: busyTimeout, migrations: migrations)
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

    private static func openOnce(
        path: String, busyTimeout: TimeInterval, migrations: [Schema.Migration]
    ) throws -> Store {
        try StoreFile.checkBeforeOpening(path: path, supportedVersion: migrations.last?.version ?? 0)
        let configuration = configuration(busyTimeout: busyTimeout)
        if let reason = try StoreFile.readOnlyReason(path: path) {
            return try openReadOnly(path: path, reason: reason, configuration: configuration, migrations: migrations)
        }
        let pool = try DatabasePool(path: path, configuration: configuration)
        try pool.writeWithoutTransaction { db in
            try inTransaction(db) { db in try Schema.migrate(db, path: path, migrations: migrations) }
        }
        let readers = ReaderConnections(
            path: path, configuration: configuration, maximumCount: configuration.maximumReaderCount)
        return Store(writer: pool, path: path, readers: readers)
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

    /// Opens the existing store at `path` for reading only: writes throw
    /// ``GarageError/readOnlyStore(path:operation:reason:)``.
    ///
    /// A store in WAL mode is read with its `-wal` and `-shm` files, which SQLite can't create in
    /// a folder it can't write. Without a `-wal` file, no commit waits outside the store file,
    /// and the file is read as immutable, without them; a process that could write in that
    /// folder, and wrote the store meanwhile, would not be seen.
    static func openReadOnly(
        path: String, reason: String, busyTimeout: TimeInterval = 0, migrations: [Schema.Migration] = Schema.migrations
    ) throws -> Store {
        do {
            return try openReadOnly(path: path, reason: reason, configuration: configuration(busyTimeout: busyTimeout),
                                    migrations: migrations)
        } catch let error as GarageError {
            throw error
        } catch {
            throw openingError(error, path: path)
        }
    }

    private static func openReadOnly(
        path: String, reason: String, configuration: Configuration, migrations: [Schema.Migration]
    ) throws -> Store {
        var configuration = configuration
        configuration.readonly = true
        let fileManager = FileManager.default
        let connectionPath = fileManager.fileExists(atPath: path + "-wal") || StoreFile.isFolderWritable(path: path)
            ? path : StoreFile.immutableURI(path: path)
        let pool = try DatabasePool(path: connectionPath, configuration: configuration)
        do {
            try pool.read { db in try Schema.migrate(db, path: path, migrations: migrations) }
        } catch let error as DatabaseError where error.resultCode == .SQLITE_READONLY {
            throw GarageError.cannotOpenStore(
                path: path, reason: "it is read-only (\(reason)), and it must be set up or upgraded before it can be "
                    + "read; open it once where it can be written")
        }
        return Store(writer: pool, path: path, readOnlyReason: reason)
    }

    static func openingError(_ error: any Error, path: String) -> GarageError {
        if let error = error as? DatabaseError, error.resultCode == .SQLITE_NOTADB {
            return .notAGarageStore(path: path, reason: "it is not an SQLite database")
        }
        if let error = error as? DatabaseError, error.resultCode == .SQLITE_CORRUPT {
            return .damagedStore(path: path, operation: "open the store", reason: reason(error))
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
        switch error.resultCode {
        case .SQLITE_BUSY, .SQLITE_LOCKED:
            return .storeBusy(operation: operation, path: path ?? ":memory:")
        case .SQLITE_FULL:
            return .storeFull(path: path ?? ":memory:", operation: operation)
        case .SQLITE_READONLY:
            return .readOnlyStore(path: path ?? ":memory:", operation: operation,
                                  reason: readOnlyReason ?? Self.reason(error))
        case .SQLITE_CORRUPT, .SQLITE_NOTADB:
            return .damagedStore(path: path ?? ":memory:", operation: operation, reason: Self.reason(error))
        default:
            return .storageFailure(operation: operation, reason: Self.reason(error))
        }
    }

    /// Throws ``GarageError/readOnlyStore(path:operation:reason:)`` when the store can only be
    /// read, before anything is attempted.
    private func checkWritable(_ operation: String) throws {
        if let readOnlyReason {
            throw GarageError.readOnlyStore(path: path ?? ":memory:", operation: operation, reason: readOnlyReason)
        }
    }

    /// Limits the store file to `count` pages on the writer connection, as a full disk would:
    /// a test seam for ``GarageError/storeFull(path:operation:)``. Returns the page count then.
    @discardableResult
    func limitPageCount(to count: Int) throws -> Int {
        try writer.writeWithoutTransaction { db in
            try Int.fetchOne(db, sql: "PRAGMA max_page_count = \(max(0, count))") ?? 0
        }
    }

    /// The number of pages of the store file (as the writer connection sees it).
    func pageCount() throws -> Int {
        try writer.writeWithoutTransaction { db in try Int.fetchOne(db, sql: "PRAGMA page_count") ?? 0 }
    }

    // MARK: - Access

    /// Whether the current thread runs inside one of the store's database accesses.
    ///
    /// User code runs there (`init(from:)`, the encryption delegate, a custom date strategy).
    /// If it calls the garage, GRDB would stop the process ("Database methods are not
    /// reentrant"): the store throws instead.
    @TaskLocal static var isAccessing = false

    private static func checkNotReentrant(_ operation: @autoclosure () -> String) throws {
        if isAccessing {
            throw GarageError.reentrantCall(operation: operation())
        }
    }

    /// Runs `body` in one read transaction: everything it reads comes from one snapshot.
    func read<T>(_ operation: @autoclosure () -> String, _ body: (Database) throws -> T) throws -> T {
        try readWithoutTransaction(operation()) { db in try Self.inSnapshot(db, body) }
    }

    /// Runs `body` with a reader connection outside any transaction: each statement is its
    /// own snapshot. `body` opens a transaction (``inSnapshot(_:_:)``) when it reads more than
    /// one statement must agree on.
    ///
    /// A retrieve of an object without references reads one row: one statement, with none of
    /// the cost of beginning and committing a transaction.
    func readWithoutTransaction<T>(
        _ operation: @autoclosure () -> String, _ body: (Database) throws -> T
    ) throws -> T {
        try Self.checkNotReentrant(operation())
        do {
            return try withoutActuallyEscaping(body) { body in
                let access = { (db: Database) in try Self.$isAccessing.withValue(true) { try body(db) } }
                if let result = try readers?.withReader({ try $0.unsafeRead(access) }) {
                    return result
                }
                return try writer.unsafeRead(access)
            }
        } catch let error as DatabaseError {
            throw garageError(error, operation: operation())
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

    private static func checkNotReentrant(writing operation: @autoclosure () -> String) throws {
        try checkNotReentrant(operation())
        if isFeedingWriter {
            throw GarageError.reentrantCall(operation: operation())
        }
    }

    /// Writes the rows `produce` sends to `stream` in one immediate transaction, on the writer,
    /// while `produce` runs on this thread. Returns the changes written when `observed`.
    func write(_ operation: String, streaming produce: (RowStream) throws -> Void, observed: Bool) throws -> ChangeSet? {
        try Self.checkNotReentrant(writing: operation)
        try checkWritable(operation)
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
            // The writer's own failure reaches the producer through `send`.
            if let error = error as? DatabaseError {
                throw garageError(error, operation: operation)
            }
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
        try checkWritable(operation)
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
        try checkWritable(operation)
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
}
