import Foundation
import GRDB

// Autosave, unsaved changes, transactions, and how every change reaches the store.
extension Garage {
    /// Whether the garage holds changes that ``save()-9hqro`` has not written yet.
    public var hasUnsavedChanges: Bool {
        state.read { !$0.unsaved.isEmpty }
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
        try store.write("save", saveWork(adding: ChangeSet()) { _, _ in })
    }

    /// Writes every unsaved change, in one transaction, without blocking the calling thread.
    public func save() async throws {
        try await store.write("save", saveWork(adding: ChangeSet()) { _, _ in })
    }

    /// Forgets every unsaved change.
    public func discardUnsavedChanges() {
        state.write {
            $0.unsaved = ChangeSet()
            $0.epoch += 1
        }
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
        let result: Result
        do {
            result = try GarageScope.$current.withValue(GarageScope(garage: self, transaction: buffer)) {
                try body()
            }
        } catch {
            _ = buffer.close()
            throw error
        }
        try write("commit a transaction", buffer.close()) { _, _ in }
        return result
    }

    // MARK: - Internals

    /// The changes this call can see but the store does not have yet: the unsaved changes,
    /// then the changes of the transactions it runs in. `nil` when there are none.
    func pendingChanges() -> ChangeSet? {
        var pending = state.read { $0.unsaved }
        for scope in GarageScope.scopes(of: self).reversed() {
            if let changes = scope.transaction?.pending {
                pending.merge(changes)
            }
        }
        return pending.isEmpty ? nil : pending
    }

    /// Runs `body` in one read transaction, with the changes this call can see but the store
    /// does not have yet.
    func read<T>(_ operation: @autoclosure () -> String, _ body: (Database, ChangeSet?) throws -> T) throws -> T {
        let pending = pendingChanges()
        return try store.read(operation()) { db in try body(db, pending) }
    }

    /// Runs `body` in one read transaction without blocking the calling thread.
    func read<T: Sendable>(
        _ operation: String, _ body: @escaping @Sendable (Database, ChangeSet?) throws -> T
    ) async throws -> T {
        let pending = pendingChanges()
        return try await store.read(operation) { db in try body(db, pending) }
    }

    /// Where a change goes.
    private enum WriteRoute {
        /// Into the innermost transaction the call runs in.
        case transaction(TransactionBuffer)
        /// Into the unsaved changes: autosave is off.
        case unsaved
        /// Into the store, with the unsaved changes, in one transaction.
        case store
    }

    private func writeRoute(skipping closed: TransactionBuffer? = nil) -> WriteRoute {
        let open = GarageScope.scopes(of: self).lazy.compactMap(\.transaction).first {
            $0 !== closed && $0.pending != nil
        }
        if let open {
            return .transaction(open)
        }
        return isAutosaveEnabled ? .store : .unsaved
    }

    private func recordUnsaved(_ changes: ChangeSet) {
        state.write { $0.unsaved.merge(changes) }
    }

    /// Records `changes` where they belong: in the innermost transaction this call runs in,
    /// in the unsaved changes when autosave is off, or in the store, with the unsaved changes,
    /// in one transaction.
    ///
    /// `check` runs first, on the store as it reads with the pending changes (inside the
    /// write transaction when there is one); it throws to refuse the changes, and its result
    /// is returned.
    func write<T: Sendable>(
        _ operation: String, _ changes: ChangeSet,
        check: @escaping @Sendable (Database, ChangeSet?) throws -> T
    ) throws -> T {
        var route = writeRoute()
        while true {
            switch route {
            case .transaction(let transaction):
                let result = try read(operation) { db, pending in try check(db, pending) }
                if transaction.record(changes) { return result }
                route = writeRoute(skipping: transaction) // it ended meanwhile
            case .unsaved:
                let result = try read(operation) { db, pending in try check(db, pending) }
                recordUnsaved(changes)
                return result
            case .store:
                return try store.write(operation, saveWork(adding: changes, check: check))
            }
        }
    }

    /// Writes the rows `produce` sends while it is still producing them, when this call writes
    /// straight to the store (autosave on, nothing unsaved, outside any transaction): encoding
    /// and writing then overlap, on two threads. Returns `false`, having done nothing, otherwise.
    func writeStreaming(
        _ operation: String, _ produce: (_ send: (RowStream.Batch) throws -> Void) throws -> Void
    ) throws -> Bool {
        guard case .store = writeRoute(), state.read({ $0.unsaved.isEmpty }) else { return false }
        let written = try store.write(operation, streaming: { stream in
            try produce { try stream.send($0) }
        }, observed: observers.hasSubscribers)
        if let written {
            observers.publish(written)
        }
        return true
    }

    /// Records `changes` where they belong (see the synchronous variant), without blocking
    /// the calling thread.
    func write<T: Sendable>(
        _ operation: String, _ changes: ChangeSet,
        check: @escaping @Sendable (Database, ChangeSet?) throws -> T
    ) async throws -> T {
        var route = writeRoute()
        while true {
            switch route {
            case .transaction(let transaction):
                let result = try await read(operation) { db, pending in try check(db, pending) }
                if transaction.record(changes) { return result }
                route = writeRoute(skipping: transaction) // it ended meanwhile
            case .unsaved:
                let result = try await read(operation) { db, pending in try check(db, pending) }
                recordUnsaved(changes)
                return result
            case .store:
                return try await store.write(operation, saveWork(adding: changes, check: check))
            }
        }
    }

    /// The work of writing the unsaved changes and `changes` in one transaction, after `check`.
    ///
    /// It runs on the store's writer, where writes are serialised: taking the unsaved changes,
    /// committing them, then forgetting them happen without another save in between.
    private func saveWork<T>(
        adding changes: ChangeSet, check: @escaping @Sendable (Database, ChangeSet?) throws -> T
    ) -> @Sendable (Database) throws -> T {
        { [self] db in
            // Changes recorded from now on go to new segments, kept when these are saved.
            let (unsaved, epoch) = state.write { state in
                state.unsaved.seal()
                return (state.unsaved, state.epoch)
            }
            var combined = changes
            if !unsaved.isEmpty {
                combined = unsaved
                combined.merge(changes)
            }
            let result = try Store.inTransaction(db) { db in
                let result = try check(db, unsaved.isEmpty ? nil : unsaved)
                try Store.apply(combined, to: db, now: Date())
                return result
            }
            if !unsaved.isEmpty {
                state.write {
                    if $0.epoch == epoch {
                        $0.unsaved = $0.unsaved.removing(saved: unsaved)
                    }
                }
            }
            observers.publish(combined)
            return result
        }
    }

    /// The row `key` as this call sees it.
    static func visibleRow(_ key: RowKey, in db: Database, pending: ChangeSet?) throws -> StoredRow? {
        if let pending {
            return try pending.row(key, in: db, now: Date())
        }
        return try Store.row(db, key)
    }

    /// The rows of `type` as this call sees them, in identifier order.
    static func visibleRows(ofType type: String, in db: Database, pending: ChangeSet?) throws -> [StoredRow] {
        if let pending, pending.touches(type: type) {
            return try pending.rows(ofType: type, in: db, now: Date())
        }
        return try Store.rows(db, type: type)
    }

    /// The number of rows of `type` as this call sees them.
    static func visibleCount(ofType type: String, in db: Database, pending: ChangeSet?) throws -> Int {
        if let pending, pending.touches(type: type) {
            return try pending.rows(ofType: type, in: db, now: Date()).count
        }
        return try Store.count(db, type: type)
    }
}
