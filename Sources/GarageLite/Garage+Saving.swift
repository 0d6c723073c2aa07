import Foundation

// Autosave, unsaved changes, transactions, and how every call reaches the store: its work is
// described once (a `StoreWork`, or changes with their check) and run by one of two runners
// here, synchronous or asynchronous.
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

    private var saving: StoreWork<Void> {
        store.saving("save", ChangeSet()) { _ in }
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
    public func withAutosaveDisabled<Result>(_ body: () throws -> Result) rethrows -> Result {
        try GarageScope.$current.withValue(GarageScope(garage: self, disablesAutosave: true)) {
            try body()
        }
    }

    /// Runs `body` with autosave off (see the synchronous variant), in `async` code.
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
    public nonisolated(nonsending) func transaction<Result>(
        _ body: nonisolated(nonsending) () async throws -> Result
    ) async throws -> Result {
        let buffer = TransactionBuffer()
        let outcome: Swift.Result<Result, any Error>
        do { outcome = .success(try await GarageScope.$current.withValue(scope(for: buffer), operation: body)) } catch { outcome = .failure(error) }
        return try await run(committing(buffer, after: outcome))
    }

    /// The scope of a `transaction { }` that records into `buffer`.
    private func scope(for buffer: TransactionBuffer) -> GarageScope {
        GarageScope(garage: self, transaction: buffer)
    }

    /// Ends the transaction whose changes `buffer` holds, after its body returned `outcome`:
    /// records the changes where they belong and returns the body's result, or forgets them
    /// and throws the body's error.
    private func committing<Result>(_ buffer: TransactionBuffer, after outcome: Swift.Result<Result, any Error>) -> StoreCall<Result> {
        let changes = buffer.close()
        return .starting {
            let result = try outcome.get()
            return recording("commit a transaction", changes) { _ in }.map { result }
        }
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

    /// Commits the explicit transaction; a failed commit leaves it active again.
    private func committingTransaction() -> StoreCall<Void> {
        .starting {
            let changes = try endingTransaction("commit a transaction").close()
            return recording("commit a transaction", changes) { _ in }.catching { error in
                self.reopenTransaction(with: changes)
                throw error
            }
        }
    }

    /// Forgets every change of the transaction begun with ``beginTransaction()``.
    ///
    /// - throws: ``GarageError/transactionMisuse(operation:reason:)`` when none is active.
    public func rollbackTransaction() throws {
        _ = try endingTransaction("roll back a transaction").close()
    }

    /// Takes the explicit transaction out of the garage, so that the calls that end it don't
    /// record into it.
    private func endingTransaction(_ operation: String) throws -> TransactionBuffer {
        try state.write { state in
            guard let buffer = state.explicitTransaction else {
                throw GarageError.transactionMisuse(
                    operation: operation, reason: "no transaction is active; call beginTransaction() first")
            }
            state.explicitTransaction = nil
            return buffer
        }
    }

    /// Makes a transaction whose commit failed active again, with `changes`, unless another
    /// began meanwhile (then they join it).
    private func reopenTransaction(with changes: ChangeSet) {
        let buffer = state.write { state in
            let buffer = state.explicitTransaction ?? TransactionBuffer()
            state.explicitTransaction = buffer
            return buffer
        }
        var merged = changes
        if let later = buffer.pending { merged.merge(later) }
        _ = buffer.replace(with: merged)
    }

    // MARK: - Runners

    /// Runs `work` on this thread.
    func run<T>(_ work: StoreWork<T>) throws -> T {
        try store.run(work)
    }

    /// Runs `work` without blocking the calling thread.
    nonisolated(nonsending) func run<T>(_ work: StoreWork<T>) async throws -> sending T {
        try await store.run(work)
    }

    /// Makes `call` on this thread.
    func run<T>(_ call: StoreCall<T>) throws -> T {
        try store.run(call)
    }

    /// Makes `call` without blocking the calling thread.
    nonisolated(nonsending) func run<T>(_ call: StoreCall<T>) async throws -> T {
        try await store.run(call)
    }

    /// Records `changes` where they belong (see ``recording(_:_:check:)``), on this thread.
    func record<T: Sendable>(
        _ operation: String, _ changes: ChangeSet, check: @escaping @Sendable (StoreView) throws -> T
    ) throws -> T {
        try run(recording(operation, changes, check: check))
    }

    /// Records `changes` where they belong (see ``recording(_:_:check:)``), without blocking
    /// the calling thread.
    nonisolated(nonsending) func record<T: Sendable>(
        _ operation: String, _ changes: ChangeSet, check: @escaping @Sendable (StoreView) throws -> T
    ) async throws -> T {
        try await run(recording(operation, changes, check: check))
    }

    /// Records `changes` where they belong: in the innermost transaction this call runs in,
    /// in the unsaved changes when autosave is off, or in the store, with the unsaved changes,
    /// in one transaction.
    ///
    /// `check` runs first, on the store as this call sees it (inside the write transaction
    /// when there is one); it throws to refuse the changes, and its result is returned.
    func recording<T: Sendable>(
        _ operation: String, _ changes: ChangeSet, check: @escaping @Sendable (StoreView) throws -> T
    ) -> StoreCall<T> {
        recording(operation) { view in (changes, try check(view)) }
    }

    /// Records the changes `prepare` returns where they belong, for the operation of `work`
    /// (see ``recording(_:preparing:skipping:)``).
    func recording<T: Sendable>(_ work: (operation: String, prepare: @Sendable (StoreView) throws -> (ChangeSet, T))) -> StoreCall<T> {
        recording(work.operation, preparing: work.prepare)
    }

    /// Records the changes `prepare` returns where they belong (see
    /// ``recording(_:_:check:)``): `prepare` runs on the store as this call sees it, and decides
    /// which changes to record, or throws to refuse them all.
    func recording<T: Sendable>(
        _ operation: String, preparing prepare: @escaping @Sendable (StoreView) throws -> (ChangeSet, T)
    ) -> StoreCall<T> {
        recording(operation, preparing: prepare, skipping: nil) { $0 }
    }

    /// Records the changes `prepare` returns where they belong (see
    /// ``recording(_:preparing:)``), skipping the transaction `closed` (it ended); returns
    /// what `finish` makes of `prepare`'s result, on the calling thread.
    func recording<T: Sendable, Result>(
        _ operation: String, preparing prepare: @escaping @Sendable (StoreView) throws -> (ChangeSet, T),
        skipping closed: TransactionBuffer?, finish: @escaping (T) throws -> Result
    ) -> StoreCall<Result> {
        let route = writeRoute(skipping: closed)
        let (work, release) = route.work(operation, prepare, in: self)
        return StoreCall(work) { changes, result in
            // The check read the pending changes: let go of them before adding to them, so that
            // they are added to in place, not copied (a transaction of n calls cost n²).
            release()
            if route.keep(changes, in: self.store) { return .done(try finish(result)) }
            // The transaction ended meanwhile: record where the changes now belong.
            return self.recording(operation, preparing: prepare, skipping: route.transaction, finish: finish)
        }
    }

    /// Reads through the store as this call sees it (see ``Store/reading(_:pending:snapshot:_:)``).
    func reading<T>(
        _ operation: @autoclosure @escaping @Sendable () -> String, snapshot: Bool = true,
        _ body: @escaping @Sendable (StoreView) throws -> T
    ) -> StoreWork<T> {
        store.reading(operation(), pending: pendingChanges(), snapshot: snapshot, body)
    }

    /// The changes this call sees but the store does not have yet: the unsaved changes, then
    /// those of the transactions it runs in. `nil` when there are none.
    func pendingChanges() -> ChangeSet? {
        store.pendingChanges(adding: transactionChanges())
    }

    /// The changes of the transactions this call runs in, outermost first; `nil` outside any.
    func transactionChanges() -> ChangeSet? {
        // The explicit transaction (``beginTransaction()``) is the outermost, for every call.
        // One transaction's changes are returned as they are (shared, not copied): a copy for
        // each call made a transaction of n calls cost n² (a sync server's batch of 500 changes).
        var sources: [ChangeSet] = []
        if let explicit = state.read({ $0.explicitTransaction })?.pending { sources.append(explicit) }
        for scope in GarageScope.scopes(of: self).reversed() {
            if let pending = scope.transaction?.pending { sources.append(pending) }
        }
        guard var changes = sources.first else { return nil }
        for pending in sources.dropFirst() { changes.merge(pending) }
        return changes
    }

    /// Where this call's changes go: the innermost transaction still open (but `closed`), or
    /// the unsaved changes when autosave is off, or the store.
    private func writeRoute(skipping closed: TransactionBuffer?) -> WriteRoute {
        let open = GarageScope.scopes(of: self).lazy.compactMap(\.transaction).first {
            $0 !== closed && $0.pending != nil
        }
        if let open {
            return .transaction(open)
        }
        if let explicit = state.read({ $0.explicitTransaction }), explicit !== closed, explicit.pending != nil {
            return .transaction(explicit)
        }
        return isAutosaveEnabled ? .store : .unsaved
    }
}

/// Where a call's changes go.
private enum WriteRoute {
    /// Into the innermost transaction the call runs in.
    case transaction(TransactionBuffer)
    /// Into the unsaved changes: autosave is off.
    case unsaved
    /// Into the store, with the unsaved changes, in one transaction.
    case store

    var transaction: TransactionBuffer? {
        if case .transaction(let buffer) = self { return buffer }
        return nil
    }

    /// What runs first: `prepare` (the check, which decides the changes), on the store as the
    /// call sees it, and for the store the write itself. Returns the changes with the result,
    /// and what lets go of the pending changes the check read, once it ran.
    func work<T>(
        _ operation: String, _ prepare: @escaping @Sendable (StoreView) throws -> (ChangeSet, T), in garage: Garage
    ) -> (StoreWork<(ChangeSet, T)>, release: () -> Void) {
        switch self {
        case .store:
            let work = garage.store.saving(operation) { view in
                let (changes, result) = try prepare(view)
                return (changes, (changes, result))
            }
            return (work, {})
        case .transaction, .unsaved:
            let pending = Protected(garage.pendingChanges())
            return (garage.store.reading(operation, pending: pending, snapshot: true, prepare), { pending.write { $0 = nil } })
        }
    }

    /// Keeps `changes` where they go once the check passed; `false` when the transaction
    /// ended meanwhile (a task started inside it may outlive it).
    func keep(_ changes: ChangeSet, in store: Store) -> Bool {
        switch self {
        case .transaction(let buffer): return buffer.record(changes)
        case .unsaved: store.recordUnsaved(changes); return true
        case .store: return true
        }
    }
}
