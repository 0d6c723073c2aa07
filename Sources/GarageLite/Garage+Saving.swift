import Foundation
import GRDB

// Autosave, unsaved changes, transactions, and how every change reaches the store.
extension Garage {
    /// Whether the garage holds changes that ``save()`` has not written yet.
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
        try save(adding: ChangeSet()) { _, _ in }
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
    /// Changes made inside stay unsaved until ``save()`` (or until a change is made with
    /// autosave on, which saves everything):
    ///
    /// ```swift
    /// try garage.withAutosaveDisabled {
    ///     for person in people { try garage.park(person) }
    /// }
    /// try garage.save()
    /// ```
    ///
    /// Autosave is off for every thread while any `withAutosaveDisabled` runs.
    public func withAutosaveDisabled<Result>(_ body: () throws -> Result) rethrows -> Result {
        state.write { $0.autosaveSuspensions += 1 }
        defer { state.write { $0.autosaveSuspensions -= 1 } }
        return try body()
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
        let changes = Protected(ChangeSet())
        let result = try GarageScope.$current.withValue(GarageScope(garage: self, transaction: changes)) {
            try body()
        }
        try write(changes.read { $0 }) { _, _ in }
        return result
    }

    // MARK: - Internals

    /// The changes this call can see but the store does not have yet: the unsaved changes,
    /// then the changes of the transactions it runs in. `nil` when there are none.
    func pendingChanges() -> ChangeSet? {
        var pending = state.read { $0.unsaved }
        for scope in GarageScope.scopes(of: self).reversed() {
            if let transaction = scope.transaction {
                pending.merge(transaction.read { $0 })
            }
        }
        return pending.isEmpty ? nil : pending
    }

    /// Runs `body` in one read transaction, with the changes this call can see but the store
    /// does not have yet.
    func read<T>(_ operation: String, _ body: (Database, ChangeSet?) throws -> T) throws -> T {
        let pending = pendingChanges()
        return try store.read(operation) { db in try body(db, pending) }
    }

    /// Records `changes` where they belong: in the innermost transaction this call runs in,
    /// in the unsaved changes when autosave is off, or in the store, with the unsaved changes,
    /// in one transaction.
    ///
    /// `check` runs first, on the store as it reads with the pending changes, inside the write
    /// transaction when there is one; it throws to refuse the changes, and its result is returned.
    func write<T>(_ changes: ChangeSet, check: (Database, ChangeSet?) throws -> T) throws -> T {
        let transactions = GarageScope.scopes(of: self).compactMap(\.transaction)
        if let transaction = transactions.first {
            let result = try read("check a change") { db, pending in try check(db, pending) }
            transaction.write { $0.merge(changes) }
            return result
        }
        guard isAutosaveEnabled else {
            let result = try read("check a change") { db, pending in try check(db, pending) }
            state.write {
                $0.generation += 1
                $0.unsaved.merge(changes, generation: $0.generation)
            }
            return result
        }
        return try save(adding: changes, check: check)
    }

    /// Writes the unsaved changes and `changes` in one transaction, after `check`.
    private func save<T>(adding changes: ChangeSet, check: (Database, ChangeSet?) throws -> T) throws -> T {
        saveLock.lock()
        defer { saveLock.unlock() }
        let (unsaved, epoch) = state.read { ($0.unsaved, $0.epoch) }
        var combined = unsaved
        combined.merge(changes)
        let result = try store.write("save") { db in
            let value = try check(db, unsaved.isEmpty ? nil : unsaved)
            try Store.apply(combined, to: db, now: Date())
            return value
        }
        if !unsaved.isEmpty {
            state.write {
                if $0.epoch == epoch {
                    $0.unsaved = $0.unsaved.removing(saved: unsaved)
                }
            }
        }
        return result
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
