import Foundation
import GarageLiteCore

// Autosave, unsaved changes and transactions. How every call reaches the store (its work
// described once, a `StoreWork` or changes with their check, run by one of two runners,
// synchronous or asynchronous) is in Operations/Garage+Saving+Work.swift.
extension Garage {
    /// Whether the garage holds changes that ``save()-9hqro`` has not written yet.
    public var hasUnsavedChanges: Bool {
        store.hasUnsavedChanges
    }

    /// Writes every unsaved change, in one transaction. Does nothing when there is none.
    ///
    /// Needed only when autosave is off:
    ///
    /// ```swift
    /// garage.isAutosaveEnabled = false
    /// try garage.park(alice)
    /// try garage.park(bob)
    /// try garage.save()          // alice and bob are written together
    /// ```
    ///
    /// If the write fails, nothing is written and the changes stay unsaved.
    public func save() throws {
        try run(saving)
    }

    /// Writes every unsaved change (see ``save()-9hqro``), without blocking the calling thread.
    public nonisolated(nonsending) func save() async throws {
        try await run(saving)
    }

    /// Forgets every unsaved change.
    public func discardUnsavedChanges() {
        store.discardUnsavedChanges()
    }

    /// Forgets the unsaved changes to one object (those of the transaction begun with
    /// ``beginTransaction()`` too), keeping the others: the way out of a save refused because
    /// another writer changed that object after this garage recorded its change.
    ///
    /// ```swift
    /// do {
    ///     try garage.save()
    /// } catch GarageError.staleObject(_, let identifier, _, _) {
    ///     try garage.discardUnsavedChanges(of: Note.self, identifier: identifier)
    ///     var note = try garage.retrieve(Note.self, identifier: identifier)!   // the newer version
    ///     note.text = editedText                                               // the edit, again
    ///     try garage.park(&note)
    ///     try garage.save()
    /// }
    /// ```
    ///
    /// Changes to other objects that the discarded change came with (a parent parked with it,
    /// say) stay unsaved. Reads of this garage see the stored object again.
    public func discardUnsavedChanges<T, ID: GarageIdentifier>(of type: T.Type, identifier: ID) throws {
        let key = ObjectKey(typeName: try storedTypeName(T.self), identifier: try Identity.string(fromID: identifier))
        store.discardUnsavedChanges(to: key)
        state.read { $0.explicitTransaction }?.forget(key)
    }

    /// Runs `body` with autosave off, then restores it. GarageStorage's API.
    ///
    /// Changes made inside stay unsaved until ``save()-9hqro`` (or until a change is made with
    /// autosave on, which saves everything):
    ///
    /// ```swift
    /// try garage.withAutosaveDisabled {
    ///     for person in people { try garage.park(person) }
    /// }
    /// try garage.save()
    /// ```
    ///
    /// Autosave is off for the calls `body` makes from its own thread or task; other threads
    /// keep autosaving (and a change they make saves everything unsaved, this batch included).
    @discardableResult
    public func withAutosaveDisabled<Result>(_ body: () throws -> Result) rethrows -> Result {
        try GarageScope.$current.withValue(GarageScope(garage: self, disablesAutosave: true)) {
            try body()
        }
    }

    /// Runs `body` with autosave off (see the synchronous variant), in `async` code.
    @discardableResult
    public nonisolated(nonsending) func withAutosaveDisabled<Result>(
        _ body: nonisolated(nonsending) () async throws -> Result
    ) async rethrows -> Result {
        try await GarageScope.$current.withValue(GarageScope(garage: self, disablesAutosave: true)) {
            try await body()
        }
    }

    /// Runs `body`, and commits every change it made to this garage together, or none if it throws.
    ///
    /// ```swift
    /// try garage.transaction {
    ///     try garage.delete(oldAddress)
    ///     try garage.park(person)     // both, or neither
    /// }
    /// ```
    ///
    /// Inside `body`, calls from the same thread or task read the transaction's changes;
    /// other threads see none of them until it commits. Changes are held in memory until
    /// the end, so a transaction holds no lock on the store meanwhile; it does not isolate
    /// `body`'s reads from other writers. Transactions nest: an inner one commits into the
    /// outer one. With autosave off, the changes join the unsaved changes instead.
    ///
    /// - throws: The error `body` threw, or the error of the commit.
    @discardableResult
    public func transaction<Result>(_ body: () throws -> Result) throws -> Result {
        let buffer = TransactionBuffer()
        let outcome = Swift.Result { try GarageScope.$current.withValue(scope(for: buffer), operation: body) }
        return try run(committing(buffer, after: outcome))
    }

    /// Runs `body` and commits every change it made together (see ``transaction(_:)-4nq2j``), in
    /// `async` code: `body` may `await` the garage's `async` calls.
    ///
    /// ```swift
    /// try await garage.transaction {
    ///     try await garage.delete(oldAddress)
    ///     try await garage.park(person)     // both, or neither
    /// }
    /// ```
    @discardableResult
    public nonisolated(nonsending) func transaction<Result>(
        _ body: nonisolated(nonsending) () async throws -> Result
    ) async throws -> Result {
        let buffer = TransactionBuffer()
        let outcome: Swift.Result<Result, any Error>
        do { outcome = .success(try await GarageScope.$current.withValue(scope(for: buffer), operation: body)) } catch { outcome = .failure(error) }
        return try await run(committing(buffer, after: outcome))
    }

    // MARK: - Explicit transactions

    /// Begins a transaction that lasts until ``commitTransaction()-15z92`` or
    /// ``rollbackTransaction()``, for code that can't put its work in a closure.
    ///
    /// ```swift
    /// try garage.beginTransaction()
    /// try garage.delete(oldAddress)
    /// try garage.park(person)
    /// try garage.commitTransaction()         // both, or (rollbackTransaction()) neither
    /// ```
    ///
    /// Unlike ``transaction(_:)-4nq2j``, it is the garage's, not the calling thread's or task's:
    /// until it ends, every change made to this garage, from any thread or task, joins it, and
    /// every read of this garage sees its changes. Other garages and processes see none of them
    /// until it commits. Changes are held in memory, holding no lock on the store.
    /// `transaction { }` inside it commits into it.
    ///
    /// - throws: ``GarageError/transactionMisuse(operation:reason:)`` when one is active already.
    public func beginTransaction() throws {
        try state.write { state in
            if state.explicitTransaction != nil {
                throw GarageError.transactionMisuse(
                    operation: "begin a transaction",
                    reason: "one is active already; commit or roll it back first (transactions begun this way don't nest; "
                        + "transaction { } does)")
            }
            state.explicitTransaction = TransactionBuffer()
        }
    }

    /// Whether a transaction begun with ``beginTransaction()`` is active, or this call runs
    /// inside ``transaction(_:)-4nq2j``.
    public var isTransactionActive: Bool {
        transactionChanges() != nil
    }

    /// Commits the transaction begun with ``beginTransaction()``: writes its changes, in one
    /// transaction (into the unsaved changes when autosave is off, or into the enclosing
    /// `transaction { }`).
    ///
    /// - throws: ``GarageError/transactionMisuse(operation:reason:)`` when none is active; the
    ///   errors of the write, which leave the transaction active with its changes, to commit
    ///   again or roll back.
    public func commitTransaction() throws {
        try run(committingTransaction())
    }

    /// Commits the transaction begun with ``beginTransaction()`` (see
    /// ``commitTransaction()-15z92``) without blocking the calling thread.
    public nonisolated(nonsending) func commitTransaction() async throws {
        try await run(committingTransaction())
    }

    /// Forgets every change of the transaction begun with ``beginTransaction()``.
    ///
    /// - throws: ``GarageError/transactionMisuse(operation:reason:)`` when none is active.
    public func rollbackTransaction() throws {
        _ = try endingTransaction("roll back a transaction").close()
    }
}

