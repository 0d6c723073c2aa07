import Foundation
import GarageLite
import Logging
import NIOCore
import NIOPosix
import PostgresNIO

/// The store in a schema of a PostgreSQL database: the second ``StorageEngine``.
///
/// **Threads.** postgres-nio is asynchronous; the garage's synchronous API is not. A statement
/// here is sent on the connection's event loop and *waited for* on the calling thread, which is
/// never one of the engine's event loops nor, for the `async` entry points, one of Swift's
/// cooperative threads: ``startRead(_:_:)`` and ``startWrite(_:_:)`` run their work on the
/// engine's own dispatch queues. The connections come from ``PostgresConnections``, a pool
/// that leases without `async` (see there why not `PostgresClient`).
///
/// **Writes.** One writer at a time per garage, as on SQLite (the store serializes them in the
/// process with ``writes``); across processes and machines, every write transaction takes the
/// schema's advisory lock (``PostgresStatements/transaction(_:)``) so that the rules' "read the
/// row, apply the rule, store it" is never interleaved with another instance's. Claims are the
/// exception, and scale out: ``PostgresStatements/claimRows(ofType:status:limit:excluding:claim:now:maximumAttempts:)``
/// takes its rows with `FOR UPDATE SKIP LOCKED` in one statement, without the lock.
final class PostgresEngine: StorageEngine, WatchesOtherCommits, PoolsConnections {
    let connections: PostgresConnections
    /// The schema of the store (a validated lowercase identifier).
    let schema: String
    /// The address of the store, without its password: `postgres://user@host:port/database?schema=schema`.
    let path: String?
    var isReadOnly: Bool { false }
    /// This engine's name in the `garage.origin` setting of its connections, which the schema's
    /// notifications carry: the watch tells its own commits from other garages'.
    let origin: String
    /// Serializes the garage's writes in this process: sync writes run on the caller's thread
    /// (`sync`), `async` ones on this queue's.
    private let writes: DispatchQueue
    /// Where the `async` reads run (they block a thread of this queue while PostgreSQL answers).
    private let reads: DispatchQueue
    /// The notifications of other garages' commits (see ``PostgresCommitListener``).
    let listener: PostgresCommitListener

    init(connections: PostgresConnections, schema: String, path: String, origin: String) {
        self.connections = connections
        self.schema = schema
        self.path = path
        self.origin = origin
        self.writes = DispatchQueue(label: "GarageLitePostgres.writes")
        self.reads = DispatchQueue(label: "GarageLitePostgres.reads", attributes: .concurrent)
        self.listener = PostgresCommitListener(connections: connections, channel: PostgresSchema.channel(schema), origin: origin)
    }

    deinit {
        listener.stop()
        connections.close()
    }

    // MARK: - Opening

    /// Opens the garage in `schema` on the database `configuration` names, creating the schema
    /// and its tables when they don't exist, migrating them when they are older; a schema that
    /// holds anything else, or a newer format, is refused untouched.
    static func open(configuration: PostgresConnection.Configuration, schema: String,
                     options: PostgresGarageOptions) throws -> PostgresEngine {
        let path = PostgresSchema.address(configuration, schema: schema)
        guard PostgresSchema.isValidName(schema) else {
            throw GarageError.cannotOpenStore(
                path: path, reason: "the schema name \"\(schema)\" is not a lowercase SQL identifier of 1 to 48 letters, digits "
                    + "and underscores, starting with a letter or underscore")
        }
        let origin = UUID().uuidString
        let connections = PostgresConnections(
            configuration: configuration, maximumCount: options.maximumConnections, busyTimeout: options.busyTimeout, setup: [
                "SET garage.origin = '\(origin)'",
                "SET lock_timeout = '\(Int(options.busyTimeout * 1000))ms'",
            ])
        do {
            try connections.withConnection { connection in
                try PostgresSchema.migrate(PostgresStatements(connection: connection, schema: schema), path: path,
                                           creating: options.createsSchema)
            }
        } catch let error as GarageError {
            connections.close()
            throw error
        } catch {
            connections.close()
            throw GarageError.cannotOpenStore(path: path, reason: PostgresProblem.reason(error))
        }
        return PostgresEngine(connections: connections, schema: schema, path: path, origin: origin)
    }

    // MARK: - Access

    func read<T>(_ operation: @autoclosure () -> String, _ body: (any RowStatements) throws -> T) throws -> T {
        do {
            return try connections.withConnection { connection in
                try body(PostgresStatements(connection: connection, schema: schema))
            }
        } catch {
            throw garageError(error, operation: operation())
        }
    }

    func startRead(_ operation: String, _ body: @escaping @Sendable (Result<any RowStatements, any Error>) -> Void) {
        reads.async { [connections, schema] in
            do {
                try connections.withConnection { connection in
                    body(.success(PostgresStatements(connection: connection, schema: schema)))
                }
            } catch {
                body(.failure(error))
            }
        }
    }

    func write<T>(_ operation: String, _ body: (any RowWriteStatements) throws -> T) throws -> T {
        do {
            return try writes.sync {
                try connections.withConnection { connection in
                    try body(PostgresStatements(connection: connection, schema: schema, writes: true))
                }
            }
        } catch {
            throw garageError(error, operation: operation)
        }
    }

    func startWrite(_ operation: String, _ body: @escaping @Sendable (Result<any RowWriteStatements, any Error>) -> Void) {
        writes.async { [connections, schema] in
            do {
                try connections.withConnection { connection in
                    body(.success(PostgresStatements(connection: connection, schema: schema, writes: true)))
                }
            } catch {
                body(.failure(error))
            }
        }
    }

    // MARK: - Watching other garages' commits

    /// Other garages, processes and machines share every PostgreSQL store.
    var isShared: Bool { true }

    var connectionPoolUse: ConnectionPoolUse { connections.use }

    func wakeOnOthersCommits(_ wake: @escaping @Sendable () -> Void) -> @Sendable () -> Void {
        listener.wakeOnChange(wake)
    }

    /// On the queue of the garage's writes, as the boundary asks: between two of them, after
    /// the first has told its observers (which a look then skips), never while one commits
    /// (a look that ran beside a write read its rows before the garage said they were its
    /// own, and told them again as another garage's).
    func startWatch(_ body: @escaping @Sendable (Result<any CountsOtherCommits, any Error>) -> Void) {
        listener.start()
        let listener = self.listener
        writes.async { [connections, schema] in
            do {
                try connections.withConnection { connection in
                    body(.success(PostgresStatements(connection: connection, schema: schema, listener: listener)))
                }
            } catch {
                body(.failure(error))
            }
        }
    }

    // MARK: - Errors

    func garageError(_ error: any Error, operation: String) -> any Error {
        let path = self.path ?? "postgres"
        if let refusal = error as? EncryptionGuard.Refusal { return refusal.garageError(path: path) }
        if error is GarageError || error is CancellationError { return error }
        if let loss = error as? ConnectionLoss {
            return GarageError.connectionLost(path: path, operation: operation, mayHaveCommitted: loss.mayHaveCommitted, reason: loss.reason)
        }
        if let error = error as? PostgresConnections.Failure { return error.garageError(path: path, operation: operation) }
        if let error = error as? PostgresStatements.RolledBack {
            return GarageError.storageFailure(operation: operation, reason: error.description)
        }
        switch PostgresProblem.sqlState(error) {
        case "55P03", "40001", "40P01":
            // lock_not_available (the lock timeout), serialization_failure, deadlock_detected.
            return GarageError.storeBusy(operation: operation, path: path)
        case "53100":
            return GarageError.storeFull(path: path, operation: operation)
        case "25006", "42501":
            return GarageError.readOnlyStore(path: path, operation: operation, reason: PostgresProblem.reason(error))
        case "P0001":
            if let message = PostgresProblem.message(error), let refusal = EncryptionGuard.Refusal(rawValue: message) {
                return refusal.garageError(path: path)
            }
            return GarageError.storageFailure(operation: operation, reason: "PostgreSQL answered: " + PostgresProblem.reason(error))
        case "XX001", "XX002":
            return GarageError.damagedStore(path: path, operation: operation, reason: PostgresProblem.reason(error))
        default:
            if PostgresProblem.isConnectionLoss(error) {
                // Lost outside the access's statements (while connecting): nothing was sent.
                return GarageError.connectionLost(path: path, operation: operation, mayHaveCommitted: false,
                                                  reason: PostgresProblem.reason(error))
            }
            guard error is PSQLError || error is PostgresError else { return error }
            return GarageError.storageFailure(operation: operation, reason: "PostgreSQL answered: " + PostgresProblem.reason(error))
        }
    }
}
