import Foundation
import GarageLite
import Logging
import NIOCore
import NIOPosix
import PostgresNIO

/// The connections of one PostgreSQL garage: a pool that lends a connection to a thread for
/// the length of one access, without `async`.
///
/// Why not `PostgresClient`: its lease is `async`, and resumes on Swift's cooperative pool. The
/// garage's synchronous API would then block a cooperative thread (an app's task calling
/// `retrieve`) waiting for another cooperative thread to finish the lease: with every thread
/// of the pool blocked so (two on this machine), nothing runs again. Here a lease is a lock and
/// a future waited for on the caller's thread; the connections' event loops (postgres-nio's
/// default group) do the I/O.
///
/// A connection that failed on the network is closed and not lent again; the next lease makes
/// a new one, so a garage carries on after a server restart. At most `maximumCount`
/// connections are open; a lease waits for one to come back.
final class PostgresConnections: Sendable {
    private let configuration: PostgresConnection.Configuration
    private let maximumCount: Int
    /// Run on every new connection, in order (the session's settings).
    private let setup: [String]
    private let logger: Logger
    private let eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton

    private struct State {
        var idle: [PooledConnection] = []
        var open = 0
        var isClosed = false
        var nextID = 1
    }
    private let state = Protected(State())
    /// Signalled when a connection comes back, or a place in the pool frees up.
    private let returned = NSCondition()

    /// How many connections wait for the next lease; more are closed as they come back, so that
    /// a garage that was busy on many threads once doesn't keep the server's connections.
    private let maximumIdle = 2
    /// How long a lease waits for the server to accept a connection when it has too many.
    private let busyTimeout: TimeInterval

    init(configuration: PostgresConnection.Configuration, maximumCount: Int, busyTimeout: TimeInterval, setup: [String]) {
        self.configuration = configuration
        self.busyTimeout = busyTimeout
        self.maximumCount = max(1, maximumCount)
        self.setup = setup
        self.logger = Logger(label: "GarageLitePostgres", factory: { _ in SwiftLogNoOpLogHandler() })
    }

    /// Why a connection could not be lent.
    struct Failure: Error, CustomStringConvertible {
        var reason: String
        var description: String { reason }

        /// No statement of the access was sent: nothing was written.
        func garageError(path: String, operation: String) -> GarageError {
            .connectionLost(path: path, operation: operation, mayHaveCommitted: false, reason: "the server can't be reached: \(reason)")
        }
    }

    /// Runs `body` with a connection of its own, on this thread.
    func withConnection<T>(_ body: (PooledConnection) throws -> T) throws -> T {
        let connection = try lease()
        do {
            let result = try body(connection)
            giveBack(connection)
            return result
        } catch {
            giveBack(connection, after: error)
            throw error
        }
    }

    /// Runs `body` with a connection of its own on which nothing else runs until the
    /// connection closes (the commit listener's), or fails.
    func dedicatedConnection() throws -> PostgresConnection {
        try connect()
    }

    /// Closes every idle connection, and the others as they come back.
    func close() {
        let idle = state.write { state -> [PooledConnection] in
            state.isClosed = true
            defer { state.idle = [] }
            state.open -= state.idle.count
            return state.idle
        }
        for pooled in idle { Self.closeSoon(pooled.connection) }
        returned.broadcast()
    }

    /// The pool's connections now: open ones, and those leased (open but not idle).
    var use: ConnectionPoolUse {
        state.read { ConnectionPoolUse(inUse: $0.open - $0.idle.count, open: $0.open, maximum: maximumCount) }
    }

    private func lease() throws -> PooledConnection {
        returned.lock()
        while true {
            let choice = state.write { state -> PooledConnection?? in
                if state.isClosed { return .some(nil) }
                if let connection = state.idle.popLast() { return connection }
                if state.open < maximumCount {
                    state.open += 1
                    return .some(nil)
                }
                return nil
            }
            switch choice {
            case .some(.some(let connection)) where !connection.isClosed:
                returned.unlock()
                return connection
            case .some(.some):
                // Closed while idle (the server went away): its place is free.
                state.write { $0.open -= 1 }
                continue
            case .some(.none):
                returned.unlock()
                if state.read(\.isClosed) { throw Failure(reason: "the garage was closed") }
                do {
                    return PooledConnection(try connect(), busyTimeout: busyTimeout)
                } catch {
                    state.write { $0.open -= 1 }
                    returned.broadcast()
                    throw error
                }
            case .none:
                returned.wait()
            }
        }
    }

    private func giveBack(_ connection: PooledConnection, after error: (any Error)? = nil) {
        var broken = connection.isClosed
        if let error, PostgresProblem.isConnectionLoss(error) { broken = true }
        // A statement's answer that never came (closed, or past its deadline and being closed).
        if error is Failure { broken = true }
        if broken, error != nil {
            // The server restarted, or the network went: the idle connections opened before are
            // as dead, and some aren't known to be (a socket in CLOSE-WAIT whose goodbye no one
            // read: a statement on it waits for its deadline, minutes). Closed now; the next
            // leases open new ones.
            let idle = state.write { state -> [PooledConnection] in
                defer { state.idle = [] }
                state.open -= state.idle.count
                return state.idle
            }
            for pooled in idle { Self.closeSoon(pooled.connection) }
            returned.broadcast()        // their places are free: every waiter may open one
        }
        let keep = state.write { state -> Bool in
            guard !broken, !state.isClosed, state.idle.count < maximumIdle else {
                state.open -= 1
                return false
            }
            state.idle.append(connection)
            return true
        }
        if !keep { Self.closeSoon(connection.connection) }
        returned.lock()
        returned.signal()
        returned.unlock()
    }

    private func connect() throws -> PostgresConnection {
        let id = state.write { state -> Int in
            defer { state.nextID += 1 }
            return state.nextID
        }
        var connection: PostgresConnection?
        let deadline = Date().addingTimeInterval(busyTimeout)
        var pause = 0.005
        while connection == nil {
            do {
                connection = try PostgresConnection.connect(
                    on: eventLoopGroup.next(), configuration: configuration, id: id, logger: logger).wait()
            } catch where PostgresProblem.sqlState(error) == "53300" && Date() < deadline {
                // too_many_connections: the server is at its limit; its other clients give some back.
                Thread.sleep(forTimeInterval: pause)
                pause = min(0.2, pause * 2)
            } catch {
                throw Failure(reason: PostgresProblem.reason(error))
            }
        }
        guard let connection else { throw Failure(reason: "no connection") }
        do {
            for statement in setup {
                _ = try connection.query(PostgresQuery(unsafeSQL: statement), logger: logger).wait()
            }
        } catch {
            Self.closeSoon(connection)
            throw error
        }
        return connection
    }

    /// Starts closing `connection`, without waiting.
    static func closeSoon(_ connection: PostgresConnection) {
        let closing: EventLoopFuture<Void> = connection.close()
        // postgres-nio requires a connection to be closed before it is released: held until then.
        closing.whenComplete { _ in withExtendedLifetime(connection) {} }
    }

    /// The logger the connections' queries log to (nowhere: the library never prints).
    var queryLogger: Logger { logger }
}
