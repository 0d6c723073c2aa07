import Foundation
import GarageLite
import Logging
import NIOCore
import PostgresNIO

/// One PostgreSQL connection as the garage uses it, for one access: the statements of
/// ``RowStatements`` and ``RowWriteStatements`` (here and in `PostgresStatements+Writes.swift`,
/// `+Integrity.swift`), and the one reader of the object table's rows.
///
/// The writes that follow a rule (park, delete, statuses, claims' ends) are the rules' own
/// (``RowWriteStatements``' default implementations: read the row, apply ``RowRules``, store it
/// with ``putRow(_:)``), so this engine has no copy of them to keep equal.
final class PostgresStatements: RowWriteStatements, CountsOtherCommits, MeasuresItsStorage, ErasesFreedContent {
    let connection: PooledConnection
    let schema: String
    /// Whether this access is the writer's: its reads of a row in a transaction lock the row.
    let writes: Bool
    /// The watch's notifications, on the watch's access.
    private let listener: PostgresCommitListener?
    /// How deep in `transaction`/`snapshot` this access is: 0 outside any.
    private var depth = 0
    /// The writes sent in this transaction and not waited for yet (see ``send(_:)``).
    private var sentWrites: [EventLoopFuture<[PostgresRow]>] = []
    /// The rows stored in this transaction and not sent yet (see ``buffer(_:)``), and their keys;
    /// those whose content is the stored row's (only their sync columns changed) apart.
    private var bufferedRows: [StoredRow] = []
    private var bufferedStatusRows: [StoredRow] = []
    private var bufferedKeys: Set<ObjectKey> = []
    /// The rows this writer's transaction has locked (read `FOR UPDATE`) or written, as they are
    /// now, by key (`nil`: no row): no other transaction can change them before the commit, so a
    /// second read of one (a rule's write reads the row the store just read) costs nothing.
    private var lockedRows: [ObjectKey: StoredRow?] = [:]
    /// Whether this access runs a claim (``claimTransaction(_:)``).
    private var isClaiming = false
    /// Whether this access has sent a commit: a write transaction's `COMMIT`, or a write outside
    /// a transaction, which commits alone. A connection lost after that (``ConnectionLoss``)
    /// leaves unknown whether the access wrote; before it, nothing was.
    private var sentCommit = false

    init(connection: PooledConnection, schema: String, writes: Bool = false, listener: PostgresCommitListener? = nil) {
        self.connection = connection
        self.schema = schema
        self.writes = writes
        self.listener = listener
    }

    /// The object table, the reference index and the facts, qualified by the schema.
    var objects: String { "\(schema).garage_object" }
    var references: String { "\(schema).garage_reference" }
    var facts: String { "\(schema).garage_meta" }

    // MARK: - Running statements

    private static let logger = Logger(label: "GarageLitePostgres", factory: { _ in SwiftLogNoOpLogHandler() })

    /// Runs `query` and returns its rows, waiting on this thread (after the writes sent before it)
    /// up to `deadline` seconds (the connection's ``PooledConnection/answerDeadline`` unless given).
    @discardableResult
    func run(_ query: PostgresQuery, deadline: Int64? = nil) throws -> PostgresQueryResult {
        try sendBufferedRows()
        try waitForSentWrites()
        if depth == 0, writes, !Self.onlyReads(query.sql) { sentCommit = true }
        return try recordingFailure {
            try connection.answer(connection.connection.query(query, logger: Self.logger), deadline: deadline)
        }
    }

    /// The first statement of this transaction that failed: PostgreSQL then refuses the others,
    /// and answers its `COMMIT` with a rollback. Kept so that a failure a caller caught (a read in
    /// a `try?`) still fails the transaction, with its own error, rather than a silent rollback.
    private var transactionFailure: (any Error)?

    /// Runs `body`, a statement's wait; records its failure as the transaction's.
    /// A statement refused because an earlier one failed (25P02) throws the earlier error.
    /// A connection lost becomes a ``ConnectionLoss`` that says whether a commit was sent.
    private func recordingFailure<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch {
            let error = interrupted(error)
            guard depth > 0 else { throw error }
            if let first = transactionFailure {
                if PostgresProblem.sqlState(error) == "25P02" { throw first }
            } else {
                transactionFailure = error
            }
            throw error
        }
    }

    /// Waits for the writes sent before `future` and for `future`, at once (a connection
    /// answers in order); throws the first error.
    private func answer(after future: EventLoopFuture<[PostgresRow]>) throws -> [PostgresRow] {
        let writes = sentWrites
        sentWrites = []
        return try recordingFailure {
            let results = try connection.answers(writes + [future])
            for result in results.dropLast() { _ = try result.get() }
            return try results[results.count - 1].get()
        }
    }

    /// Runs the prepared `statement` with `binds` and returns its rows, waiting on this thread
    /// (after the writes sent before it).
    func run(_ statement: PostgresStatement, _ binds: [PostgresData] = []) throws -> [PostgresRow] {
        try sendBufferedRows()
        let answer = try execute(statement, binds)
        // Sent (its first use's preparation, which commits nothing, answered).
        if depth == 0, writes, statement.writes { sentCommit = true }
        return try self.answer(after: answer)
    }

    /// `error` as this access reports it: a connection lost, or an answer that never came, is a
    /// ``ConnectionLoss`` that says whether this access had sent a commit.
    private func interrupted(_ error: any Error) -> any Error {
        guard !(error is ConnectionLoss), PostgresProblem.isConnectionLoss(error) || error is PostgresConnections.Failure else {
            return error
        }
        return ConnectionLoss(reason: PostgresProblem.reason(error), mayHaveCommitted: sentCommit)
    }

    /// Whether `sql` only reads (outside a transaction, it commits nothing).
    private static func onlyReads(_ sql: String) -> Bool {
        let start = sql.drop { $0.isWhitespace }.prefix(6).uppercased()
        return start.hasPrefix("SELECT") || start.hasPrefix("SHOW")
    }

    /// Sends the prepared `statement` with `binds`; its rows come with the future.
    ///
    /// A statement's first use on a connection prepares it, and waits for that: after a write
    /// sent and not waited for that failed (a lock's timeout), the preparation fails too, as
    /// the transaction is aborted; the write's error is then the one thrown.
    private func execute(_ statement: PostgresStatement, _ binds: [PostgresData]) throws -> EventLoopFuture<[PostgresRow]> {
        do {
            return try connection.execute(statement, schema: schema, binds)
        } catch {
            try waitForSentWrites()
            throw interrupted(error)
        }
    }

    /// Sends the prepared `statement`, whose rows nothing needs, without waiting for it (see
    /// ``send(_:)``); outside a transaction, runs it.
    func send(_ statement: PostgresStatement, _ binds: [PostgresData] = []) throws {
        guard depth > 0 else {
            _ = try run(statement, binds)
            return
        }
        try sendBufferedRows()
        sentWrites.append(try execute(statement, binds))
    }

    /// Sends `query`, a write whose result nothing needs, without waiting for it: in a
    /// transaction, the next statement that waits (or the commit) waits for it first, and
    /// throws its error. A park is then one round trip (its read), not two.
    func send(_ query: PostgresQuery) throws {
        guard depth > 0 else {
            try run(query)
            return
        }
        try sendBufferedRows()
        sentWrites.append(connection.connection.query(query, logger: Self.logger).map(\.rows))
    }

    /// Stores `row` (``putRow(_:)``): in a transaction, with the rows stored after it, in one
    /// statement sent before the next one (a batch of parks, a claim's end: one statement).
    func buffer(_ row: StoredRow) throws {
        guard depth > 0 else {
            _ = try run(.upsert, Self.upsertBinds([row]))
            return
        }
        // A row stored twice: each version is written (the encryption guard counts each).
        if bufferedKeys.contains(row.key) { try sendBufferedRows() }
        // The row as stored, which this transaction holds locked: when only the sync columns
        // differ (a claim's end, a status), they alone are written.
        if case .some(.some(let stored)) = lockedRows[row.key], Self.hasSameContent(row, stored) {
            bufferedStatusRows.append(row)
        } else {
            bufferedRows.append(row)
        }
        bufferedKeys.insert(row.key)
    }

    /// Whether `row` and `stored` differ at most in their sync columns (``PostgresStatement/updateStatuses``).
    private static func hasSameContent(_ row: StoredRow, _ stored: StoredRow) -> Bool {
        row.data == stored.data && row.isEncrypted == stored.isEncrypted && row.creationDate == stored.creationDate
            && row.modificationDate == stored.modificationDate && row.revision == stored.revision
            && row.isRoot == stored.isRoot && row.references == stored.references && row.isDeleted == stored.isDeleted
    }

    /// Sends the buffered rows: one upsert for them all, one update for those whose sync
    /// columns alone changed.
    private func sendBufferedRows() throws {
        let rows = bufferedRows, statusRows = bufferedStatusRows
        bufferedRows = []
        bufferedStatusRows = []
        bufferedKeys = []
        if !rows.isEmpty { sentWrites.append(try execute(.upsert, Self.upsertBinds(rows))) }
        if !statusRows.isEmpty { sentWrites.append(try execute(.updateStatuses, Self.statusBinds(statusRows))) }
    }

    /// Waits for the writes ``send(_:)`` sent, in order; throws the first one's error.
    private func waitForSentWrites() throws {
        guard !sentWrites.isEmpty else { return }
        let writes = sentWrites
        sentWrites = []
        try recordingFailure {
            for result in try connection.answers(writes) { _ = try result.get() }
        }
    }

    /// Runs `sql`, which takes no parameters: one statement or several, separated by `;`.
    func execute(_ sql: String) throws {
        for statement in Self.statements(sql) {
            try run(PostgresQuery(unsafeSQL: statement))
        }
    }

    /// The statements of `sql`: split at each `;` outside quotes and `$$` bodies (postgres-nio
    /// sends one statement a query).
    static func statements(_ sql: String) -> [String] {
        var statements: [String] = []
        var current = ""
        var inQuote = false, inBody = false
        var previous: Character = " "
        for character in sql {
            if character == "'" && !inBody { inQuote.toggle() }
            if character == "$" && previous == "$" && !inQuote { inBody.toggle() }
            if character == ";" && !inQuote && !inBody {
                if !current.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty { statements.append(current) }
                current = ""
            } else {
                current.append(character)
            }
            previous = character == "$" && previous == "$" ? " " : character
        }
        if !current.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty { statements.append(current) }
        return statements
    }

    /// How many rows `query` changed.
    func changes(_ query: PostgresQuery) throws -> Int {
        try run(query).metadata.rows ?? 0
    }

    private func integer(_ query: PostgresQuery) throws -> Int {
        guard let row = try run(query).rows.first else { return 0 }
        return Int(try row.decode(Int64?.self) ?? 0)
    }

    private func strings(_ query: PostgresQuery) throws -> [String] {
        try run(query).rows.map { try $0.decode(String.self) }
    }

    // MARK: - Transactions

    func snapshot<T>(_ body: () throws -> T) throws -> T {
        if depth > 0 { return try body() }
        return try inTransaction(.beginSnapshot, body)
    }

    /// A write transaction takes the schema's lock first, as SQLite's `BEGIN IMMEDIATE` takes
    /// the file's: every writer of the store, in any process on any machine, waits for it (up
    /// to the lock timeout, then ``GarageError/storeBusy(operation:path:)``), so the rules'
    /// reads and writes in it are never interleaved with another writer's.
    func transaction<T>(_ body: () throws -> T) throws -> T {
        if depth > 0 { return try body() }
        return try inTransaction(.begin, lock: .lockSchema, body)
    }

    /// A claim's end takes the schema's lock shared: writers wait for it, as for a write, but
    /// the ends of other claims don't. It locks its rows (``prepareToWrite(_:)``), which no other
    /// claim holds, in key order.
    func claimEndTransaction<T>(_ body: () throws -> T) throws -> T {
        if depth > 0 { return try body() }
        return try inTransaction(.begin, lock: .lockSchemaShared, body)
    }

    /// A claim takes no lock but its rows': ``claimRows(ofType:status:limit:excluding:claim:now:maximumAttempts:)``
    /// locks the rows it takes, skipping those other transactions hold (another worker's claim, a
    /// park in progress), so workers on many machines claim disjoint batches without waiting for
    /// each other; its other reads (the rows its objects reference) lock nothing. Ties of
    /// modification date come in the index's order (``RowRules/claimOrder(_:_:)`` states them as
    /// a group), so that the claim reads the sync index without sorting.
    ///
    /// It needs no transaction: ``claimRows(ofType:status:limit:excluding:claim:now:maximumAttempts:)``
    /// takes and marks its rows in one statement, which commits alone, so a claim is one round
    /// trip. When `body` fails after that (a row that can't be decoded throws, the task was
    /// cancelled), the rows it took are given back, as they were, before the error goes on; a
    /// claim that can't give them back (the connection is lost) leaves them to
    /// `releaseStaleClaims`, as a job killed with its claim does.
    func claimTransaction<T>(_ body: () throws -> T) throws -> T {
        if depth > 0 { return try body() }
        isClaiming = true
        takenRows = []
        defer {
            isClaiming = false
            takenRows = []
            claimID = nil
        }
        do {
            return try body()
        } catch {
            if let claimID, !takenRows.isEmpty { try? restoreClaimed(takenRows, claim: claimID) }
            throw error
        }
    }

    /// The rows this access's claim took, as they were, and its claim: given back if the claim fails.
    private var takenRows: [StoredRow] = []
    private var claimID: String?

    /// Runs `body` in a transaction. Its `BEGIN`, the schema's lock and the `COMMIT` are sent
    /// without waiting (the first statement that waits waits for them too), so that a
    /// transaction costs no round trip of its own: a claim is two, its read and its commit.
    private func inTransaction<T>(_ begin: PostgresStatement, lock: PostgresStatement? = nil, _ body: () throws -> T) throws -> T {
        depth += 1
        transactionFailure = nil
        defer { depth -= 1 }
        defer {
            lockedRows = [:]
            transactionFailure = nil
        }
        do {
            try send(begin)
            if let lock { try send(lock, [PostgresData(string: PostgresSchema.lockName(schema))]) }
            let result = try body()
            try sendBufferedRows()
            if let failure = transactionFailure { throw failure }
            if connection.isClosed {
                // Lost before the commit went out: the server rolls the transaction back.
                try waitForSentWrites()
                throw ConnectionLoss(reason: "the connection closed before the commit was sent", mayHaveCommitted: sentCommit)
            }
            if begin != .beginSnapshot { sentCommit = true }
            // Unprepared, for its answer: `COMMIT`, or `ROLLBACK` when a statement failed unseen.
            let commit = connection.connection.query("COMMIT", logger: Self.logger).flatMapThrowing { result -> [PostgresRow] in
                guard result.metadata.command == "COMMIT" else { throw RolledBack(command: result.metadata.command) }
                return []
            }
            _ = try answer(after: commit)
            return result
        } catch {
            bufferedRows = []
            bufferedStatusRows = []
            bufferedKeys = []
            try? waitForSentWrites()
            if !connection.isClosed { try? execute("ROLLBACK") }
            throw error
        }
    }

    /// PostgreSQL answered a `COMMIT` with another command (`ROLLBACK`): a statement of the
    /// transaction failed, and nothing of it was written.
    struct RolledBack: Error, CustomStringConvertible {
        var command: String
        var description: String {
            "PostgreSQL answered the commit with \(command): a statement of the transaction failed, so nothing of it was written"
        }
    }

    /// Whether a statement runs in this access's transaction.
    var isInTransaction: Bool { depth > 0 }

    func othersCommitCounter() throws -> Int {
        listener?.counter ?? 0
    }

    // MARK: - Reading rows

    /// The columns of the object table, in the order ``readRow(_:)`` reads them.
    static let columns = """
        type, identifier, data, is_encrypted, sync_status, creation_date, modification_date, revision, is_root, refs, \
        claim, claimed_at, is_deleted, attempts, last_error, retry_at, base, server_version, is_remote
        """

    /// Reads a row of ``columns``. The schema types every column, and forbids NULL where a value
    /// belongs: a row that does not decode is unreadable (a column changed below the library).
    static func readRow(_ row: PostgresRow) -> RowRead {
        var cells = Cells(row)
        let type = (try? cells.text()) ?? "?"
        let identifier = (try? cells.text()) ?? "?"
        let key = ObjectKey(typeName: type, identifier: identifier)
        do {
            let data = try cells.text(), isEncrypted = try cells.bool(), statusValue = try cells.int8()
            guard let status = SyncStatus(rawValue: Int(statusValue)) else {
                return .unreadable(key, .corruptData(typeName: type, identifier: identifier,
                                                     reason: "unknown sync status \(statusValue)"))
            }
            let creationDate = try cells.float8(), modificationDate = try cells.float8(), revision = try cells.int8()
            let isRoot = try cells.bool(), references = try cells.text(), claim = try cells.optionalText()
            let claimedAt = try cells.optionalFloat8(), isDeleted = try cells.bool(), attempts = try cells.int8()
            let lastError = try cells.optionalText(), retryAt = try cells.optionalFloat8(), base = try cells.optionalText()
            let serverVersion = try cells.optionalText(), isRemote = try cells.bool()
            var row = StoredRow(
                key: key, data: data, isEncrypted: isEncrypted, syncStatus: status,
                creationDate: Date(timeIntervalSince1970: creationDate), modificationDate: Date(timeIntervalSince1970: modificationDate),
                revision: revision, isRoot: isRoot, references: references, claim: claim,
                claimedAt: claimedAt.map(Date.init(timeIntervalSince1970:)), isDeleted: isDeleted, attempts: attempts,
                lastError: lastError, retryAt: retryAt.map(Date.init(timeIntervalSince1970:)), isRemote: isRemote, base: base,
                serverVersion: serverVersion)
            // A claim's rows come with the xmin of the version it wrote (PostgresStatement.claimRows).
            if cells.hasMore { row.rowVersion = try cells.int8() }
            return .row(row)
        } catch {
            return .unreadable(key, .corruptData(typeName: type, identifier: identifier, reason: "a column can't be read (\(error))"))
        }
    }

    /// The cells of a row, read in order, each in the binary format: every answer postgres-nio
    /// asks for is binary, though a prepared statement's rows are labelled text (see
    /// ``PooledConnection``). Reading the bytes here, rather than through `PostgresCell.decode`,
    /// costs a fraction of it (a claim reads 19 cells of each of its rows, twice).
    struct Cells {
        private var cells: PostgresRow.Iterator

        init(_ row: PostgresRow) {
            cells = row.makeIterator()
            count = row.count
        }

        /// The row's cells, and how many were read.
        private let count: Int
        private var read = 0

        /// Whether a cell is left to read.
        var hasMore: Bool { read < count }

        /// Why a cell can't be read: its column, and what it holds.
        struct Unreadable: Error, CustomStringConvertible {
            var description: String
        }

        private mutating func next(_ type: PostgresDataType, _ expected: String) throws -> ByteBuffer? {
            guard let cell = cells.next() else { throw Unreadable(description: "a column is missing") }
            read += 1
            guard cell.dataType == type else {
                throw Unreadable(description: "\(cell.columnName) is \(cell.dataType), not \(expected)")
            }
            return cell.bytes
        }

        private mutating func value(_ type: PostgresDataType, _ expected: String) throws -> ByteBuffer {
            guard let bytes = try next(type, expected) else { throw Unreadable(description: "a \(expected) column is NULL") }
            return bytes
        }

        mutating func optionalText() throws -> String? {
            try next(.text, "text").map { String(buffer: $0) }
        }

        mutating func text() throws -> String {
            String(buffer: try value(.text, "text"))
        }

        mutating func int8() throws -> Int64 {
            let bytes = try value(.int8, "bigint")
            guard bytes.readableBytes == 8, let value = bytes.getInteger(at: bytes.readerIndex, as: Int64.self) else {
                throw Unreadable(description: "a bigint is not 8 bytes")
            }
            return value
        }

        mutating func optionalFloat8() throws -> Double? {
            guard let bytes = try next(.float8, "double precision") else { return nil }
            guard bytes.readableBytes == 8, let bits = bytes.getInteger(at: bytes.readerIndex, as: UInt64.self) else {
                throw Unreadable(description: "a double is not 8 bytes")
            }
            return Double(bitPattern: bits)
        }

        mutating func float8() throws -> Double {
            guard let value = try optionalFloat8() else { throw Unreadable(description: "a double precision column is NULL") }
            return value
        }

        mutating func bool() throws -> Bool {
            let bytes = try value(.bool, "boolean")
            guard bytes.readableBytes == 1, let byte = bytes.getInteger(at: bytes.readerIndex, as: UInt8.self) else {
                throw Unreadable(description: "a boolean is not 1 byte")
            }
            return byte != 0
        }
    }

    func readRows(_ query: PostgresQuery) throws -> [RowRead] {
        try run(query).rows.map(Self.readRow)
    }

    func readRows(_ statement: PostgresStatement, _ binds: [PostgresData]) throws -> [RowRead] {
        try run(statement, binds).map(Self.readRow)
    }

    private func readRow(_ statement: PostgresStatement, _ key: ObjectKey) throws -> StoredRow? {
        try run(statement, [PostgresData(string: key.typeName), PostgresData(string: key.identifier)])
            .first.map { try Self.readRow($0).get() }
    }

    func row(_ key: ObjectKey, for purpose: RowPurpose) throws -> StoredRow? {
        if let locked = lockedRows[key] { return locked?.isDeleted == false ? locked : nil }
        guard isLocking else { return try readRow(.liveRow, key) }
        let row = try rowOrTombstone(key, for: purpose)
        return row?.isDeleted == false ? row : nil
    }

    func rowOrTombstone(_ key: ObjectKey, for purpose: RowPurpose) throws -> StoredRow? {
        if let locked = lockedRows[key] { return locked }
        // In the writer's transaction, a row read to be written is locked until the commit, so
        // that a claim (which takes no schema lock) can't change it between the read and the write.
        let row = try readRow(isLocking ? .rowForUpdate : .row, key)
        if isLocking { lockedRows[key] = .some(row) }
        return row
    }

    /// The row `key` as this transaction locked or wrote it (`.some(nil)`: no row), or `nil`
    /// when it doesn't know.
    func lockedRow(_ key: ObjectKey) -> StoredRow?? {
        lockedRows[key]
    }

    /// Whether this access's reads of a row lock it: the writer, in a transaction, but a claim
    /// (whose rows are locked by its `SKIP LOCKED` read; the rows its objects reference are read
    /// without a lock, so that a claim never waits for a write).
    private var isLocking: Bool { writes && depth > 0 && !isClaiming }

    /// Records what the transaction wrote into the row `key` (`nil`: removed it), or, when
    /// `row` is not given, forgets every row read (a statement changed rows it can't tell).
    func wrote(_ key: ObjectKey? = nil, _ row: StoredRow?? = nil) {
        // Outside a transaction nothing holds the row: nothing to remember.
        guard depth > 0 else { return }
        guard let key else {
            lockedRows = [:]
            return
        }
        if var row = row ?? nil {
            row.provisional = nil
            row.sealedFor = nil
            lockedRows[key] = .some(row)
        } else if row != nil {
            lockedRows[key] = .some(nil)
        } else {
            lockedRows[key] = nil
        }
    }

    func rows(ofType type: String, for purpose: RowPurpose) throws -> [RowRead] {
        try readRows("""
            SELECT \(unescaped: Self.columns) FROM \(unescaped: objects) WHERE type = \(type) AND NOT is_deleted ORDER BY identifier
            """)
    }

    /// A page of 500 rows at a time, none held open across `body` (a connection runs one query
    /// at a time, and `body` reads the rows a row references on the same connection); the next
    /// page is asked for before `body` sees this one's rows, so the server reads it meanwhile.
    func forEachRow(ofType type: String, for purpose: RowPurpose, _ body: (RowRead) throws -> Void) throws {
        let limit = 500
        func page(after identifier: String) throws -> EventLoopFuture<[PostgresRow]> {
            try sendBufferedRows()
            return try execute(.page, [
                PostgresData(string: type), PostgresData(string: identifier), PostgresData(int64: Int64(limit))])
        }
        var next = try page(after: "")
        while true {
            let reads = try answer(after: next).map(Self.readRow)
            let isLast = reads.count < limit
            if !isLast, let last = reads.last { next = try page(after: last.key.identifier) }
            for read in reads { try body(read) }
            if isLast { return }
        }
    }

    func rows(ofType type: String, after identifier: String?, limit: Int, for purpose: RowPurpose) throws -> [RowRead] {
        try readRows(.page, [PostgresData(string: type), PostgresData(string: identifier ?? ""), PostgresData(int64: Int64(limit))])
    }

    func rows(ofType type: String, status: SyncStatus, for purpose: RowPurpose) throws -> [RowRead] {
        try readRows("""
            SELECT \(unescaped: Self.columns) FROM \(unescaped: objects)
            WHERE sync_status = \(Int64(status.rawValue)) AND type = \(type) AND NOT is_deleted
            ORDER BY modification_date, identifier
            """)
    }

    // MARK: - Counting

    func count() throws -> Int {
        try integer("SELECT count(*) FROM \(unescaped: objects) WHERE NOT is_deleted")
    }

    func count(ofType type: String) throws -> Int {
        try integer("SELECT count(*) FROM \(unescaped: objects) WHERE type = \(type) AND NOT is_deleted")
    }

    func count(ofType type: String, status: SyncStatus) throws -> Int {
        try integer("""
            SELECT count(*) FROM \(unescaped: objects) WHERE sync_status = \(Int64(status.rawValue)) AND type = \(type) AND NOT is_deleted
            """)
    }

    func countsPerType(status: SyncStatus) throws -> [String: Int] {
        var counts: [String: Int] = [:]
        for row in try run("""
            SELECT type, count(*) FROM \(unescaped: objects) WHERE sync_status = \(Int64(status.rawValue)) AND NOT is_deleted GROUP BY type
            """).rows {
            let (type, count) = try row.decode((String, Int64).self)
            counts[type] = Int(count)
        }
        return counts
    }

    func identifiers(ofType type: String) throws -> [String] {
        try strings("SELECT identifier FROM \(unescaped: objects) WHERE type = \(type) AND NOT is_deleted ORDER BY identifier")
    }

    func identifiers(ofType type: String, status: SyncStatus) throws -> [String] {
        try strings("""
            SELECT identifier FROM \(unescaped: objects) WHERE sync_status = \(Int64(status.rawValue)) AND type = \(type)
                AND NOT is_deleted ORDER BY modification_date, identifier
            """)
    }

    func types() throws -> [String] {
        try strings("SELECT DISTINCT type FROM \(unescaped: objects) WHERE NOT is_deleted")
    }

    func stamps(ofType type: String, identifiers: [String]?) throws -> [String: RowStamp] {
        let rows: [PostgresRow]
        if let identifiers {
            rows = try run("""
                SELECT identifier, revision, modification_date, sync_status FROM \(unescaped: objects)
                WHERE type = \(type) AND identifier = ANY(\(identifiers)) AND NOT is_deleted
                """).rows
        } else {
            rows = try run("""
                SELECT identifier, revision, modification_date, sync_status FROM \(unescaped: objects)
                WHERE type = \(type) AND NOT is_deleted
                """).rows
        }
        var stamps: [String: RowStamp] = [:]
        for row in rows {
            let (identifier, revision, date, status) = try row.decode((String, Int64, Double, Int64).self)
            stamps[identifier] = RowStamp(revision: revision, modificationDate: date, syncStatus: status)
        }
        return stamps
    }

    func isReferenced(_ key: ObjectKey) throws -> Bool {
        try integer("""
            SELECT count(*) FROM (SELECT 1 FROM \(unescaped: references)
                WHERE to_type = \(key.typeName) AND to_identifier = \(key.identifier)
                AND NOT (from_type = \(key.typeName) AND from_identifier = \(key.identifier)) LIMIT 1) AS found
            """) > 0
    }

    /// Only references to live objects: a reference that dangles already is no referrer of anything.
    func references(toType type: String, identifier: String?) throws -> [(to: ObjectKey, from: ObjectKey)] {
        let rows: [PostgresRow]
        if let identifier {
            rows = try run("""
                SELECT r.to_identifier, r.from_type, r.from_identifier FROM \(unescaped: references) AS r
                WHERE r.to_type = \(type) AND r.to_identifier = \(identifier) AND EXISTS (
                    SELECT 1 FROM \(unescaped: objects) AS o WHERE o.type = r.to_type AND o.identifier = r.to_identifier AND NOT o.is_deleted)
                ORDER BY r.from_type, r.from_identifier
                """).rows
        } else {
            rows = try run("""
                SELECT r.to_identifier, r.from_type, r.from_identifier FROM \(unescaped: references) AS r
                WHERE r.to_type = \(type) AND EXISTS (
                    SELECT 1 FROM \(unescaped: objects) AS o WHERE o.type = r.to_type AND o.identifier = r.to_identifier AND NOT o.is_deleted)
                ORDER BY r.to_identifier, r.from_type, r.from_identifier
                """).rows
        }
        return try rows.map { row in
            let (to, fromType, fromIdentifier) = try row.decode((String, String, String).self)
            return (ObjectKey(typeName: type, identifier: to), ObjectKey(typeName: fromType, identifier: fromIdentifier))
        }
    }

    // MARK: - Claims

    func claimableRows(ofType type: String, status: SyncStatus, limit: Int, excluding: Set<ObjectKey>,
                       now: Date, maximumAttempts: Int) throws -> [RowRead] {
        let reads = try readRows(.claimable, [
            PostgresData(int64: Int64(status.rawValue)), PostgresData(string: type), PostgresData(double: now.timeIntervalSince1970),
            PostgresData(int64: Int64(maximumAttempts)), PostgresData(int64: Int64(limit + excluding.count))])
        return Array((excluding.isEmpty ? reads : reads.filter { !excluding.contains($0.key) }).prefix(limit))
    }

    /// The sync columns of `originals` written back as they were (``PostgresStatement/updateStatuses``):
    /// the marking changed only those, and the rows are this claim's, locked.
    func restoreClaimed(_ originals: [StoredRow], claim: String) throws {
        wrote()
        takenRows = takenRows.filter { taken in !originals.contains { $0.key == taken.key } }
        try send(.restoreClaimed, [
            PostgresArray.texts(originals.map(\.key.typeName)), PostgresArray.texts(originals.map(\.key.identifier)),
            PostgresArray.int8s(originals.map { Int64($0.syncStatus.rawValue) }), PostgresArray.bools(originals.map(\.isRemote)),
            PostgresArray.texts(originals.map(\.base)), PostgresData(string: claim)])
    }

    /// One statement (``PostgresStatement/claimRows``): the rows read, marked, and returned as
    /// they were, in claim order (the statement returns them in the order it updated them).
    /// Every row it takes is readable: the schema types each column, and the status is the one
    /// asked for.
    func claimRows(ofType type: String, status: SyncStatus, limit: Int, excluding: Set<ObjectKey>,
                   claim: String, now: Date, maximumAttempts: Int) throws -> [RowRead] {
        wrote()
        claimID = claim
        let reads = try readRows(.claimRows, [
            PostgresData(int64: Int64(status.rawValue)), PostgresData(string: type), PostgresData(double: now.timeIntervalSince1970),
            PostgresData(int64: Int64(maximumAttempts)), PostgresData(int64: Int64(limit)), PostgresData(string: claim),
            PostgresArray.texts(excluding.map(\.identifier))])
        takenRows += reads.compactMap { try? $0.get() }
        // Readable rows in claim order, then any other by key (none: see above).
        return reads.sorted { first, second in
            switch (first, second) {
            case (.row(let first), .row(let second)): return RowRules.claimOrder(first, second)
            case (.row, .unreadable): return true
            case (.unreadable, .row): return false
            case (.unreadable, .unreadable): return first.key < second.key
            }
        }
    }

    func claimedRows() throws -> [(key: ObjectKey, claim: String)] {
        try run("""
            SELECT type, identifier, claim FROM \(unescaped: objects)
            WHERE claim IS NOT NULL AND claimed_at IS NOT NULL ORDER BY type, identifier
            """).rows.map { row in
            let (type, identifier, claim) = try row.decode((String, String, String).self)
            return (ObjectKey(typeName: type, identifier: identifier), claim)
        }
    }

    func heldRows(ofType type: String, maximumAttempts: Int) throws -> [(identifier: String, attempts: Int, lastError: String?)] {
        try run("""
            SELECT identifier, attempts, last_error FROM \(unescaped: objects)
            WHERE type = \(type) AND attempts >= \(Int64(maximumAttempts)) AND claim IS NULL ORDER BY modification_date, identifier
            """).rows.map { row in
            let (identifier, attempts, lastError) = try row.decode((String, Int64, String?).self)
            return (identifier, Int(attempts), lastError)
        }
    }

    // MARK: - Records

    func records(ofType type: String?, after key: ObjectKey?, limit: Int) throws -> [RowRead] {
        switch (type, key) {
        case (nil, nil):
            return try readRows("SELECT \(unescaped: Self.columns) FROM \(unescaped: objects) ORDER BY type, identifier LIMIT \(Int64(limit))")
        case (nil, let key?):
            return try readRows("""
                SELECT \(unescaped: Self.columns) FROM \(unescaped: objects) WHERE (type, identifier) > (\(key.typeName), \(key.identifier))
                ORDER BY type, identifier LIMIT \(Int64(limit))
                """)
        case (let type?, nil):
            return try readRows("""
                SELECT \(unescaped: Self.columns) FROM \(unescaped: objects) WHERE type = \(type) ORDER BY identifier LIMIT \(Int64(limit))
                """)
        case (let type?, let key?):
            return try readRows("""
                SELECT \(unescaped: Self.columns) FROM \(unescaped: objects)
                WHERE type = \(type) AND (type, identifier) > (\(key.typeName), \(key.identifier))
                ORDER BY identifier LIMIT \(Int64(limit))
                """)
        }
    }

    func record(_ key: ObjectKey) throws -> RowRead? {
        try rowOrTombstone(key, for: .all).map { .row($0) }
    }

    func typeStatistics(maximumAttempts: Int) throws -> [TypeStatistics] {
        var statistics: [String: TypeStatistics] = [:]
        for row in try run("""
            SELECT type, sync_status, is_deleted, count(*), count(claim),
                count(*) FILTER (WHERE attempts >= \(Int64(maximumAttempts)) AND claim IS NULL),
                min(modification_date) FILTER (WHERE sync_status = \(Int64(SyncStatus.notSynced.rawValue))),
                coalesce(sum(octet_length(data)), 0)::bigint, count(*) FILTER (WHERE is_encrypted)
            FROM \(unescaped: objects) GROUP BY type, sync_status, is_deleted
            """).rows {
            let (type, statusValue, isDeleted, count, claims, held, oldest, size, encrypted) =
                try row.decode((String, Int64, Bool, Int64, Int64, Int64, Double?, Int64, Int64).self)
            var entry = statistics[type] ?? TypeStatistics(typeName: type)
            entry.dataSize += Int(size)
            if isDeleted {
                entry.tombstones += Int(count)
            } else {
                entry.count += Int(count)
                entry.countsByStatus[SyncStatus(rawValue: Int(statusValue)) ?? .undetermined, default: 0] += Int(count)
                entry.encryptedCount += Int(encrypted)
            }
            entry.openClaims += Int(claims)
            entry.heldObjects += Int(held)
            if let oldest {
                let date = Date(timeIntervalSince1970: oldest)
                entry.oldestUnsyncedChange = min(entry.oldestUnsyncedChange ?? date, date)
            }
            statistics[type] = entry
        }
        return statistics.values.sorted { $0.typeName < $1.typeName }
    }

    func storageSize() throws -> (store: Int, log: Int) {
        let size = try integer("""
            SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0)::bigint FROM pg_class AS c
            JOIN pg_namespace AS n ON n.oid = c.relnamespace WHERE n.nspname = \(schema) AND c.relkind = 'r'
            """)
        return (size, 0)
    }

    func formatVersion() throws -> Int {
        try integer("SELECT version::bigint FROM \(unescaped: schema).garage_format")
    }

    // MARK: - Facts

    func metadata(_ name: String) throws -> String? {
        try run("SELECT value FROM \(unescaped: facts) WHERE name = \(name)").rows.first.map { try $0.decode(String.self) }
    }

    func encryptionCount() throws -> Int64 {
        guard let value = try metadata("encryptions") else { return 0 }
        return Int64(value) ?? 0
    }
}
