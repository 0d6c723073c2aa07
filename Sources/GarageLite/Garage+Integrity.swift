import Foundation
import GRDB

// Checking a store, and collecting the objects nothing leads to any more.
extension Garage {
    // MARK: - Checking

    /// The number of problems ``check(maximumProblems:)-1n0z3`` lists by default, as SQLite's
    /// `integrity_check` does.
    public static let defaultMaximumProblems = 100

    /// Checks the store: SQLite's integrity check of the file, the JSON of every unencrypted
    /// object, and every stored reference. Returns the problems found; throws only when the
    /// check can't run at all.
    ///
    /// ```swift
    /// let report = try garage.check()
    /// if !report.isOK {
    ///     log("\(report)")      // each problem names the object and says what to do
    /// }
    /// ```
    ///
    /// The check needs none of your Swift types: it reads the store's columns, so it finds the
    /// same problems whatever program runs it. It reports:
    ///
    /// - ``IntegrityReport/Problem/sqlite(_:)``: damage SQLite finds in the file (SQLite's
    ///   `integrity_check`), or a failure to read the rows because of it;
    /// - ``IntegrityReport/Problem/invalidReferenceList(typeName:identifier:reason:)``: a row
    ///   whose list of references is unusable, which also stops ``collectGarbage(dryRun:)-6vqrl``;
    /// - ``IntegrityReport/Problem/invalidJSON(typeName:identifier:reason:)``: an unencrypted
    ///   row whose data is not JSON (encrypted rows can't be checked without their key);
    /// - ``IntegrityReport/Problem/danglingReference(fromType:fromIdentifier:toType:toIdentifier:)``:
    ///   a reference to an object that is not parked, typically deleted after its parent was parked;
    /// - ``IntegrityReport/Problem/wrongTypeReference(fromType:fromIdentifier:toType:toIdentifier:foundTypes:)``:
    ///   the same, when the identifier is parked under other types, as after renaming a type
    ///   without ``migrateAll(fromOldClassName:to:)``.
    ///
    /// Everything is read from one snapshot of the committed store: this garage's unsaved
    /// changes are not checked. SQLite's check reads the whole file, so the cost grows with the
    /// store; run it at launch after a crash, in a maintenance task, or before a backup.
    ///
    /// - parameter maximumProblems: The number of problems to list at most (at least 1);
    ///   ``IntegrityReport/isTruncated`` tells whether there were more.
    /// - throws: ``GarageError/storageFailure(operation:reason:)`` when the store can't be read
    ///   at all; ``GarageError/reentrantCall(operation:)``.
    public func check(maximumProblems: Int = Garage.defaultMaximumProblems) throws -> IntegrityReport {
        let limit = max(1, maximumProblems)
        let found = Protected<IntegrityReport?>(nil)
        do {
            return try store.read("check the store") { db in
                let report = IntegrityReport(try Store.integrityProblems(db, limit: limit))
                found.write { $0 = report }
                return report
            }
        } catch {
            return try Self.reportOfDamage(found, or: error)
        }
    }

    /// Checks the store (see ``check(maximumProblems:)``) without blocking the calling thread.
    public func check(maximumProblems: Int = Garage.defaultMaximumProblems) async throws -> IntegrityReport {
        let limit = max(1, maximumProblems)
        let found = Protected<IntegrityReport?>(nil)
        do {
            return try await store.read("check the store") { db in
                let report = IntegrityReport(try Store.integrityProblems(db, limit: limit))
                found.write { $0 = report }
                return report
            }
        } catch {
            return try Self.reportOfDamage(found, or: error)
        }
    }

    /// After SQLite reported damage, it may refuse to end the read transaction of the check,
    /// which then throws: the report, which lists the damage, is the better answer.
    private static func reportOfDamage(_ found: Protected<IntegrityReport?>, or error: any Error) throws -> IntegrityReport {
        guard let report = found.read({ $0 }), report.problems.contains(where: \.isSQLite) else {
            throw error
        }
        return report
    }

    // MARK: - Collecting garbage

    /// Deletes the objects that were only ever parked as references and that no chain of
    /// references from a directly parked object leads to any more. With `dryRun` (the
    /// default), only lists them: run a dry run first, and look at what it lists.
    ///
    /// ```swift
    /// let preview = try garage.collectGarbage()                // deletes nothing
    /// print(preview)                                           // "Dry run: 3 unreachable objects would be deleted: ..."
    /// let report = try garage.collectGarbage(dryRun: false)    // deletes them
    /// ```
    ///
    /// Parking a parent parks the objects it references; parking it again without one of them,
    /// or deleting the parent, leaves that object behind, as in GarageStorage, and stores grow
    /// forever. An object parked directly (with ``park(_:)-7fg4m`` or ``parkAll(_:)-9t5p5``) is a *root*,
    /// and stays one even when it is later parked as a reference too: it is never collected,
    /// nor is anything a root leads to, however long the chain. Unreachable objects that
    /// reference each other in a cycle are collected together.
    ///
    /// - The real run decides and deletes in one immediate transaction: parks from other
    ///   threads, garages or processes wait for it, so none can slip a new reference in between.
    ///   A dry run reads one snapshot and blocks nobody; the real run decides again.
    /// - This garage's unsaved changes (autosave off), and those of the transactions the call
    ///   runs in, are neither saved nor discarded: every object they park, delete or change,
    ///   and every object they reference, counts as a root, so a later save never refers to a
    ///   collected object. The collection itself is not part of a transaction: it commits at
    ///   once. Another garage's unsaved changes can't be seen: when it saves them, it parks
    ///   again every object its parents reference, but a status it set on a collected object is
    ///   lost with the object.
    /// - A reference names the type it was parked with. When the identifier it names is not
    ///   parked under that type but is under another (rows moved to another type name other
    ///   than by ``migrateAll(fromOldClassName:to:)``; ``check(maximumProblems:)-1n0z3`` reports a
    ///   wrong-type reference), the objects of that identifier are kept, as the reference may
    ///   still mean them.
    /// - An object claimed by a sync job is collected like any other; the job's
    ///   ``complete(_:)-26tgn`` or ``release(_:)-2mefx`` then lists it in ``ClaimReport/deleted``.
    /// - Observers of ``changes(of:)`` receive `.deleted` for each collected object.
    ///
    /// - throws: ``GarageError/corruptData(typeName:identifier:reason:)`` when a row's list of
    ///   references is unusable (``check(maximumProblems:)-1n0z3`` lists them all): what it leads to
    ///   can't be told, so nothing is deleted. ``GarageError/storeBusy(operation:path:)``.
    @discardableResult
    public func collectGarbage(dryRun: Bool = true) throws -> GarbageReport {
        if dryRun {
            let pending = pendingChanges()
            return try store.read("list unreachable objects") { db in
                try Self.collectGarbage(db, heldBy: pending, dryRun: true)
            }
        }
        return try store.write("collect garbage", collectGarbageWork(adding: transactionChanges()))
    }

    /// Collects garbage (see ``collectGarbage(dryRun:)``) without blocking the calling thread.
    @discardableResult
    public func collectGarbage(dryRun: Bool = true) async throws -> GarbageReport {
        if dryRun {
            let pending = pendingChanges()
            return try await store.read("list unreachable objects") { db in
                try Self.collectGarbage(db, heldBy: pending, dryRun: true)
            }
        }
        return try await store.write("collect garbage", collectGarbageWork(adding: transactionChanges()))
    }

    /// The changes of the transactions this call runs in, outermost first.
    private func transactionChanges() -> ChangeSet {
        var changes = ChangeSet()
        for scope in GarageScope.scopes(of: self).reversed() {
            if let pending = scope.transaction?.pending { changes.merge(pending) }
        }
        return changes
    }

    private func collectGarbageWork(adding transactions: ChangeSet) -> @Sendable (Database) throws -> GarbageReport {
        { [self] db in
            // Taken on the writer, where saves run too: no save can write these changes meanwhile.
            var pending = state.read { $0.unsaved }
            pending.merge(transactions)
            let report = try Store.inTransaction(db) { db in
                try Self.collectGarbage(db, heldBy: pending, dryRun: false)
            }
            if !report.objects.isEmpty {
                var deleted = ChangeSet()
                for object in report.objects {
                    deleted.record(.delete, for: RowKey(type: object.typeName, identifier: object.identifier))
                }
                observers.publish(deleted)
            }
            return report
        }
    }

    private static func collectGarbage(_ db: Database, heldBy pending: ChangeSet?, dryRun: Bool) throws -> GarbageReport {
        if let (key, reason) = try Store.firstInvalidReferenceList(db) {
            throw GarageError.corruptData(
                typeName: key.type, identifier: key.identifier,
                reason: "its list of references is unusable (\(reason)), so garbage can't be collected "
                    + "until it is repaired")
        }
        let unreachable = try unreachableRows(db, extraRoots: try heldRows(pending))
        if !dryRun {
            for key in unreachable {
                try Store.delete(db, key: key)
            }
        }
        return GarbageReport(isDryRun: dryRun,
                             objects: unreachable.map { ObjectKey(typeName: $0.type, identifier: $0.identifier) })
    }

    /// The rows no chain of references leads to from a root or from `extraRoots`, keeping
    /// those a stale reference may mean.
    ///
    /// A reference holds the type name it was parked with. If a row it leads to is now under
    /// another type name (moved without ``migrateAll(fromOldClassName:to:)``, which rewrites
    /// references), the reference dangles, yet an app whose type has the new name still
    /// retrieves the row through it. So a row whose identifier a dangling reference of a
    /// reachable row names is kept, with what it leads to: garbage may stay, but nothing
    /// retrievable goes. Dangling references are rare, so this costs one more scan at most.
    private static func unreachableRows(_ db: Database, extraRoots: [RowKey]) throws -> [RowKey] {
        var roots = extraRoots
        var dangling: [(from: RowKey, to: RowKey)]?
        while true {
            let unreachable = try Store.unreachableRows(db, extraRoots: roots)
            if unreachable.isEmpty { return unreachable }
            if dangling == nil { dangling = try Store.danglingReferences(db, limit: nil) }
            guard let dangling, !dangling.isEmpty else { return unreachable }
            let unreachableSet = Set(unreachable)
            let byIdentifier = Dictionary(grouping: unreachable, by: \.identifier)
            let kept = Set(dangling.lazy
                .filter { !unreachableSet.contains($0.from) }
                .flatMap { byIdentifier[$0.to.identifier] ?? [] })
            if kept.isEmpty { return unreachable }
            roots.append(contentsOf: kept)
        }
    }

    /// The rows pending changes need: those they park, delete or change, and those they reference.
    private static func heldRows(_ pending: ChangeSet?) throws -> [RowKey] {
        guard let pending else { return [] }
        var held: Set<RowKey> = []
        var renames: [(from: String, to: String)] = []
        for segment in pending.segments {
            if case .renameType(let from, let to)? = segment.bulk {
                renames.append((from, to))
            }
            for (key, change) in segment.rows {
                held.insert(key)
                switch change {
                case .park(let payload), .replace(let payload):
                    held.formUnion(try ReferenceList.decode(payload.references))
                case .delete, .setSyncStatus:
                    break
                }
            }
        }
        // A pending rename moves the rows of `from` to `to`: a held row of `to` may be one of them.
        for (from, to) in renames.reversed() {
            for key in held where key.type == to {
                held.insert(RowKey(type: from, identifier: key.identifier))
            }
        }
        return held.sorted { ($0.type, $0.identifier) < ($1.type, $1.identifier) }
    }
}
