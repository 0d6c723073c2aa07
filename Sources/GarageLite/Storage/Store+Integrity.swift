import Foundation
import GarageLiteCore

// Checking the store, and collecting the rows nothing leads to any more. Both read the
// store's columns only, never the app's types.
extension Store {
    /// Checks the store from one snapshot of the committed rows: up to `limit` problems.
    ///
    /// After SQLite reported damage, it may refuse to end the read transaction of the check,
    /// which then throws: the report, which lists the damage, is the better answer.
    ///
    /// - parameter open: Decrypts a row (with the garage's delegate), throwing when it can't:
    ///   every row is then opened, and those that fail are reported.
    func checking(limit: Int, open: (@Sendable (StoredRow) throws -> Void)?) -> StoreWork<IntegrityReport> {
        StoreWork(operation: "check the store", access: .read { statements in
            var found: IntegrityReport?
            do {
                return try statements.snapshot {
                    var report = IntegrityReport(try Self.problems(statements, limit: limit))
                    report.checkedItsFile = statements is any ChecksItsFile
                    found = report
                    if let open, !report.isTruncated, !report.problems.contains(where: \.isSQLite) {
                        try Self.checkDecryption(statements, open: open, into: &report, limit: limit)
                    }
                    return report
                }
            } catch {
                guard let found, found.problems.contains(where: \.isSQLite) else { throw error }
                return found
            }
        })
    }

    /// Up to `limit` problems: the storage's own (on an engine that checks it: ``ChecksItsFile``),
    /// then the rows'.
    private static func problems(
        _ statements: any RowStatements, limit: Int
    ) throws -> (problems: [IntegrityReport.Problem], isTruncated: Bool) {
        var problems: [IntegrityReport.Problem] = []
        if let checker = statements as? any ChecksItsFile {
            let file = try checker.fileProblems(limit: limit)
            if file.isTruncated { return file }
            problems = file.problems
        }
        let rows = try statements.integrityProblems(limit: limit - problems.count)
        return (problems + rows.problems, rows.isTruncated)
    }

    /// Adds to `report` the rows `open` can't open, up to `limit` problems in all.
    private static func checkDecryption(_ statements: any RowStatements, open: (StoredRow) throws -> Void,
                                        into report: inout IntegrityReport, limit: Int) throws {
        for type in try statements.types() {
            var after: String?
            while true {
                let rows = try statements.rows(ofType: type, after: after, limit: 1_000, for: .content)
                for read in rows {
                    let problem: IntegrityReport.Problem?
                    switch read {
                    case .unreadable: problem = nil // a column's problem: the JSON check reports rows
                    case .row(let row):
                        do {
                            try open(row)
                            problem = nil
                        } catch let error as GarageError {
                            problem = .unreadableEncryptedRow(typeName: row.key.typeName, identifier: row.key.identifier,
                                                              reason: error.description)
                        }
                    }
                    if let problem {
                        guard report.problems.count < limit else {
                            report.isTruncated = true
                            return
                        }
                        report.problems.append(problem)
                    }
                }
                guard rows.count == 1_000, let last = rows.last else { break }
                switch last {
                case .row(let row): after = row.key.identifier
                case .unreadable(let key, _): after = key.identifier
                }
            }
        }
    }

    /// Lists (with `dryRun`) or deletes the rows never parked directly that no chain of
    /// references leads to from a root, keeping those `held` needs: the rows the changes of
    /// this call's transactions (and, taken on the writer, the garage's unsaved changes) park,
    /// delete, change or reference.
    func collectingGarbage(dryRun: Bool, transactions: ChangeSet?) -> StoreWork<[ObjectKey]> {
        if dryRun {
            let pending = pendingChanges(adding: transactions)
            return StoreWork(operation: "list unreachable objects", access: .read { statements in
                try statements.snapshot { try Self.unreachableRows(statements, heldBy: pending) }
            })
        }
        return StoreWork(operation: "collect garbage", access: .write { [self] statements in
            // Taken on the writer, where saves run too: no save can write these changes meanwhile.
            let pending = pendingChanges(adding: transactions)
            let unreachable = try Store.transaction(statements) {
                let unreachable = try Self.unreachableRows(statements, heldBy: pending)
                for key in unreachable { try statements.purge(key) }
                return unreachable
            }
            if !unreachable.isEmpty {
                var deleted = ChangeSet()
                for key in unreachable { deleted.record(.delete, for: key) }
                listener.committed(deleted)
            }
            return unreachable
        })
    }

    private static func unreachableRows(_ statements: any RowStatements, heldBy pending: ChangeSet?) throws -> [ObjectKey] {
        if let (key, reason) = try statements.firstInvalidReferenceList() {
            throw GarageError.corruptData(
                typeName: key.typeName, identifier: key.identifier,
                reason: "its list of references is unusable (\(reason)), so garbage can't be collected "
                    + "until it is repaired")
        }
        return try unreachableRows(statements, extraRoots: try heldRows(pending))
    }

    /// The rows no chain of references leads to from a root or from `extraRoots`, keeping
    /// those a stale reference may mean.
    ///
    /// A reference holds the type name it was parked with. If a row it leads to is now under
    /// another type name (moved without `migrateAll`, which rewrites references), the
    /// reference dangles, yet an app whose type has the new name still retrieves the row
    /// through it. So a row whose identifier a dangling reference of a reachable row names is
    /// kept, with what it leads to: garbage may stay, but nothing retrievable goes. Dangling
    /// references are rare, so this costs one more scan at most.
    private static func unreachableRows(_ statements: any RowStatements, extraRoots: [ObjectKey]) throws -> [ObjectKey] {
        var roots = extraRoots
        var dangling: [(from: ObjectKey, to: ObjectKey)]?
        while true {
            let unreachable = try statements.unreachableRows(extraRoots: roots)
            if unreachable.isEmpty { return unreachable }
            if dangling == nil { dangling = try statements.danglingReferences(limit: nil) }
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
    private static func heldRows(_ pending: ChangeSet?) throws -> [ObjectKey] {
        guard let pending else { return [] }
        var held: Set<ObjectKey> = []
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
            for key in held where key.typeName == to {
                held.insert(ObjectKey(typeName: from, identifier: key.identifier))
            }
        }
        return held.sorted()
    }
}
