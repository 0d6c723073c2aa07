// The work behind the entry points of Garage+Saving.swift (the façade, at the root): the store
// calls they run and their helpers. Nothing here is public; the root files hold the API.
import Foundation
import GarageLiteCore

extension Garage {
    var saving: StoreWork<Void> {
        store.saving("save", ChangeSet()) { _ in }
    }

    /// The scope of a `transaction { }` that records into `buffer`.
    func scope(for buffer: TransactionBuffer) -> GarageScope {
        GarageScope(garage: self, transaction: buffer)
    }

    /// Ends the transaction whose changes `buffer` holds, after its body returned `outcome`:
    /// records the changes where they belong and returns the body's result, or forgets them
    /// and throws the body's error.
    func committing<Result>(_ buffer: TransactionBuffer, after outcome: Swift.Result<Result, any Error>) -> StoreCall<Result> {
        let changes = buffer.close()
        return .starting {
            let result = try outcome.get()
            return recording("commit a transaction", changes) { _ in }.map { result }
        }
    }

    /// Commits the explicit transaction; a failed commit leaves it active again.
    func committingTransaction() -> StoreCall<Void> {
        .starting {
            let changes = try endingTransaction("commit a transaction").close()
            return recording("commit a transaction", changes) { _ in }.catching { error in
                self.reopenTransaction(with: changes)
                throw error
            }
        }
    }

    /// Takes the explicit transaction out of the garage, so that the calls that end it don't
    /// record into it.
    func endingTransaction(_ operation: String) throws -> TransactionBuffer {
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
    func reopenTransaction(with changes: ChangeSet) {
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
        _ operation: @autoclosure @escaping @Sendable () -> String, preparing prepare: @escaping @Sendable (StoreView) throws -> (ChangeSet, T)
    ) -> StoreCall<T> {
        recording(operation(), preparing: prepare, skipping: nil) { $0 }
    }

    /// Records the changes `prepare` returns where they belong (see
    /// ``recording(_:preparing:)``), skipping the transaction `closed` (it ended); returns
    /// what `finish` makes of `prepare`'s result, on the calling thread.
    func recording<T: Sendable, Result>(
        _ operation: @autoclosure @escaping @Sendable () -> String, preparing prepare: @escaping @Sendable (StoreView) throws -> (ChangeSet, T),
        skipping closed: TransactionBuffer?, finish: @escaping (T) throws -> Result
    ) -> StoreCall<Result> {
        let route = writeRoute(skipping: closed)
        let (work, release) = route.work(operation(), prepare, in: self)
        return StoreCall(work) { changes, result in
            // The check read the pending changes: let go of them before adding to them, so that
            // they are added to in place, not copied (a transaction of n calls cost n²).
            release()
            if route.keep(changes, in: self.store) { return .done(try finish(result)) }
            // The transaction ended meanwhile: record where the changes now belong.
            return self.recording(operation(), preparing: prepare, skipping: route.transaction, finish: finish)
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
    func writeRoute(skipping closed: TransactionBuffer?) -> WriteRoute {
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
enum WriteRoute {
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
        _ operation: @autoclosure @escaping @Sendable () -> String, _ prepare: @escaping @Sendable (StoreView) throws -> (ChangeSet, T), in garage: Garage
    ) -> (StoreWork<(ChangeSet, T)>, release: () -> Void) {
        switch self {
        case .store:
            let work = garage.store.saving(operation()) { view in
                let (changes, result) = try prepare(view)
                return (changes, (changes, result))
            }
            return (work, {})
        case .transaction, .unsaved:
            let pending = Protected(garage.pendingChanges())
            return (garage.store.reading(operation(), pending: pending, snapshot: true, prepare), { pending.write { $0 = nil } })
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
