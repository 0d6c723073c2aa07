import Foundation
import GarageLiteCore
import GarageLiteSQLite

// The SQLite engine, as the public API names it.
extension GarageEngine {
    /// SQLite, on the store file at `path` (created when it does not exist), opened now. A
    /// write waits up to `busyTimeout` seconds for another process's; `durability` says what
    /// an acknowledged commit survives (a crash of the app, or also a power cut: see
    /// ``Durability``).
    ///
    /// ```swift
    /// let garage = try Garage(engine: .sqlite(path: path, durability: .full))
    /// ```
    ///
    /// - throws: See ``Garage/init(path:busyTimeout:encryptionKey:)``.
    public static func sqlite(path: String, busyTimeout: TimeInterval = GarageEngine.defaultBusyTimeout,
                              durability: Durability = .normal) throws -> GarageEngine {
        GarageEngine(try SQLiteEngine.open(
            path: path, busyTimeout: busyTimeout, syncsEveryCommit: durability == .full))
    }

    /// SQLite, in memory: a new, empty store, gone when its garage is released.
    public static func inMemory() throws -> GarageEngine {
        GarageEngine(try SQLiteEngine.inMemory())
    }

    /// SQLite on the existing store file at `path`, for reading only (see ``Garage/readOnly(path:encryptionKey:)``).
    static func sqliteReadOnly(path: String, reason: String) throws -> GarageEngine {
        GarageEngine(try SQLiteEngine.openReadOnly(path: path, reason: reason))
    }

    /// The format version of the SQLite stores this version of GarageLite writes.
    static var sqliteFormatVersion: Int { Schema.formatVersion }
}
