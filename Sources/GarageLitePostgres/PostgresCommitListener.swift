import Foundation
import GarageLite
import NIOCore
import PostgresNIO

/// Hears the commits other garages make in a schema, through `LISTEN`: every transaction that
/// changes its rows or facts notifies the schema's channel once, with its writer's
/// `garage.origin` (`PostgresSchema`'s `garage_notify`).
///
/// ``counter`` is what the garage's `CommitWatch` compares (as SQLite's `data_version`): it
/// changes with each notification from another origin, and each time the listening connection
/// is made again (a server restart, a dropped network: commits may have been missed, so the
/// watch compares every observed object's stamps once more). A garage's own commits don't
/// change it: the garage tells its observers of those itself.
final class PostgresCommitListener: Sendable {
    private let connections: PostgresConnections
    private let channel: String
    private let origin: String

    private struct State {
        var counter = 0
        var isStarted = false
        var isStopped = false
        var connection: PostgresConnection?
        /// What to call when the counter changes, by registration.
        var wakers: [Int: @Sendable () -> Void] = [:]
        var nextWaker = 0
    }
    private let state = Protected(State())

    init(connections: PostgresConnections, channel: String, origin: String) {
        self.connections = connections
        self.channel = channel
        self.origin = origin
    }

    /// Changes when another garage commits, or when commits may have been missed.
    var counter: Int { state.read(\.counter) }

    /// Calls `wake` each time the counter changes, until the returned function is called.
    func wakeOnChange(_ wake: @escaping @Sendable () -> Void) -> @Sendable () -> Void {
        let key = state.write { state -> Int in
            state.nextWaker += 1
            state.wakers[state.nextWaker] = wake
            return state.nextWaker
        }
        return { [weak self] in self?.state.write { _ = $0.wakers.removeValue(forKey: key) } }
    }

    /// Changes the counter and wakes who asked.
    private func bump() {
        let wakers = state.write { state -> [@Sendable () -> Void] in
            state.counter += 1
            return Array(state.wakers.values)
        }
        for wake in wakers { wake() }
    }

    /// Starts listening, on a connection of its own, unless it listens already.
    func start() {
        let starts = state.write { state -> Bool in
            guard !state.isStarted, !state.isStopped else { return false }
            state.isStarted = true
            return true
        }
        guard starts else { return }
        let thread = Thread { [self] in listen() }
        thread.name = "GarageLitePostgres.listen"
        thread.start()
    }

    /// Stops listening, for good.
    func stop() {
        let connection = state.write { state -> PostgresConnection? in
            state.isStopped = true
            return state.connection
        }
        connection.map(PostgresConnections.closeSoon)
    }

    /// Connects, listens until the connection closes, and again, until stopped; waits a little
    /// longer after each failure (up to a second).
    private func listen() {
        var pause = 0.01
        while !state.read(\.isStopped) {
            do {
                let connection = try connections.dedicatedConnection()
                let stopped = state.write { state -> Bool in
                    state.connection = connection
                    return state.isStopped
                }
                if stopped {
                    PostgresConnections.closeSoon(connection)
                    return
                }
                connection.addListener(channel: channel) { [self] _, notification in
                    if notification.payload != origin { bump() }
                }
                _ = try connection.query(PostgresQuery(unsafeSQL: "LISTEN \(channel)"), logger: connections.queryLogger).wait()
                // Listening now: whatever was committed before is found by comparing stamps.
                bump()
                pause = 0.01
                try? connection.closeFuture.wait()
            } catch {
                pause = min(1, pause * 2)
            }
            bump()
            Thread.sleep(forTimeInterval: pause)
        }
    }
}
