import Foundation
import GRDB
import GarageLiteCore

/// A few read-only connections to a store file, which serve the garage's synchronous reads.
///
/// A by-identifier retrieve is one short statement, and GRDB's `DatabasePool.read` and
/// `unsafeRead` cost more than that statement on every call: the reader checkout builds a
/// generic key path, and `PRAGMA schema_version` (GRDB's schema cache check) takes and
/// releases SQLite's WAL read lock once more. Measured on this project's 2-core machine
/// (a driver running 100k random by-identifier selects on a 100k-row file): an empty
/// `DatabasePool.unsafeRead` took about as long as the select itself.
///
/// A `DatabaseQueue` opened read-only on the same file runs a closure with one
/// `DispatchQueue.sync`, and nothing else. The garage keeps up to `maximumCount` of them:
/// a read borrows an idle one, or opens one more, and gives it back; when all are busy, or
/// one can't be opened (a read-only folder without the `-shm` file, say), the read goes to
/// the pool as before. Each statement outside a transaction still reads the latest commit,
/// and SQLite recompiles a cached statement by itself if another connection changes the
/// schema; the garage never uses GRDB's schema cache on these connections.
///
/// Only `Store` uses this type.
package final class ReaderConnections: Sendable {
    private let path: String
    private let configuration: Configuration
    private let maximumCount: Int
    private let state = Protected(State())

    private struct State {
        var idle: [Reader] = []
        var openCount = 0
        /// Set when a connection could not be opened: every read then uses the pool.
        var unavailable = false
    }

    package init(path: String, configuration: Configuration, maximumCount: Int) {
        var configuration = configuration
        configuration.readonly = true
        configuration.label = (configuration.label ?? "GarageLite") + ".reader"
        self.path = path
        self.configuration = configuration
        self.maximumCount = maximumCount
    }

    /// A connection, and the statements its reads have stepped (``StatementsBySQL``), kept
    /// from one read to the next.
    package struct Reader: Sendable {
        package let queue: DatabaseQueue
        package let statements = Protected(StatementsBySQL())

        /// Lets the statements go, on the connection's queue, then closes it: it can't close
        /// while one of its statements is unfinalized (SQLITE_BUSY).
        package func close() throws {
            queue.inDatabase { _ in statements.write { $0.removeAll() } }
            try queue.close()
        }
    }

    /// Runs `body` on an idle reader connection, and returns `nil` without running it when
    /// none is free and no other can be opened.
    package func withReader<T>(_ body: (Database, StatementsBySQL) throws -> T) rethrows -> T? {
        guard let reader = borrow() else { return nil }
        defer { state.write { $0.idle.append(reader) } }
        return try reader.queue.unsafeRead { db in try reader.statements.write { try body(db, $0) } }
    }

    /// Closes the idle connections, and opens none from now on: the engine closes them before
    /// its writer, because SQLite checkpoints the log only when the last connection to close
    /// may write, and a read-only one can't. Returns how many failed to close (they close
    /// when they are let go).
    @discardableResult
    package func close() -> Int {
        let idle = state.write { state in
            defer {
                state.idle = []
                state.unavailable = true
            }
            return state.idle
        }
        return idle.filter { (try? $0.close()) == nil }.count
    }

    private func borrow() -> Reader? {
        enum Next { case reuse(Reader), open, none }
        let next: Next = state.write { state in
            if let reader = state.idle.popLast() { return .reuse(reader) }
            if state.unavailable || state.openCount >= maximumCount { return .none }
            state.openCount += 1
            return .open
        }
        switch next {
        case .reuse(let reader):
            return reader
        case .none:
            return nil
        case .open:
            do {
                return Reader(queue: try DatabaseQueue(path: path, configuration: configuration))
            } catch {
                state.write {
                    $0.openCount -= 1
                    $0.unavailable = true
                }
                return nil
            }
        }
    }
}
