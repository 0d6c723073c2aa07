import Foundation
import GRDBSQLite
import GarageLiteCore

// Durability at close. The store runs in WAL mode with `synchronous = NORMAL`: a commit is
// appended to the `-wal` file without waiting for the disk, which is synced only when the log
// is checkpointed into the store file. A power cut can take back the commits since the last
// checkpoint; so when a garage is done with its file (it is deinitialized, or the process
// exits), its commits are checkpointed: the log is synced, copied into the store file, the
// store file synced, and the log emptied when nobody reads it.
//
// SQLite checkpoints by itself when the last connection to a file closes, but only if that
// connection may write: a garage whose read-only reader connections closed after its writer
// left the log as it was. And a process that exits without its garages being deinitialized
// (a garage held in a global, `exit(0)`) closes no connection at all.
extension StoreFile {
    /// Checkpoints the log of the store at `path` into the store file (syncing both) and
    /// truncates it to 0 bytes, on a connection of its own: a best effort that never waits.
    ///
    /// A connection of its own, rather than the garage's writer, because this runs from a
    /// deinitializer or at exit, possibly on the writer's own queue. When another connection
    /// is writing, or reading an older snapshot, the checkpoint copies what it can and leaves
    /// the rest to the next checkpoint (that connection's, at the latest when it closes).
    package static func checkpointLog(path: String) {
        var connection: OpaquePointer?
        defer { sqlite3_close_v2(connection) }
        guard sqlite3_open_v2(path, &connection, SQLITE_OPEN_READWRITE, nil) == SQLITE_OK, let connection else {
            return
        }
        // A fresh connection knows the file is in WAL mode only once it has read it: until
        // then SQLite has no log to checkpoint. A read waits a moment for a writer that is
        // just changing the log's index; the checkpoint never waits.
        sqlite3_busy_timeout(connection, 1_000)
        guard sqlite3_exec(connection, "PRAGMA schema_version", nil, nil, nil) == SQLITE_OK else { return }
        sqlite3_busy_timeout(connection, 0)
        // Without a busy handler, a TRUNCATE checkpoint that finds a writer or a reader goes on
        // as a PASSIVE one (and says SQLITE_BUSY): every frame it can copy is still synced.
        _ = sqlite3_wal_checkpoint_v2(connection, "main", SQLITE_CHECKPOINT_TRUNCATE, nil, nil)
    }
}

/// The store files this process has open for writing, so that their logs are checkpointed
/// when the process exits (``StoreFile/checkpointLog(path:)``), although garages held until
/// then (in a global, or by a process that calls `exit`) are never deinitialized.
///
/// Only `SQLiteEngine` uses this type: it counts a file when it opens it and uncounts it when
/// it closes it.
package enum OpenStoreFiles {
    /// How many engines of the process have each path open for writing.
    private static let counts = Protected([String: Int]())

    /// Registers the exit handler once, the first time a store file is opened.
    private static let exitHandler: Void = {
        atexit { OpenStoreFiles.checkpointAll() }
    }()

    /// Counts one more engine with `path` open.
    package static func opened(_ path: String) {
        _ = exitHandler
        counts.write { $0[path, default: 0] += 1 }
    }

    /// Counts one engine less with `path` open.
    package static func closed(_ path: String) {
        counts.write { counts in
            let remaining = counts[path, default: 1] - 1
            counts[path] = remaining > 0 ? remaining : nil
        }
    }

    /// Checkpoints the log of every file still open (at exit).
    private static func checkpointAll() {
        for path in counts.read({ Array($0.keys) }) {
            StoreFile.checkpointLog(path: path)
        }
    }
}
