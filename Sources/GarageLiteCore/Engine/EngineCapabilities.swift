import Foundation

// What only some engines can do. The store asks for each (`as?`) where it would use it, and
// does without it otherwise; the public API says what a garage on an engine without it does.

/// An engine whose store other connections (other garages, other processes) can change, and
/// which tells their commits from the garage's own: observers (``Garage/changes(of:)``) hear of
/// the commits made elsewhere. SQLite on a file has it; in memory, nothing else can commit.
///
/// Without it, a garage's observers hear of its own commits only.
package protocol WatchesOtherCommits: StorageEngine {
    /// Whether other connections can change this store now (SQLite: a store in a file).
    var isShared: Bool { get }

    /// Starts `body` with a connection that reads, between this garage's writes (never during
    /// one), on a read-only store too, and returns at once: the watch's look at other commits.
    func startWatch(_ body: @escaping @Sendable (Result<any CountsOtherCommits, any Error>) -> Void)

    /// Calls `wake` as soon as another connection has probably committed, so that the watch
    /// looks at once rather than at its next interval; returns what stops the calls.
    /// PostgreSQL has it (its notifications); the default never calls `wake`, and the watch
    /// finds other commits at its interval.
    func wakeOnOthersCommits(_ wake: @escaping @Sendable () -> Void) -> @Sendable () -> Void
}

extension WatchesOtherCommits {
    package func wakeOnOthersCommits(_ wake: @escaping @Sendable () -> Void) -> @Sendable () -> Void { {} }
}

/// An engine that keeps a pool of connections to a server (PostgreSQL): what a server's
/// metrics report of it (`garage_store_connections_*`).
package protocol PoolsConnections: StorageEngine {
    /// The pool's connections now.
    var connectionPoolUse: ConnectionPoolUse { get }
}

/// How many connections a pool holds, and how many of them work now.
package struct ConnectionPoolUse: Sendable, Equatable {
    /// Connections that run a statement or a transaction now.
    package var inUse: Int
    /// Connections open (in use, idle, or being made).
    package var open: Int
    /// The most the pool opens.
    package var maximum: Int

    package init(inUse: Int, open: Int, maximum: Int) {
        self.inUse = inUse
        self.open = open
        self.maximum = maximum
    }
}

/// Statements that tell other connections' commits from their own.
package protocol CountsOtherCommits: RowStatements {
    /// A number that changes when another connection (another garage, another process)
    /// commits, and never for this connection's own commits (SQLite: `PRAGMA data_version`).
    func othersCommitCounter() throws -> Int
}

/// Statements that check the database's own storage (SQLite: `integrity_check` of its file):
/// `Garage.check()` lists what they find first, as `IntegrityReport.Problem.sqlite`.
///
/// Without it, a check reports the problems of the rows only.
package protocol ChecksItsFile: RowStatements {
    /// What is wrong with the storage, up to `limit` problems, and whether there were more.
    func fileProblems(limit: Int) throws -> (problems: [IntegrityReport.Problem], isTruncated: Bool)
}

/// Statements that can leave no replaced or deleted data on the disk: a rekey, a decryption
/// and an encryption use them, so that no earlier version of a row (its plaintext, or its
/// ciphertext under a retired key) lingers in the store's free space, its indexes or its log.
/// SQLite and PostgreSQL have it.
///
/// Without it, the rows are rewritten all the same, and what they held before stays wherever
/// the engine leaves freed data until it reuses the space (``Garage/rekey(to:)-7738p`` says so).
package protocol ErasesFreedContent: RowWriteStatements {
    /// Whether this connection overwrites the content it frees (SQLite: `secure_delete`;
    /// PostgreSQL has no such setting, and answers `false`); returns the setting it had, to
    /// restore.
    @discardableResult func setErasesFreedContent(_ erases: Bool) throws -> Bool
    /// Rewrites the store without free space, then empties its log, so that no deleted data,
    /// and no earlier version of a page, lingers (outside a transaction): SQLite's `VACUUM` and
    /// a checkpoint that truncates the `-wal` file; PostgreSQL's `VACUUM FULL` of the object
    /// table, which rewrites it and its indexes into new files (its write-ahead log is the
    /// server's, recycled by the server). Returns whether the log could be emptied (a reader
    /// keeping an old snapshot prevents it; on PostgreSQL, never).
    func compactAndTruncateLog() throws -> Bool
}

/// Statements that measure the store's storage where it is not one file (PostgreSQL: its
/// tables and indexes): ``Garage/statistics()`` reports it as the store's size.
///
/// Without it, the size is the store file's, read from the file system.
package protocol MeasuresItsStorage: RowStatements {
    /// The bytes the store takes, tables and indexes, and of its log (0 when it has none of its own).
    func storageSize() throws -> (store: Int, log: Int)
}
