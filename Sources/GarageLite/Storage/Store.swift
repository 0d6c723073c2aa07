import Foundation
import GarageLiteCore
import GarageLiteSQLite

/// The store as the garage uses it, whatever database holds it: the runners that run one
/// description of a call's work (a ``StoreWork``) synchronously or asynchronously, the
/// garage's unsaved changes, and the work of saving, claiming, checking and collecting
/// garbage (`Store+Saving.swift`, `Store+Claims.swift`, `Store+Integrity.swift`).
///
/// Every transaction of the garage is opened here: the façade describes what to read and
/// what to change, and never sees a connection.
final class Store: Sendable {
    let engine: any StorageEngine
    /// Told of every commit, with what it changed.
    let listener: any CommitListener
    /// Changes made while autosave was off, and a counter of discards.
    let unsaved = Protected(Unsaved())

    struct Unsaved: Sendable {
        var changes = ChangeSet()
        /// Changes each time unsaved changes are discarded.
        var epoch: UInt64 = 0
        /// Changes every read sees and nothing writes: the moves of renamed types that a
        /// read-only store can't make (see ``Garage/register(_:formerTypeNames:)``). Never
        /// discarded.
        var readThrough = ChangeSet()
    }

    init(engine: any StorageEngine, listener: any CommitListener) {
        self.engine = engine
        self.listener = listener
    }

    /// The file path, or `nil` for a store in memory.
    var path: String? { engine.path }
    /// Whether the store can only be read.
    var isReadOnly: Bool { engine.isReadOnly }

    // MARK: - Unsaved changes

    var hasUnsavedChanges: Bool { unsaved.read { !$0.changes.isEmpty } }

    func recordUnsaved(_ changes: ChangeSet) {
        let stamped = changes.stamped(Date())
        unsaved.write { $0.changes.merge(stamped) }
    }

    /// Adds `changes` to those every read sees and nothing writes (see ``Unsaved/readThrough``).
    func readThrough(_ changes: ChangeSet) {
        unsaved.write { $0.readThrough.merge(changes) }
    }

    /// Forgets the unsaved changes to the row `key`, keeping the others.
    func discardUnsavedChanges(to key: ObjectKey) {
        unsaved.write { $0.changes.forget(key) }
    }

    func discardUnsavedChanges() {
        unsaved.write {
            $0.changes = ChangeSet()
            $0.epoch += 1
        }
    }

    /// The changes a call sees but the store does not have yet: those read through (see
    /// ``Unsaved/readThrough``), the unsaved changes, then
    /// `transactions` (those of the transactions the call runs in, outermost first). `nil`
    /// when there are none.
    func pendingChanges(adding transactions: ChangeSet?) -> ChangeSet? {
        var pending = unsaved.read { unsaved in
            guard !unsaved.readThrough.isEmpty else { return unsaved.changes }
            var pending = unsaved.readThrough
            pending.merge(unsaved.changes)
            return pending
        }
        // Nothing unsaved: the transactions' changes as they are (not copied into an empty set).
        if pending.isEmpty { return transactions.flatMap { $0.isEmpty ? nil : $0 } }
        if let transactions { pending.merge(transactions) }
        return pending.isEmpty ? nil : pending
    }

    // MARK: - Describing work

    /// Reads through ``StoreView``: the committed store with `pending` applied over it, in one
    /// snapshot (with `snapshot: false`, each statement is its own snapshot until the work
    /// calls ``StoreView/snapshot(_:)``; pending changes always read in one).
    func reading<T>(
        _ operation: @autoclosure @escaping @Sendable () -> String, pending: ChangeSet?, snapshot: Bool = true,
        _ body: @escaping @Sendable (StoreView) throws -> T
    ) -> StoreWork<T> {
        StoreWork(operation: operation(), access: .read { statements in
            try Self.read(statements, pending: pending, snapshot: snapshot, body)
        })
    }

    /// Reads as ``reading(_:pending:snapshot:_:)`` does, with the pending changes `pending`
    /// holds when the work runs: the caller may let go of them once it ran.
    func reading<T>(
        _ operation: @autoclosure @escaping @Sendable () -> String, pending: Protected<ChangeSet?>, snapshot: Bool = true,
        _ body: @escaping @Sendable (StoreView) throws -> T
    ) -> StoreWork<T> {
        StoreWork(operation: operation(), access: .read { statements in
            try Self.read(statements, pending: pending.read { $0 }, snapshot: snapshot, body)
        })
    }

    /// Runs `body` on the view of `statements` with `pending` over them.
    private static func read<T>(_ statements: any RowStatements, pending: ChangeSet?, snapshot: Bool,
                                _ body: (StoreView) throws -> T) throws -> T {
        let view = StoreView(statements, pending: pending)
        return snapshot || pending != nil ? try view.snapshot(body) : try body(view)
    }

    // MARK: - Running work

    /// Runs `work` on this thread.
    func run<T>(_ work: StoreWork<T>) throws -> T {
        try Self.checkNotReentrant(work)
        switch work.access {
        case .read(let body):
            return try engine.read(work.operation) { statements in try Self.accessing { try body(statements) } }
        case .write(let body):
            return try engine.write(work.operation) { statements in try Self.accessing { try body(statements) } }
        }
    }

    /// Runs `work` on the database's threads, without blocking the calling thread.
    ///
    /// A cancelled task's write does not start, and a write whose task is cancelled before it
    /// commits rolls back (see ``transaction(_:_:)``): both throw `CancellationError`, so a
    /// call of many writes (a ``StoreCall``) stops between two of them. A read runs: it leaves
    /// nothing half-done, and an observation still yields the commits it was told of.
    func run<T>(_ work: StoreWork<T>) async throws -> sending T {
        try Self.checkNotReentrant(work)
        // Only a cancellable write watches its task: a read runs as it is, at no cost.
        guard case .write = work.access, work.isCancellable else { return try await starting(work, cancellation: nil) }
        try Task.checkCancellation()
        let cancellation = Cancellation()
        return try await withTaskCancellationHandler {
            try await starting(work, cancellation: cancellation)
        } onCancel: {
            cancellation.cancel()
        }
    }

    /// Starts `work` on the database's threads, with `cancellation` set for its body (see
    /// ``transaction(_:_:)``), and waits for its result.
    private func starting<T>(_ work: StoreWork<T>, cancellation: Cancellation?) async throws -> sending T {
        let engine = engine
        return try await withCheckedThrowingContinuation { continuation in
            /// Runs the body on the database's thread, then resumes the caller.
            @Sendable func resume(_ body: () throws -> T) {
                do {
                    // The result is made by the body on this thread, and nothing else the body
                    // made outlives it (its decoder and view end with it): the caller gets the
                    // only reference, so it is handed over as a disconnected value.
                    nonisolated(unsafe) let result = try Self.$cancellation.withValue(cancellation) {
                        try Self.accessing(body)
                    }
                    continuation.resume(returning: result)
                } catch {
                    continuation.resume(throwing: engine.garageError(error, operation: work.operation))
                }
            }
            switch work.access {
            case .read(let body):
                engine.startRead(work.operation) { connection in resume { try body(connection.get()) } }
            case .write(let body):
                engine.startWrite(work.operation) { connection in resume { try body(connection.get()) } }
            }
        }
    }

    // MARK: - Transactions and cancellation

    /// Whether the task that runs the current work was cancelled: set by the `async` runner
    /// around its work's body, on the database's thread; `nil` for a synchronous call.
    @TaskLocal static var cancellation: Cancellation?

    /// A flag the `async` runner sets when its task is cancelled.
    final class Cancellation: Sendable {
        private let flag = Protected(false)
        var isCancelled: Bool { flag.read { $0 } }
        func cancel() { flag.write { $0 = true } }
    }

    /// Runs `body` in one write transaction of `statements`: every write of the store is one.
    /// The transaction commits when `body` returns, unless the `async` call it runs for was
    /// cancelled meanwhile: then it rolls back and throws `CancellationError`, so that a
    /// cancelled call never commits. A claim and a claim's end say so (`kind`): on an engine
    /// whose claims scale out, they don't wait for each other (``RowWriteStatements/claimTransaction(_:)``,
    /// ``RowWriteStatements/claimEndTransaction(_:)``).
    static func transaction<T>(_ statements: any RowWriteStatements, _ kind: TransactionKind = .write,
                               _ body: () throws -> T) throws -> T {
        func checked() throws -> T {
            let result = try body()
            try checkNotCancelled()
            return result
        }
        switch kind {
        case .write: return try statements.transaction(checked)
        case .claim: return try statements.claimTransaction(checked)
        case .claimEnd: return try statements.claimEndTransaction(checked)
        }
    }

    /// What a write transaction does (``transaction(_:_:_:)``).
    enum TransactionKind {
        /// Any write.
        case write
        /// Takes a batch of rows for a sync job.
        case claim
        /// Ends a claim: writes only the claim's own rows.
        case claimEnd
    }

    /// Throws `CancellationError` when the `async` call the current work runs for was
    /// cancelled. Long work inside one transaction (an import) calls it between batches, so
    /// that it stops early: its transaction rolls back.
    static func checkNotCancelled() throws {
        if cancellation?.isCancelled == true { throw CancellationError() }
    }

    /// How many rows long work writes between two checks of ``checkNotCancelled()``.
    static let cancellationBatch = 256

    // MARK: - Reentrancy

    /// Whether the current thread or task runs inside one of the store's database accesses.
    ///
    /// User code runs there (`init(from:)`, the encryption delegate, a custom date strategy).
    /// If it called the garage, the database would deadlock or stop the process: the store
    /// throws instead.
    @TaskLocal static var isAccessing = false

    /// Set while this thread feeds a streaming write: the writer waits for it, so a write from
    /// it (from an `encode(to:)` or the encryption delegate) could never run.
    @TaskLocal static var isFeedingWriter = false

    private static func accessing<T>(_ body: () throws -> T) rethrows -> T {
        try $isAccessing.withValue(true, operation: body)
    }

    static func checkNotReentrant<T>(_ work: StoreWork<T>) throws {
        if isAccessing {
            throw GarageError.reentrantCall(operation: work.operation)
        }
        if case .write = work.access, isFeedingWriter {
            throw GarageError.reentrantCall(operation: work.operation)
        }
    }

    /// The store's task-local state of the current thread, to set again on another thread
    /// that continues its work (see ``ThreadContext``).
    static func capturedState() -> @Sendable (() -> Void) -> Void {
        let isAccessing = isAccessing, isFeedingWriter = isFeedingWriter
        return { body in
            $isAccessing.withValue(isAccessing) { $isFeedingWriter.withValue(isFeedingWriter, operation: body) }
        }
    }
}

/// One access to the store, described once: ``Store/run(_:)`` runs it on the calling thread,
/// or without blocking it.
struct StoreWork<Result>: Sendable {
    enum Access: Sendable {
        /// On a connection that reads, outside any transaction: the body opens its snapshot.
        case read(@Sendable (any RowStatements) throws -> Result)
        /// With the writer, alone: the body opens its transaction.
        case write(@Sendable (any RowWriteStatements) throws -> Result)
    }

    /// What the call does, in words, for errors: "retrieve Person(Sam)". Built only when an
    /// error needs it: a retrieve by identifier costs about as much as building the words.
    var operation: String { describe() }
    let access: Access
    /// Whether a cancelled `async` call stops before this write, or rolls it back: not for a
    /// write that records what already happened outside the store (a claim's end: the server
    /// has the upload), nor for one small write that must follow another (a key record), nor
    /// for a read made with the writer.
    let isCancellable: Bool
    private let describe: @Sendable () -> String

    init(operation: @autoclosure @escaping @Sendable () -> String, access: Access, isCancellable: Bool = true) {
        self.describe = operation
        self.access = access
        self.isCancellable = isCancellable
    }

    /// The same work, its result made `transform`'s.
    func map<Next>(_ transform: @escaping @Sendable (Result) throws -> Next) -> StoreWork<Next> {
        let next: StoreWork<Next>.Access
        switch access {
        case .read(let body): next = .read { try transform(try body($0)) }
        case .write(let body): next = .write { try transform(try body($0)) }
        }
        return StoreWork<Next>(operation: describe(), access: next, isCancellable: isCancellable)
    }
}

/// Told of what each commit changed: the garage's observers.
protocol CommitListener: Sendable {
    /// Whether anyone listens: if not, a writer need not collect what it wrote.
    var isListening: Bool { get }
    /// Called right after a commit, on the writer, so that commits are told in order.
    func committed(_ changes: ChangeSet)
}

extension Store {
    /// Whether `error` is one row's (it can't be read, decrypted or decoded) rather than the
    /// store's (SQLite, a busy or damaged file): reads that skip bad rows skip only those.
    func isRowFailure(_ error: any Error) -> Bool {
        switch engine.garageError(error, operation: "read a row") as? GarageError {
        case .reentrantCall?, .storeBusy?, .storageFailure?, .connectionLost?, .damagedStore?, .readOnlyStore?, .storeFull?:
            return false
        default:
            return true
        }
    }
}
