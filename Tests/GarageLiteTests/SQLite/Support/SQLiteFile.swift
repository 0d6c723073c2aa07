@testable import GarageLite
import Foundation
import GRDB

/// Plain SQL on an SQLite database, as another program would run it: a store file opened with a
/// connection of its own (`SQLiteFile(path)`), or the connection of a garage's store
/// (`garage.store.sql`).
///
/// The SQLite-specific tests (`Tests/GarageLiteTests/SQLite/`) reach below the library through
/// it, and so need not import GRDB themselves. Values come back as SQLite renders them as
/// text: integers and reals as numbers, NULL as `nil`.
struct SQLiteFile: Sendable {
    /// Values for the statement's `?` placeholders: strings, integers, reals, `Data`, `nil`.
    typealias Arguments = [(any Sendable)?]

    private let database: any DatabaseWriter

    /// A connection of its own to the database at `path`. It waits up to `busyTimeout` seconds
    /// for another connection's lock (`nil`: it fails at once); a `readOnly` one never writes.
    init(_ path: String, busyTimeout: TimeInterval? = nil, readOnly: Bool = false) throws {
        var configuration = Configuration()
        if let busyTimeout { configuration.busyMode = .timeout(busyTimeout) }
        configuration.readonly = readOnly
        database = try DatabaseQueue(path: path, configuration: configuration)
    }

    init(_ database: any DatabaseWriter) {
        self.database = database
    }

    /// Runs `sql` (one statement or several) in one transaction; returns how many rows its
    /// last statement changed.
    @discardableResult
    func execute(_ sql: String, _ arguments: Arguments = []) throws -> Int {
        let arguments = try Self.statementArguments(arguments)
        return try database.write { db in
            try db.execute(sql: sql, arguments: arguments)
            return db.changesCount
        }
    }

    /// Runs `sql` outside any transaction: `VACUUM`, most `PRAGMA`s, `BEGIN`.
    func executeWithoutTransaction(_ sql: String) throws {
        try database.writeWithoutTransaction { db in try db.execute(sql: sql) }
    }

    /// Copies the write-ahead log into the file and empties it (`wal_checkpoint(TRUNCATE)`).
    func checkpoint() throws {
        try database.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)") }
    }

    /// Runs `body` while this connection holds the write lock (`BEGIN IMMEDIATE`), then rolls back.
    func holdingWriteLock<T>(_ body: () throws -> T) throws -> T {
        try database.writeWithoutTransaction { db in
            try db.execute(sql: "BEGIN IMMEDIATE")
            defer { try? db.execute(sql: "ROLLBACK") }
            return try body()
        }
    }

    /// The rows `sql` reads, each column as text (`nil` for NULL), in one snapshot.
    func rows(_ sql: String, _ arguments: Arguments = []) throws -> [[String?]] {
        let arguments = try Self.statementArguments(arguments)
        return try database.read { db in
            try Row.fetchAll(db, sql: sql, arguments: arguments).map { row in row.databaseValues.map(Self.text) }
        }
    }

    /// The first column of each row `sql` reads; a NULL is an error.
    func strings(_ sql: String, _ arguments: Arguments = []) throws -> [String] {
        try rows(sql, arguments).map { row in
            guard let value = row.first, let value else { throw SQLiteFileError.null(sql) }
            return value
        }
    }

    /// The first column of the first row `sql` reads, or `nil` (no row, or NULL).
    func string(_ sql: String, _ arguments: Arguments = []) throws -> String? {
        try rows(sql, arguments).first?.first ?? nil
    }

    /// The first column of the first row `sql` reads, as an integer, or `nil`.
    func int(_ sql: String, _ arguments: Arguments = []) throws -> Int? {
        let arguments = try Self.statementArguments(arguments)
        return try database.read { db in try Int.fetchOne(db, sql: sql, arguments: arguments) }
    }

    /// The names of the columns of `table`, in order.
    func columns(in table: String) throws -> [String] {
        try database.read { db in try db.columns(in: table).map(\.name) }
    }

    /// SQLite's `PRAGMA integrity_check`: `["ok"]` for a sound file.
    func integrityCheck() throws -> [String] {
        try strings("PRAGMA integrity_check")
    }

    /// How SQLite runs `sql`: the detail of each step of `EXPLAIN QUERY PLAN`.
    func queryPlan(_ sql: String, _ arguments: Arguments = []) throws -> [String] {
        let arguments = try Self.statementArguments(arguments)
        return try database.read { db in
            try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + sql, arguments: arguments).map { $0["detail"] as String }
        }
    }

    /// Closes a connection of its own now, rather than when it is released.
    func close() throws {
        try (database as? DatabaseQueue)?.close()
    }

    /// Whether `error` is SQLite's `SQLITE_BUSY`: another connection held the database too long.
    static func isBusy(_ error: any Error) -> Bool {
        (error as? DatabaseError)?.resultCode == .SQLITE_BUSY
    }

    private static func statementArguments(_ arguments: Arguments) throws -> StatementArguments {
        StatementArguments(try arguments.map { value -> (any DatabaseValueConvertible)? in
            guard let value else { return nil }
            guard let convertible = value as? any DatabaseValueConvertible else { throw SQLiteFileError.argument("\(value)") }
            return convertible
        })
    }

    private static func text(_ value: DatabaseValue) -> String? {
        switch value.storage {
        case .null: nil
        case .int64(let integer): String(integer)
        case .double(let real): String(real)
        case .string(let string): string
        case .blob(let data): String(decoding: data, as: UTF8.self)
        }
    }
}

/// The error SQLite's statements throw (GRDB's `DatabaseError`): a constraint or a trigger
/// refusing a write, a busy database.
typealias SQLiteError = DatabaseError

enum SQLiteFileError: Error {
    case null(String)
    case argument(String)
}

extension Store {
    /// Plain SQL on the store's own connection (its writer).
    var sql: SQLiteFile {
        get throws { SQLiteFile(try writer) }
    }
}

/// Runs `sql` on the store file through a connection of its own, as another program would.
func rawWrite(_ path: String, _ sql: String) throws {
    try SQLiteFile(path).execute(sql)
}
