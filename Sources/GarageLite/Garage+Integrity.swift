import Foundation
import GRDB

// Checking a store, and collecting the objects nothing leads to any more.
extension Garage {
    // MARK: - Checking

    /// The number of problems ``check(maximumProblems:)`` lists by default, as SQLite's
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
    ///   whose list of references is unusable, which also stops ``collectGarbage(dryRun:)``;
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
    /// print(preview)                                           // "3 objects would be deleted: ..."
    /// let report = try garage.collectGarbage(dryRun: false)    // deletes them
    /// ```
    ///
    /// Parking a parent parks the objects it references; parking it again without one of them,
    /// or deleting the parent, leaves that object behind, as in GarageStorage, and stores grow
    /// forever. An object parked directly (with ``park(_:)`` or ``parkAll(_:)``) is a *root*,
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
    ///   than by ``migrateAll(fromOldClassName:to:)``; ``check(maximumProblems:)`` reports a
    ///   wrong-type reference), the objects of that identifier are kept, as the reference may
    ///   still mean them.
    /// - An object claimed by a sync job is collected like any other; the job's
    ///   ``complete(_:)`` or ``release(_:)`` then lists it in ``ClaimReport/deleted``.
    /// - Observers of ``changes(of:)`` receive `.deleted` for each collected object.
    ///
    /// - throws: ``GarageError/corruptData(typeName:identifier:reason:)`` when a row's list of
    ///   references is unusable (``check(maximumProblems:)`` lists them all): what it leads to
    ///   can't be told, so nothing is deleted. ``GarageError/storeBusy(operation:path:)``.
    @discardableResult
    public func collectGarbage(dryRun: Bool = true) throws -> GarbageReport {
        let transactions = transactionChanges()
        if dryRun {
            let pending = pendingChanges()
            return try store.read("list unreachable objects") { db in
                try Self.collectGarbage(db, heldBy: pending, dryRun: true)
            }
        }
        return try store.write("collect garbage", collectGarbageWork(adding: transactions))
    }

    /// Collects garbage (see ``collectGarbage(dryRun:)``) without blocking the calling thread.
    @discardableResult
    public func collectGarbage(dryRun: Bool = true) async throws -> GarbageReport {
        let transactions = transactionChanges()
        if dryRun {
            let pending = pendingChanges()
            return try await store.read("list unreachable objects") { db in
                try Self.collectGarbage(db, heldBy: pending, dryRun: true)
            }
        }
        return try await store.write("collect garbage", collectGarbageWork(adding: transactions))
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

/// A parked object's type name and identifier: how reports name objects.
public struct ObjectKey: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The type name, `String(describing: T.self)`.
    public var typeName: String
    public var identifier: String

    public init(typeName: String, identifier: String) {
        self.typeName = typeName
        self.identifier = identifier
    }

    /// `Type(identifier)`.
    public var description: String { "\(typeName)(\(identifier))" }

    public static func < (lhs: ObjectKey, rhs: ObjectKey) -> Bool {
        (lhs.typeName, lhs.identifier) < (rhs.typeName, rhs.identifier)
    }
}

/// What ``Garage/check(maximumProblems:)`` found: a list of problems, each naming what is
/// wrong and what to do.
///
/// ```swift
/// let report = try garage.check()
/// for case .danglingReference(let type, let identifier, _, _) in report.problems {
///     repair(type, identifier)
/// }
/// ```
public struct IntegrityReport: Sendable, Equatable, CustomStringConvertible {
    /// One thing wrong with the store.
    public enum Problem: Sendable, Equatable, CustomStringConvertible {
        /// SQLite found the file damaged: a line of its `integrity_check`, or the error a check
        /// of the rows failed with because of the damage.
        case sqlite(String)
        /// The row's data is not valid JSON (it is not encrypted): retrieving the object throws
        /// ``GarageError/corruptData(typeName:identifier:reason:)``.
        case invalidJSON(typeName: String, identifier: String, reason: String)
        /// The row's list of references is not a JSON array of `["Type", "identifier"]` pairs:
        /// its references can't be checked, and ``Garage/collectGarbage(dryRun:)`` refuses to run.
        case invalidReferenceList(typeName: String, identifier: String, reason: String)
        /// The object references `toType(toIdentifier)`, and no object of any type is parked
        /// under that identifier.
        case danglingReference(fromType: String, fromIdentifier: String, toType: String, toIdentifier: String)
        /// The object references `toType(toIdentifier)`, which is not parked, while objects of
        /// `foundTypes` are parked under that identifier: what a type renamed without
        /// ``Garage/migrateAll(fromOldClassName:to:)`` leaves behind. (A parent's JSON holds only
        /// the identifier of what it references; the type is in the row's list of references.)
        case wrongTypeReference(fromType: String, fromIdentifier: String, toType: String, toIdentifier: String,
                                foundTypes: [String])

        var isSQLite: Bool {
            if case .sqlite = self { return true }
            return false
        }

        /// What is wrong, and what to do about it.
        public var description: String {
            switch self {
            case let .sqlite(message):
                return "SQLite reports damage in the store file: \(message). Stop writing to it, and restore "
                    + "it from a backup; without one, copy what can still be read into a new store (for "
                    + "example with the sqlite3 tool's .recover command)."
            case let .invalidJSON(type, identifier, reason):
                return "The data of \(type)(\(identifier)) is not valid JSON (\(reason)): retrieving it throws. "
                    + "Park the object again, or delete it."
            case let .invalidReferenceList(type, identifier, reason):
                return "The list of references of \(type)(\(identifier)) is unusable (\(reason)): its "
                    + "references can't be checked and garbage can't be collected. Park the object again, "
                    + "or delete it."
            case let .danglingReference(fromType, fromIdentifier, toType, toIdentifier):
                return "\(fromType)(\(fromIdentifier)) references \(toType)(\(toIdentifier)), which is not "
                    + "parked: retrieving \(fromType)(\(fromIdentifier)) gives nil for an optional reference "
                    + "and throws for a required one. Park \(toType)(\(toIdentifier)) again, or park "
                    + "\(fromType)(\(fromIdentifier)) again without it."
            case let .wrongTypeReference(fromType, fromIdentifier, toType, toIdentifier, foundTypes):
                let found = foundTypes.first ?? "?"
                return "\(fromType)(\(fromIdentifier)) references \(toType)(\(toIdentifier)), which is not "
                    + "parked, but \(toIdentifier) is parked as \(foundTypes.joined(separator: ", ")). If your "
                    + "type is now named \(found), run migrateAll(fromOldClassName: \"\(toType)\", to: "
                    + "\(found).self), which rewrites the references; if it is still \(toType), move the objects "
                    + "back with migrateAll(fromOldClassName: \"\(found)\", to: \(toType).self). Otherwise "
                    + "park \(toType)(\(toIdentifier)) again, or park \(fromType)(\(fromIdentifier)) again "
                    + "without it."
            }
        }
    }

    /// The problems found, in the order of the checks: SQLite's, reference lists, JSON data,
    /// references; within a check, by type name and identifier.
    public var problems: [Problem]
    /// Whether there were more problems than the list holds.
    public var isTruncated: Bool

    /// Whether no problem was found.
    public var isOK: Bool { problems.isEmpty }

    public init(problems: [Problem], isTruncated: Bool = false) {
        self.problems = problems
        self.isTruncated = isTruncated
    }

    init(_ found: (problems: [Problem], isTruncated: Bool)) {
        self.init(problems: found.problems, isTruncated: found.isTruncated)
    }

    /// A summary line, then one line per problem.
    public var description: String {
        if isOK {
            return "The store is sound: SQLite finds the file intact, every unencrypted object is valid "
                + "JSON, and every reference leads to a parked object."
        }
        let count = problems.count == 1 ? "1 problem" : "\(problems.count) problems"
        let header = isTruncated
            ? "The store has more problems than listed; the first \(count):"
            : "The store has \(count):"
        return ([header] + problems.map { "- \($0)" }).joined(separator: "\n")
    }
}

/// What ``Garage/collectGarbage(dryRun:)`` found, or deleted: the objects no longer reachable
/// from any directly parked object.
public struct GarbageReport: Sendable, Equatable, CustomStringConvertible {
    /// Whether this was a dry run, which deleted nothing.
    public var isDryRun: Bool
    /// The unreachable objects, by type name and identifier: deleted, or, in a dry run, those
    /// the real run would delete if nothing changed meanwhile.
    public var objects: [ObjectKey]

    /// How many objects were (or would be) deleted.
    public var count: Int { objects.count }

    public init(isDryRun: Bool, objects: [ObjectKey]) {
        self.isDryRun = isDryRun
        self.objects = objects
    }

    /// How many objects, and which.
    public var description: String {
        if objects.isEmpty {
            return "No unreachable objects: nothing " + (isDryRun ? "to delete." : "was deleted.")
        }
        let count = objects.count == 1 ? "1 unreachable object" : "\(objects.count) unreachable objects"
        // A store that grew for years may hold many: the list is in `objects`.
        var listed = objects.prefix(20).map(\.description).joined(separator: ", ")
        if objects.count > 20 { listed += " and \(objects.count - 20) more" }
        return isDryRun
            ? "Dry run: \(count) would be deleted: \(listed). Run collectGarbage(dryRun: false) to delete them."
            : "Deleted \(count): \(listed)."
    }
}
