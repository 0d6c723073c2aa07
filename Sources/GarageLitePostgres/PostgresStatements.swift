import Foundation
import GarageLite
import Logging
import NIOCore
import PostgresNIO

/// One PostgreSQL connection as the garage uses it, for one access: the statements of
/// ``RowStatements`` and ``RowWriteStatements``: running statements and transactions here; the
/// one reader of the object table's rows in `+Rows.swift`; counts, claims, records and facts in
/// `+Reports.swift`; writes in `+Writes.swift`; checks in `+Integrity.swift`; queries in
/// `+Queries.swift` and `+TextSearch.swift`.
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
    var depth = 0
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
    var lockedRows: [ObjectKey: StoredRow?] = [:]
    /// Whether this access runs a claim (``claimTransaction(_:)``).
    var isClaiming = false
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
    func answer(after future: EventLoopFuture<[PostgresRow]>) throws -> [PostgresRow] {
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
    func execute(_ statement: PostgresStatement, _ binds: [PostgresData]) throws -> EventLoopFuture<[PostgresRow]> {
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
    func sendBufferedRows() throws {
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

    func integer(_ query: PostgresQuery) throws -> Int {
        guard let row = try run(query).rows.first else { return 0 }
        return Int(try row.decode(Int64?.self) ?? 0)
    }

    func strings(_ query: PostgresQuery) throws -> [String] {
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
    var takenRows: [StoredRow] = []
    var claimID: String?

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
}
