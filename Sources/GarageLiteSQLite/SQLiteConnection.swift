import Foundation
import GRDB
import GRDBSQLite
import GarageLiteCore

/// One SQLite connection as the garage uses it: the statements of ``RowStatements`` and
/// ``RowWriteStatements`` (here and in `SQLiteConnection+Rows.swift`, `+Claims.swift`,
/// `+Integrity.swift`), and the one strict reader of the object table's rows.
package struct SQLiteConnection: RowWriteStatements, CountsOtherCommits, ErasesFreedContent, ChecksItsFile {
    package let db: Database
    /// The statements stepped on this connection, found again without hashing their SQL: this
    /// access's own, or the writer's, kept by the engine from one access to the next.
    private let statements: StatementsBySQL

    package init(_ db: Database, statements: StatementsBySQL = StatementsBySQL()) {
        self.db = db
        self.statements = statements
    }

    // MARK: - Transactions

    package func snapshot<T>(_ body: () throws -> T) throws -> T {
        // Inside a transaction (a claim decoding its objects), every statement already reads one snapshot.
        if db.isInsideTransaction { return try body() }
        return try inTransaction(.deferred, body)
    }

    package func transaction<T>(_ body: () throws -> T) throws -> T {
        try inTransaction(.immediate, body)
    }

    package func othersCommitCounter() throws -> Int {
        // SQLite's data_version changes when another connection commits, not for this one's.
        try Int.fetchOne(db, sql: "PRAGMA data_version") ?? 0
    }

    /// An immediate transaction takes the write lock at the start (waiting for it under the
    /// busy timeout), and is never upgraded midway.
    ///
    /// Its statements are cached and stepped on their handles, as the row statements are:
    /// GRDB's `inTransaction` parses `BEGIN` and `COMMIT` again for every transaction, a
    /// tenth of a single park's instructions. Nothing here uses GRDB's transaction
    /// observers, which that bookkeeping serves.
    private func inTransaction<T>(_ kind: Database.TransactionKind, _ body: () throws -> T) throws -> T {
        try execute(kind == .immediate ? "BEGIN IMMEDIATE" : "BEGIN DEFERRED")
        do {
            let result = try body()
            try execute("COMMIT")
            return result
        } catch {
            // SQLite has already rolled back after some errors (a full disk, an interrupt).
            if db.isInsideTransaction { try? execute("ROLLBACK") }
            throw error
        }
    }

    /// Runs a statement that returns no row.
    package func execute(_ sql: String, _ arguments: [RowArgument] = []) throws {
        try step(sql, arguments) { _ in false }
    }

    // MARK: - Reading rows

    /// `sql` with each run of whitespace made one space: what a hot statement is cached under.
    /// GRDB finds a cached statement by hashing its whole text, on every access's first use of
    /// it (``StatementsBySQL`` serves the next ones): the park statement's indentation alone
    /// cost thousands of instructions a park.
    package static func compact(_ sql: String) -> String {
        sql.split(whereSeparator: \.isWhitespace).joined(separator: " ")
    }

    /// The columns of the object table, in the order ``readRow(_:purpose:key:)`` reads them.
    package static let columns = """
        type, identifier, data, isEncrypted, syncStatus, creationDate, modificationDate, revision, isRoot, refs, \
        claim, claimedAt, isDeleted, attempts, lastError, retryAt, base, serverVersion
        """

    /// The columns a retrieve reads, in the places of ``columns``: the others are NULL, which
    /// SQLite need not read from the record.
    package static let contentColumns = """
        type, identifier, data, isEncrypted, syncStatus, NULL, NULL, revision, NULL, refs, claim, NULL, 0, NULL, NULL, NULL, NULL, NULL
        """

    /// The references of a row whose `refs` column is damaged: not ``ReferenceList/empty``, so
    /// that the object is decoded with its graph, whose stubs are in its data. The column is a
    /// copy of what the data says, and ``Store/check(limit:)`` reports it.
    package static let unreadableReferences = "?"

    /// Runs `sql` with `arguments` and reads each row it returns, strictly, on the statement's
    /// SQLite handle: GRDB's row cursor costs more than a by-identifier lookup itself.
    package func readRows(_ sql: String, _ arguments: [RowArgument], purpose: RowPurpose) throws -> [RowRead] {
        var rows: [RowRead] = []
        try step(sql, arguments) { handle in
            rows.append(Self.readRow(handle, purpose: purpose))
            return true
        }
        return rows
    }

    /// Reads the row `key` that `sql` selects (one at most), without reading its key columns.
    package func readRow(_ sql: String, _ key: ObjectKey, purpose: RowPurpose) throws -> StoredRow? {
        var row: RowRead?
        try step(sql, [.text(key.typeName), .text(key.identifier)]) { handle in
            row = Self.readRow(handle, purpose: purpose, key: key)
            return false
        }
        return try row?.get()
    }

    /// Runs `sql` with `arguments`, calling `visit` with the statement's handle on each row
    /// until it returns `false`.
    ///
    /// A statement kept from an earlier access (``StatementsBySQL``) that meets
    /// `SQLITE_SCHEMA` (another connection changed the schema, and SQLite's own preparation
    /// again failed) is let go and prepared anew, once: SQLite returns that error before the
    /// statement has done anything, so running it again changes nothing twice.
    package func step(_ sql: String, _ arguments: [RowArgument], _ visit: (OpaquePointer?) throws -> Bool) throws {
        // Not after a row: the caller has read it, and must not read it again.
        var visited = false
        do {
            try step(statements.statement(sql, in: db), arguments, &visited, visit)
        } catch let error as DatabaseError where error.resultCode == .SQLITE_SCHEMA && !visited {
            try step(statements.renewed(sql, in: db), arguments, &visited, visit)
        }
    }

    private func step(_ statement: Statement, _ arguments: [RowArgument], _ visited: inout Bool,
                      _ visit: (OpaquePointer?) throws -> Bool) throws {
        let handle = statement.sqliteStatement
        defer {
            sqlite3_reset(handle)
            sqlite3_clear_bindings(handle)
        }
        for (index, argument) in arguments.enumerated() {
            switch argument {
            case .text(var text):
                // Its UTF-8 in place: passing the String itself would copy it to a new C string.
                text.withUTF8 { utf8 in
                    if let start = utf8.baseAddress, !utf8.isEmpty {
                        start.withMemoryRebound(to: CChar.self, capacity: utf8.count) {
                            _ = sqlite3_bind_text(handle, Int32(index + 1), $0, Int32(utf8.count), Self.sqliteTransient)
                        }
                    } else {
                        _ = sqlite3_bind_text(handle, Int32(index + 1), "", 0, Self.sqliteTransient)
                    }
                }
            case .integer(let integer): sqlite3_bind_int64(handle, Int32(index + 1), Int64(integer))
            case .real(let real): sqlite3_bind_double(handle, Int32(index + 1), real)
            case .null: sqlite3_bind_null(handle, Int32(index + 1))
            }
        }
        while true {
            switch sqlite3_step(handle) {
            case SQLITE_DONE:
                return
            case SQLITE_ROW:
                visited = true
                if try !visit(handle) { return }
            case let code:
                throw DatabaseError(
                    resultCode: ResultCode(rawValue: code),
                    message: String(cString: sqlite3_errmsg(db.sqliteConnection)), sql: statement.sql)
            }
        }
    }

    /// A value bound to a statement of the object table: text (type names, identifiers,
    /// data, references), integers (statuses, flags, counts), dates, or NULL.
    package enum RowArgument: ExpressibleByStringLiteral {
        case text(String)
        case integer(Int)
        case real(Double)
        case null

        /// 1 or 0, as SQLite stores a boolean.
        package static func bool(_ value: Bool) -> RowArgument { .integer(value ? 1 : 0) }

        /// The text, or NULL.
        package static func text(_ value: String?) -> RowArgument { value.map { .text($0) } ?? .null }

        /// The integer, or NULL.
        package static func integer(_ value: Int?) -> RowArgument { value.map { .integer($0) } ?? .null }

        /// The real number, or NULL.
        package static func real(_ value: Double?) -> RowArgument { value.map { .real($0) } ?? .null }

        package init(stringLiteral value: String) { self = .text(value) }
    }

    /// SQLite copies a value bound with it.
    private static let sqliteTransient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    /// Reads the current row of a statement that selects ``columns`` (or ``columns(for:)``):
    /// the columns `purpose` needs must hold values of their type (NULL only where the schema
    /// allows it). The key columns are not read when the caller knows the key.
    package static func readRow(_ handle: OpaquePointer?, purpose: RowPurpose, key knownKey: ObjectKey? = nil) -> RowRead {
        let key = knownKey ?? ObjectKey(typeName: text(handle, 0) ?? "?", identifier: text(handle, 1) ?? "?")
        var problems: [String] = []
        func integer(_ column: Int32, _ name: String) -> Int64 {
            guard sqlite3_column_type(handle, column) == SQLITE_INTEGER else {
                problems.append(Self.mistyped(handle, column, name, "an integer"))
                return 0
            }
            return sqlite3_column_int64(handle, column)
        }
        func real(_ column: Int32, _ name: String, optional: Bool = false) -> Double? {
            switch sqlite3_column_type(handle, column) {
            case SQLITE_FLOAT, SQLITE_INTEGER:
                return sqlite3_column_double(handle, column)
            case SQLITE_NULL where optional:
                return nil
            default:
                problems.append(Self.mistyped(handle, column, name, "a number"))
                return nil
            }
        }
        func string(_ column: Int32, _ name: String, optional: Bool = false) -> String? {
            switch sqlite3_column_type(handle, column) {
            case SQLITE_TEXT:
                guard let text = text(handle, column) else {
                    problems.append("its \(name) column is not UTF-8 text")
                    return nil
                }
                return text
            case SQLITE_NULL where optional:
                return nil
            default:
                problems.append(Self.mistyped(handle, column, name, "text"))
                return nil
            }
        }
        let statusValue = integer(4, "syncStatus")
        let status = SyncStatus(rawValue: Int(statusValue))
        if problems.isEmpty, status == nil {
            problems.append("unknown sync status \(statusValue)")
        }
        var row = StoredRow(
            key: key, data: "", isEncrypted: integer(3, "isEncrypted") != 0, syncStatus: status ?? .undetermined,
            creationDate: .distantPast, modificationDate: .distantPast, revision: 0, isRoot: false,
            references: ReferenceList.empty)
        // Every purpose reads the claim: it decides the status of a row parked again.
        row.claim = string(10, "claim", optional: true)
        if purpose.needsContent {
            row.data = string(2, "data") ?? ""
            // The references only choose how a retrieve reads; check() reports a damaged list.
            row.references = sqlite3_column_type(handle, 9) == SQLITE_TEXT
                ? text(handle, 9) ?? unreadableReferences : unreadableReferences
        }
        if !purpose.needsMetadata, sqlite3_column_type(handle, 7) == SQLITE_INTEGER {
            // A Revisioned object gets its revision on retrieve. Read leniently here: a damaged
            // revision reads as 0 (which a park refuses over the row) and `check()` reports it.
            row.revision = sqlite3_column_int64(handle, 7)
        }
        if purpose.needsMetadata {
            row.creationDate = Date(timeIntervalSince1970: real(5, "creationDate") ?? 0)
            row.modificationDate = Date(timeIntervalSince1970: real(6, "modificationDate") ?? 0)
            row.revision = integer(7, "revision")
            row.isRoot = integer(8, "isRoot") != 0
            row.claimedAt = real(11, "claimedAt", optional: true).map(Date.init(timeIntervalSince1970:))
            row.isDeleted = integer(12, "isDeleted") != 0
            row.attempts = integer(13, "attempts")
            row.lastError = string(14, "lastError", optional: true)
            row.retryAt = real(15, "retryAt", optional: true).map(Date.init(timeIntervalSince1970:))
            row.serverVersion = string(17, "serverVersion", optional: true)
        }
        if purpose == .all {
            row.base = string(16, "base", optional: true)
        }
        guard problems.isEmpty else {
            let reason = problems.count == 1
                ? problems[0] : problems.dropLast().joined(separator: ", ") + " and " + problems[problems.count - 1]
            return .unreadable(key, .corruptData(typeName: key.typeName, identifier: key.identifier, reason: reason))
        }
        return .row(row)
    }

    /// The text of a column, or `nil` when it is not UTF-8: a damaged row is reported, not
    /// read with replacement characters. All of it, also past a NUL.
    private static func text(_ handle: OpaquePointer?, _ column: Int32) -> String? {
        guard let bytes = sqlite3_column_text(handle, column) else { return sqlite3_column_type(handle, column) == SQLITE_NULL ? nil : "" }
        let count = Int(sqlite3_column_bytes(handle, column))
        return utf8Text(UnsafeBufferPointer(start: bytes, count: count))
    }

    /// Why a column does not hold `expected`: "its claimedAt column is not a number", or
    /// "… is NULL" where the schema requires a value.
    private static func mistyped(_ handle: OpaquePointer?, _ column: Int32, _ name: String, _ expected: String) -> String {
        sqlite3_column_type(handle, column) == SQLITE_NULL ? "its \(name) column is NULL" : "its \(name) column is not \(expected)"
    }

    /// The text `bytes` hold, or `nil` when they are not UTF-8.
    ///
    /// `String(validating:as:)` is generic all the way into the standard library, which looks
    /// up the metadata of its buffer types on every call: about 1,000 instructions a column,
    /// 4 % of a retrieved row. Decoding repairs what isn't UTF-8 with U+FFFD, so the text holds
    /// exactly the bytes when, and only when, they were valid UTF-8.
    package static func utf8Text(_ bytes: UnsafeBufferPointer<UInt8>) -> String? {
        let text = String(decoding: bytes, as: UTF8.self)
        guard text.utf8.count == bytes.count else { return nil }
        let same = text.utf8.withContiguousStorageIfAvailable { stored in
            stored.count == 0 || memcmp(stored.baseAddress!, bytes.baseAddress!, stored.count) == 0
        }
        return (same ?? text.utf8.elementsEqual(bytes)) ? text : nil
    }
}

/// The statements a connection has stepped, by the address of their SQL's text.
///
/// GRDB's statement cache is a dictionary keyed by the SQL, which hashes the whole text on
/// every lookup: for the park statement, about 10,000 instructions, a fifth of what writing a
/// row costs. The statements of the object table are `static let`s, whose text stays at one
/// address: a row written in a loop, or a park after a park, finds its statement by that
/// address, and the text is compared (at once when both are the same string) before the
/// statement is used. A few slots scanned in order, replaced in turn, not a dictionary.
///
/// The statements are GRDB's cached ones, retained: an owner that keeps this beyond one access
/// must ``removeAll()`` on the connection's queue before the connection closes.
package final class StatementsBySQL {
    private typealias Entry = (address: UnsafeRawPointer, sql: String, statement: Statement)
    private var entries: [Entry] = []
    private var next = 0
    private static let capacity = 8

    package func statement(_ sql: String, in db: Database) throws -> Statement {
        var sql = sql
        // A small string has no address of its own (and costs little to hash).
        guard let address = sql.withUTF8({ $0.count > 15 ? $0.baseAddress.map(UnsafeRawPointer.init) : nil }) else {
            return try Self.cached(sql, in: db)
        }
        for entry in entries where entry.address == address && entry.sql == sql {
            return entry.statement      // the same storage: the same bytes
        }
        guard Self.isASCII(sql) else { return try db.makeStatement(sql: sql) }
        let statement = try db.cachedStatement(sql: sql)
        if entries.count < Self.capacity {
            entries.append((address, sql, statement))
        } else {
            entries[next] = (address, sql, statement)
            next = (next + 1) % Self.capacity
        }
        return statement
    }

    /// GRDB's cache of statements, for a text of ASCII only. Its keys are Swift strings, which
    /// hold canonically equivalent texts equal: a query whose SQL writes a coding key or a type
    /// name as a literal (`$."é"`, with U+00E9) would be answered by the statement of the other
    /// spelling (`$."é"`, e and U+0301), which reads another key. Such a text is prepared each
    /// time.
    package static func cached(_ sql: String, in db: Database) throws -> Statement {
        isASCII(sql) ? try db.cachedStatement(sql: sql) : try db.makeStatement(sql: sql)
    }

    private static func isASCII(_ sql: String) -> Bool {
        var sql = sql
        return sql.withUTF8 { bytes in !bytes.contains { $0 >= 0x80 } }
    }

    /// `sql` prepared anew, in place of the statement kept for it: one that met `SQLITE_SCHEMA`.
    /// Not from GRDB's cache, which would hand back the same statement.
    package func renewed(_ sql: String, in db: Database) throws -> Statement {
        let statement = try db.makeStatement(sql: sql)
        entries.removeAll { $0.sql == sql }
        var sql = sql
        if let address = sql.withUTF8({ $0.count > 15 ? $0.baseAddress.map(UnsafeRawPointer.init) : nil }),
           entries.count < Self.capacity {
            entries.append((address, sql, statement))
        }
        return statement
    }

    /// Lets the statements go.
    package func removeAll() {
        entries = []
        next = 0
    }
}
