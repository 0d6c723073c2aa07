import Foundation
import GRDB
import GarageLiteCore

/// The store in an SQLite file (or in memory), through GRDB: the one ``StorageEngine`` today.
///
/// File stores use a `DatabasePool` (WAL mode: readers never wait for the writer, and each
/// read transaction is one snapshot), and read synchronously through ``ReaderConnections``,
/// which cost less per read than the pool's readers. In-memory stores use a `DatabaseQueue`.
package final class SQLiteEngine: StorageEngine, WatchesOtherCommits {
    package let writer: any DatabaseWriter
    package let path: String?
    /// The read-only connections of a file store's synchronous reads.
    private let readers: ReaderConnections?
    /// Why the store can only be read, or `nil` when it can be written.
    package let readOnlyReason: String?
    package var isReadOnly: Bool { readOnlyReason != nil }
    /// The statements the writer's synchronous accesses have stepped, kept from one access to
    /// the next (a single park is one access): finalized on the writer's queue before it closes.
    private let writerStatements = Protected(StatementsBySQL())

    private init(writer: any DatabaseWriter, path: String?, readers: ReaderConnections? = nil,
                 readOnlyReason: String? = nil) {
        self.writer = writer
        self.path = path
        self.readers = readers
        self.readOnlyReason = readOnlyReason
        if let path, readOnlyReason == nil { OpenStoreFiles.opened(Self.absolute(path)) }
    }

    /// Closes the store so that its commits are durable (see `StoreFile+Closing.swift`): the
    /// garage's read-only connections first, then a checkpoint of the log into the store file;
    /// the pool closes its own readers, then its writer, after this body. When the writer is
    /// the last connection to the file, SQLite removes the emptied log as it closes.
    deinit {
        // The writer can't close while a statement of its connection is left unfinalized.
        writer.unsafeReentrantWrite { _ in writerStatements.write { $0.removeAll() } }
        readers?.close()
        guard let path, readOnlyReason == nil else { return }
        let absolutePath = Self.absolute(path)
        StoreFile.checkpointLog(path: absolutePath)
        OpenStoreFiles.closed(absolutePath)
    }

    /// `path` from the root: a relative path must name the same file at exit, whatever the
    /// working directory has become.
    private static func absolute(_ path: String) -> String {
        URL(fileURLWithPath: path).path
    }

    private static func configuration(busyTimeout: TimeInterval) -> Configuration {
        var configuration = Configuration()
        configuration.label = "GarageLite"
        // Under ordinary contention a writer waits for the lock instead of failing.
        configuration.busyMode = .timeout(busyTimeout)
        return configuration
    }

    // MARK: - Opening

    /// Opens the store file at `path`, creating it if needed.
    ///
    /// A file that is not a GarageLite store, or that was written by a newer format
    /// version, is refused before anything is written to it.
    ///
    /// - parameter syncsEveryCommit: SQLite's `synchronous = FULL` (`GarageEngine.Durability.full`)
    ///   rather than `NORMAL`, with WAL mode.
    /// - parameter migrations: ``Schema/migrations``, or in tests, those with a next version
    ///   appended.
    package static func open(
        path: String, busyTimeout: TimeInterval, syncsEveryCommit: Bool = false,
        migrations: [Schema.Migration] = Schema.migrations
    ) throws -> SQLiteEngine {
        let deadline = Date().addingTimeInterval(busyTimeout)
        while true {
            do {
                return try openOnce(
                    path: path, busyTimeout: busyTimeout, syncsEveryCommit: syncsEveryCommit, migrations: migrations)
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
        path: String, busyTimeout: TimeInterval, syncsEveryCommit: Bool, migrations: [Schema.Migration]
    ) throws -> SQLiteEngine {
        try StoreFile.checkBeforeOpening(path: path, supportedVersion: migrations.last?.version ?? 0)
        let configuration = configuration(busyTimeout: busyTimeout)
        if let reason = try StoreFile.readOnlyReason(path: path) {
            return try openReadOnly(path: path, reason: reason, configuration: configuration, migrations: migrations)
        }
        let pool = try DatabasePool(path: path, configuration: configuration)
        try pool.writeWithoutTransaction { db in
            try SQLiteConnection(db).transaction { try Schema.migrate(db, path: path, migrations: migrations) }
            // After the pool's own setup, which sets NORMAL with WAL mode; only the writer
            // commits, and it keeps its connection for the pool's life.
            try db.execute(sql: syncsEveryCommit ? "PRAGMA synchronous = FULL" : "PRAGMA synchronous = NORMAL")
        }
        let readers = ReaderConnections(
            path: path, configuration: configuration, maximumCount: configuration.maximumReaderCount)
        return SQLiteEngine(writer: pool, path: path, readers: readers)
    }

    /// Opens a new, empty store in memory.
    package static func inMemory() throws -> SQLiteEngine {
        do {
            let queue = try DatabaseQueue(configuration: configuration(busyTimeout: 0))
            try queue.writeWithoutTransaction { db in
                try SQLiteConnection(db).transaction { try Schema.migrate(db, path: ":memory:") }
            }
            return SQLiteEngine(writer: queue, path: nil)
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
    package static func openReadOnly(
        path: String, reason: String, busyTimeout: TimeInterval = 0, migrations: [Schema.Migration] = Schema.migrations
    ) throws -> SQLiteEngine {
        try StoreFile.checkBeforeOpening(path: path, supportedVersion: migrations.last?.version ?? 0)
        guard FileManager.default.fileExists(atPath: path) else {
            throw GarageError.cannotOpenStore(path: path, reason: "the file does not exist, and a read-only garage can't create it")
        }
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
    ) throws -> SQLiteEngine {
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
        return SQLiteEngine(writer: pool, path: path, readOnlyReason: reason)
    }

    package static func openingError(_ error: any Error, path: String) -> GarageError {
        if let error = error as? DatabaseError, isDiskFull(error, path: path) {
            return .storeFull(path: path, operation: "open the store")
        }
        if let error = error as? DatabaseError, error.resultCode == .SQLITE_NOTADB {
            return .notAGarageStore(path: path, reason: "it is not an SQLite database")
        }
        if let error = error as? DatabaseError, error.resultCode == .SQLITE_CORRUPT {
            return .damagedStore(path: path, operation: "open the store", reason: reason(error))
        }
        return .cannotOpenStore(path: path, reason: reason(error))
    }

    /// Whether `error` means that the disk is full: SQLite says so, or an I/O error it can't
    /// explain happened on a full volume (see ``StoreFile/isVolumeFull(path:)``).
    private static func isDiskFull(_ error: DatabaseError, path: String) -> Bool {
        switch error.resultCode {
        case .SQLITE_FULL: true
        case .SQLITE_IOERR, .SQLITE_CANTOPEN: path != ":memory:" && StoreFile.isVolumeFull(path: path)
        default: false
        }
    }

    package static func reason(_ error: any Error) -> String {
        if let error = error as? DatabaseError {
            return "\(error.message ?? "\(error.resultCode)") (SQLite error \(error.extendedResultCode.rawValue))"
        }
        return "\(error)"
    }

    // MARK: - Errors

    package func garageError(_ error: any Error, operation: String) -> any Error {
        guard let error = error as? DatabaseError else { return error }
        let path = path ?? ":memory:"
        switch error.resultCode {
        case .SQLITE_BUSY, .SQLITE_LOCKED:
            return GarageError.storeBusy(operation: operation, path: path)
        case _ where Self.isDiskFull(error, path: path):
            return GarageError.storeFull(path: path, operation: operation)
        case .SQLITE_READONLY:
            return GarageError.readOnlyStore(path: path, operation: operation,
                                             reason: readOnlyReason ?? Self.reason(error))
        case .SQLITE_CORRUPT, .SQLITE_NOTADB:
            return GarageError.damagedStore(path: path, operation: operation, reason: Self.reason(error))
        case .SQLITE_SCHEMA:
            // SQLite prepares a statement again by itself when another connection changed the
            // schema (and `SQLiteConnection.step` once more); what still fails is a race with
            // that change, which the next call doesn't meet: the folder and the disk are fine.
            return GarageError.storeLayoutChanged(path: path, operation: operation)
        case .SQLITE_CONSTRAINT where error.message.flatMap(EncryptionGuard.Refusal.init(rawValue:)) != nil:
            // The encryption guard's triggers (Schema.encryptionGuard(_:)).
            return error.message.flatMap(EncryptionGuard.Refusal.init(rawValue:))!.garageError(path: path)
        default:
            return GarageError.storageFailure(operation: operation, reason: Self.reason(error))
        }
    }

    /// Throws ``GarageError/readOnlyStore(path:operation:reason:)`` when the store can only be
    /// read, before anything is attempted.
    private func checkWritable(_ operation: String) throws {
        if let readOnlyReason {
            throw GarageError.readOnlyStore(path: path ?? ":memory:", operation: operation, reason: readOnlyReason)
        }
    }

    // MARK: - Access

    package func read<T>(_ operation: @autoclosure () -> String, _ body: (any RowStatements) throws -> T) throws -> T {
        do {
            return try withoutActuallyEscaping(body) { body in
                if let result = try readers?.withReader({ db, statements in
                    try body(SQLiteConnection(db, statements: statements))
                }) {
                    return result
                }
                return try writer.unsafeRead { db in try body(SQLiteConnection(db)) }
            }
        } catch {
            throw garageError(error, operation: operation())
        }
    }

    package func startRead(_ operation: String, _ body: @escaping @Sendable (Result<any RowStatements, any Error>) -> Void) {
        writer.asyncUnsafeRead { result in
            body(result.map { SQLiteConnection($0) })
        }
    }

    package func write<T>(_ operation: String, _ body: (any RowWriteStatements) throws -> T) throws -> T {
        try checkWritable(operation)
        do {
            return try writer.writeWithoutTransaction { db in
                try writerStatements.write { try body(SQLiteConnection(db, statements: $0)) }
            }
        } catch {
            throw garageError(error, operation: operation)
        }
    }

    package func startWrite(_ operation: String, _ body: @escaping @Sendable (Result<any RowWriteStatements, any Error>) -> Void) {
        do {
            try checkWritable(operation)
        } catch {
            body(.failure(error))
            return
        }
        writer.asyncWriteWithoutTransaction { db in
            body(.success(SQLiteConnection(db)))
        }
    }

    package var isShared: Bool { path != nil }

    package func startWatch(_ body: @escaping @Sendable (Result<any CountsOtherCommits, any Error>) -> Void) {
        writer.asyncWriteWithoutTransaction { db in
            body(.success(SQLiteConnection(db)))
        }
    }

    // MARK: - Test seams

    /// Limits the store file to `count` pages on the writer connection, as a full disk would:
    /// a test seam for ``GarageError/storeFull(path:operation:)``. Returns the page count then.
    @discardableResult
    package func limitPageCount(to count: Int) throws -> Int {
        try writer.writeWithoutTransaction { db in
            try Int.fetchOne(db, sql: "PRAGMA max_page_count = \(max(0, count))") ?? 0
        }
    }

    /// The writer connection's `synchronous` setting: 1 (NORMAL) or 2 (FULL).
    package func synchronousSetting() throws -> Int {
        try writer.writeWithoutTransaction { db in try Int.fetchOne(db, sql: "PRAGMA synchronous") ?? -1 }
    }

    /// The number of pages of the store file (as the writer connection sees it).
    package func pageCount() throws -> Int {
        try writer.writeWithoutTransaction { db in try Int.fetchOne(db, sql: "PRAGMA page_count") ?? 0 }
    }
}
