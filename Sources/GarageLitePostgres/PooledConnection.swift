import Foundation
import GarageLite
import Logging
import NIOConcurrencyHelpers
import NIOCore
import PostgresNIO

/// One connection of a garage's pool (``PostgresConnections``), with what lives as long as it:
/// its prepared statements, and the answers a thread waits for on it.
///
/// **Prepared statements.** The statements the garage runs again and again (a row by key, a
/// page, a claim, the batch upsert: ``PostgresStatement``) are prepared once per connection,
/// so the server parses and plans them once. They go through postgres-nio's `prepare(query:)`,
/// whose future-based API suits a synchronous garage (its `PostgresPreparedStatement` API is
/// `async` only). Two things about that API: its rows arrive in the binary format but are
/// labelled text (postgres-nio 1.33.2 keeps the statement's description, whose formats are not
/// yet known, while every `Bind` it sends asks for binary), so the garage reads every cell as
/// binary (``PostgresStatements/cell(_:_:)``); and its errors come as the older `PostgresError`,
/// which ``PostgresProblem`` reads as well as `PSQLError`.
///
/// **Answers.** A thread waits for an answer with ``answer(_:)``, which also fails when the
/// connection closes first (postgres-nio never answers a query written to a closed channel) or
/// when the server stays silent past ``answerDeadline``.
final class PooledConnection: Sendable {
    let connection: PostgresConnection

    private struct State {
        var prepared: [PostgresStatement: PreparedQuery] = [:]
        /// The waits in progress, failed when the connection closes.
        var waiting: [Int: @Sendable (any Error) -> Void] = [:]
        var nextWait = 0
        var isClosed = false
    }
    private let state = Protected(State())

    /// `busyTimeout`: how long a write waits for the schema's lock (`lock_timeout`), which the
    /// deadline of an answer leaves room for.
    init(_ connection: PostgresConnection, busyTimeout: TimeInterval) {
        self.connection = connection
        answerDeadline = Self.answerDeadline(busyTimeout: busyTimeout)
        // One callback for the connection's life (one per wait would pile up on a connection
        // the pool keeps for hours).
        connection.closeFuture.whenComplete { [state] _ in
            let waiting = state.write { state in
                state.isClosed = true
                defer { state.waiting = [:] }
                return Array(state.waiting.values)
            }
            for fail in waiting {
                fail(PostgresConnections.Failure(reason: "the connection closed before the server answered (a restart, a lost network)"))
            }
        }
    }

    var isClosed: Bool { connection.isClosed }

    /// How long a statement's answer is waited for at most: 120 seconds, or a minute more than
    /// the busy timeout (a statement may wait that long for the schema's lock).
    let answerDeadline: Int64

    /// The deadline of an answer for a garage with `busyTimeout`, in seconds.
    static func answerDeadline(busyTimeout: TimeInterval) -> Int64 {
        max(120, Int64(busyTimeout.rounded(.up)) + 60)
    }

    /// The answer `future` brings, waited for on this thread (see ``answers(_:deadline:)``).
    func answer<T: Sendable>(_ future: EventLoopFuture<T>, deadline: Int64? = nil) throws -> T {
        try answers([future], deadline: deadline)[0].get()
    }

    /// The answers `futures` bring, in order, waited for on this thread: each fails when the
    /// connection closes first, or when the server doesn't answer them all within `deadline`
    /// seconds, ``answerDeadline`` unless given (seen with a socket in CLOSE-WAIT, the server's
    /// goodbye unread: the connection is then closed, and the pool drops it).
    ///
    /// One hop to the event loop, however many futures: their callbacks are added there, and
    /// this thread sleeps on a condition until the last one comes (a future's `wait()`, or a
    /// callback added from this thread, costs a hop each, and a timer scheduled and cancelled
    /// two more: together most of a by-identifier retrieve's client time).
    func answers<T: Sendable>(_ futures: [EventLoopFuture<T>], deadline: Int64? = nil) throws -> [Result<T, any Error>] {
        let deadline = deadline ?? answerDeadline
        guard let loop = futures.first?.eventLoop else { return [] }
        let done = ConditionLock(value: false)
        let outcome = Protected<[Result<T, any Error>]?>(nil)
        let finish = { @Sendable (results: [Result<T, any Error>]) in
            done.lock()
            outcome.write { if $0 == nil { $0 = results } }
            done.unlock(withValue: true)
        }
        let wait = state.write { state -> Int? in
            guard !state.isClosed else { return nil }
            defer { state.nextWait += 1 }
            state.waiting[state.nextWait] = { error in finish(futures.map { _ in Result<T, any Error>.failure(error) }) }
            return state.nextWait
        }
        guard let wait else {
            let error = PostgresConnections.Failure(reason: "the connection closed before the server answered (a restart, a lost network)")
            return futures.map { _ in Result<T, any Error>.failure(error) }
        }
        defer { state.write { _ = $0.waiting.removeValue(forKey: wait) } }
        loop.execute {
            let gathered = NIOLoopBoundBox((results: [Result<T, any Error>?](repeating: nil, count: futures.count),
                                            remaining: futures.count), eventLoop: loop)
            for (index, future) in futures.enumerated() {
                future.whenComplete { result in
                    gathered.value.results[index] = result
                    gathered.value.remaining -= 1
                    if gathered.value.remaining == 0 { finish(gathered.value.results.map { $0! }) }
                }
            }
        }
        if done.lock(whenValue: true, timeoutSeconds: Double(deadline)) {
            done.unlock()
        } else {
            finish(futures.map { _ in Result<T, any Error>.failure(PostgresConnections.Failure(
                reason: "the server did not answer within \(deadline) seconds")) })
            PostgresConnections.closeSoon(connection)
        }
        return outcome.read { $0 ?? [] }
    }

    /// Runs `statement` with `binds`, prepared on this connection at its first use; its rows.
    func execute(_ statement: PostgresStatement, schema: String, _ binds: [PostgresData]) throws -> EventLoopFuture<[PostgresRow]> {
        try prepared(statement, schema: schema).execute(binds)
    }

    private func prepared(_ statement: PostgresStatement, schema: String) throws -> PreparedQuery {
        if let prepared = state.read({ $0.prepared[statement] }) { return prepared }
        let prepared = try answer(connection.prepare(query: statement.sql(schema: schema)))
        state.write { $0.prepared[statement] = prepared }
        return prepared
    }
}

/// An access's connection was lost (or its answer never came), and whether the access had sent
/// a commit (``PostgresStatements``): ``PostgresEngine`` reports it as
/// ``GarageError/connectionLost(path:operation:mayHaveCommitted:reason:)``.
struct ConnectionLoss: Error, CustomStringConvertible {
    /// How the connection was lost.
    var reason: String
    /// Whether the access sent a commit before: its outcome is then unknown; otherwise nothing was written.
    var mayHaveCommitted: Bool
    var description: String { reason }
}

/// What went wrong on the server or the connection, read from either of postgres-nio's error
/// types (`PSQLError`, and `PostgresError` from its prepared statements).
enum PostgresProblem {
    /// The SQLSTATE the server gave, if it answered with an error.
    static func sqlState(_ error: any Error) -> String? {
        field(error, .sqlState, .sqlState)
    }

    /// The server's message, if it answered with an error.
    static func message(_ error: any Error) -> String? {
        field(error, .message, .message)
    }

    private static func field(_ error: any Error, _ field: PSQLError.ServerInfo.Field,
                              _ legacy: PostgresMessage.Error.Field) -> String? {
        if let error = error as? PSQLError { return error.serverInfo?[field] }
        if case .server(let message)? = error as? PostgresError { return message.fields[legacy] }
        return nil
    }

    /// Whether `error` says the connection is gone (the server restarted, the network dropped):
    /// the pool then drops the connection, and the next call makes a new one.
    static func isConnectionLoss(_ error: any Error) -> Bool {
        if error is ConnectionLoss { return true }
        if let state = sqlState(error), ["57P01", "57P02", "57P03", "08000", "08003", "08006"].contains(state) { return true }
        if let error = error as? PSQLError {
            return [.serverClosedConnection, .clientClosedConnection, .connectionError, .uncleanShutdown].contains(error.code)
        }
        if let error = error as? PostgresError {
            switch error {
            case .connectionClosed: return true
            case .protocol(let reason): return reason == "Unexpected connection close"
            default: return false
            }
        }
        return error is ChannelError || error is IOError
    }

    /// What PostgreSQL said, for an error's reason.
    static func reason(_ error: any Error) -> String {
        if let message = message(error) {
            return message + (sqlState(error).map { " (SQLSTATE \($0))" } ?? "")
        }
        if let error = error as? PSQLError {
            switch error.code {
            case .sslUnsupported:
                return "the server does not offer TLS, which sslmode=require asks for (sslmode=prefer or disable connects "
                    + "without it, on a network you trust)"
            case .connectionError where "\(error.underlying.map { "\($0)" } ?? "")".contains("Connection refused"):
                return "the connection was refused: no server listens at that host and port"
            case .serverClosedConnection:
                return "the server closed the connection"
            case .clientClosedConnection:
                return "the connection was closed"
            case .uncleanShutdown:
                return "the connection ended without the server's goodbye"
            default:
                if let underlying = error.underlying { return "\(error.code): \(underlying)" }
                return "\(error.code)"
            }
        }
        return "\(error)"
    }
}
