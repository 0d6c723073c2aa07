import Foundation
import GarageLite
import Logging
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

    init(_ connection: PostgresConnection) {
        self.connection = connection
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

    /// How long a statement's answer is waited for at most (the schema lock's wait is shorter:
    /// `lock_timeout`, the busy timeout).
    static let answerDeadline: Int64 = 120

    /// The answer `future` brings, waited for on this thread; fails when the connection closes
    /// first, or when the server doesn't answer within ``answerDeadline`` seconds (seen with a
    /// socket in CLOSE-WAIT, the server's goodbye unread: the connection is then closed, and the
    /// pool drops it).
    func answer<T: Sendable>(_ future: EventLoopFuture<T>) throws -> T {
        let promise = future.eventLoop.makePromise(of: T.self)
        let settled = Protected(false)
        let settle = { @Sendable (result: Result<T, any Error>) in
            if settled.write({ was in defer { was = true }; return !was }) { promise.completeWith(result) }
        }
        let wait = state.write { state -> Int? in
            guard !state.isClosed else { return nil }
            defer { state.nextWait += 1 }
            state.waiting[state.nextWait] = { settle(.failure($0)) }
            return state.nextWait
        }
        guard let wait else {
            settle(.failure(PostgresConnections.Failure(reason: "the connection closed before the server answered (a restart, a lost network)")))
            return try promise.futureResult.wait()
        }
        future.whenComplete(settle)
        let connection = self.connection
        let deadline = future.eventLoop.scheduleTask(in: .seconds(Self.answerDeadline)) {
            settle(.failure(PostgresConnections.Failure(reason: "the server did not answer within \(Self.answerDeadline) seconds")))
            PostgresConnections.closeSoon(connection)
        }
        defer {
            deadline.cancel()
            state.write { _ = $0.waiting.removeValue(forKey: wait) }
        }
        return try promise.futureResult.wait()
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
            if let underlying = error.underlying { return "\(error.code): \(underlying)" }
            return "\(error.code)"
        }
        return "\(error)"
    }
}
