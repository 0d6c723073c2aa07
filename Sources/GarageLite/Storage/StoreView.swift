import Foundation
import GarageLiteCore

/// The store as one call sees it: the committed rows, with the changes the call sees but the
/// store does not have yet (unsaved changes, open transactions) applied over them.
///
/// Every read of the garage goes through a view, so the choice between the store's indexed
/// statements and the merged rows of pending changes is made here, once.
struct StoreView {
    let statements: any RowStatements
    /// The changes not in the store yet, or `nil` when there are none.
    let pending: ChangeSet?
    /// The date a pending change would be written at.
    let now = Date()
    /// Whether the view is the write transaction's, where a call's changes are written as
    /// soon as checked; otherwise they are recorded unsaved, or in a transaction.
    let isWriting: Bool

    init(_ statements: any RowStatements, pending: ChangeSet?, isWriting: Bool = false) {
        self.statements = statements
        self.pending = pending
        self.isWriting = isWriting
    }

    /// Runs `body` with every statement reading one snapshot.
    func snapshot<T>(_ body: (StoreView) throws -> T) throws -> T {
        try statements.snapshot { try body(self) }
    }

    /// Whether pending changes touch rows of `type`: then its rows are merged in memory.
    private func isPending(_ type: String) -> Bool {
        pending?.touches(type: type) ?? false
    }

    // MARK: - Rows

    /// The row `key`, or `nil`.
    func row(_ key: ObjectKey, for purpose: RowPurpose = .content) throws -> StoredRow? {
        guard let pending else { return try statements.row(key, for: purpose) }
        return try pending.row(key, in: statements, for: purpose, now: now)
    }

    /// The rows `keys` names, in their order (`nil` for each missing): read at once when no
    /// pending change can hide them (see ``RowStatements/rows(_:for:)``).
    func rows(_ keys: [ObjectKey], for purpose: RowPurpose = .content) throws -> [StoredRow?] {
        guard let pending, !pending.isEmpty else { return try statements.rows(keys, for: purpose) }
        return try keys.map { try pending.row($0, in: statements, for: purpose, now: now) }
    }

    /// The rows of `type`, in identifier order.
    func rows(ofType type: String, for purpose: RowPurpose = .content) throws -> [RowRead] {
        guard let pending, isPending(type) else { return try statements.rows(ofType: type, for: purpose) }
        return try pending.rows(ofType: type, in: statements, for: purpose, now: now)
    }

    /// Calls `body` with each row of `type`, in identifier order, as it is read (see
    /// ``RowStatements/forEachRow(ofType:for:_:)``); with pending changes of the type, from
    /// the merged rows.
    func forEachRow(ofType type: String, for purpose: RowPurpose = .content, _ body: (RowRead) throws -> Void) throws {
        guard let pending, isPending(type) else { return try statements.forEachRow(ofType: type, for: purpose, body) }
        for row in try pending.rows(ofType: type, in: statements, for: purpose, now: now) { try body(row) }
    }

    /// The rows of `type` after the first `offset` (whose last identifier is `identifier`), at
    /// most `limit`, in identifier order: one page of a scan.
    func rows(ofType type: String, after identifier: String?, offset: Int, limit: Int) throws -> [RowRead] {
        guard isPending(type) else {
            return try statements.rows(ofType: type, after: identifier, limit: limit, for: .content)
        }
        // Pending changes live in memory already: page through the merged rows.
        return Array(try rows(ofType: type).dropFirst(offset).prefix(limit))
    }

    /// The rows of `type` with `status`, oldest modification first.
    func rows(ofType type: String, status: SyncStatus, for purpose: RowPurpose = .content) throws -> [RowRead] {
        guard let pending, isPending(type) else {
            return try statements.rows(ofType: type, status: status, for: purpose)
        }
        // Merged rows need their modification dates to be ordered.
        return try pending.rows(ofType: type, in: statements, for: .all, now: now)
            .filter { read in
                guard case .row(let row) = read else { return true }
                return row.syncStatus == status
            }
            .sorted { ($0.modificationDate ?? .distantPast) < ($1.modificationDate ?? .distantPast) }
    }

    // MARK: - Counts and listings

    /// The number of objects of every type.
    func count() throws -> Int {
        guard let pending else { return try statements.count() }
        return try types().reduce(0) { total, type in
            total + (isPending(type) ? try pending.rows(ofType: type, in: statements, for: .content, now: now).count
                                     : try statements.count(ofType: type))
        }
    }

    func count(ofType type: String) throws -> Int {
        guard isPending(type) else { return try statements.count(ofType: type) }
        return try rows(ofType: type).count
    }

    func count(ofType type: String, status: SyncStatus) throws -> Int {
        guard isPending(type) else { return try statements.count(ofType: type, status: status) }
        return try rows(ofType: type, status: status).count
    }

    func identifiers(ofType type: String) throws -> [String] {
        guard isPending(type) else { return try statements.identifiers(ofType: type) }
        return try rows(ofType: type).map(\.key.identifier)
    }

    func identifiers(ofType type: String, status: SyncStatus) throws -> [String] {
        guard isPending(type) else { return try statements.identifiers(ofType: type, status: status) }
        return try rows(ofType: type, status: status).map(\.key.identifier)
    }

    /// The type names of the rows.
    func types() throws -> Set<String> {
        guard let pending else { return Set(try statements.types()) }
        return try pending.types(in: statements)
    }

    /// The number of objects per type name and status, for `statuses`; types and statuses
    /// without objects are left out.
    func statusCounts(_ statuses: Set<SyncStatus>) throws -> [String: [SyncStatus: Int]] {
        var counts: [String: [SyncStatus: Int]] = [:]
        for status in statuses {
            for (type, count) in try statements.countsPerType(status: status) {
                counts[type, default: [:]][status] = count
            }
        }
        guard let pending else { return counts }
        for type in try pending.types(in: statements).union(counts.keys) where isPending(type) {
            var perStatus: [SyncStatus: Int] = [:]
            for read in try rows(ofType: type) {
                let row = try read.get()
                if statuses.contains(row.syncStatus) { perStatus[row.syncStatus, default: 0] += 1 }
            }
            counts[type] = perStatus.isEmpty ? nil : perStatus
        }
        return counts
    }
}

// MARK: - References

extension StoreView {
    /// The references to the objects of `type` (to the one `identifier` names, or to every
    /// one) that other objects hold, as (referenced, referrer) pairs in key order; an object's
    /// references to itself, and references to objects that don't exist, are left out.
    ///
    /// The committed references come from the store's index of references; those of pending
    /// changes from the changed rows' reference lists.
    func references(toType type: String, identifier: String? = nil) throws -> [(to: ObjectKey, from: ObjectKey)] {
        let committed = try statements.references(toType: type, identifier: identifier)
        guard let pending else { return committed.filter { $0.to != $0.from } }
        // A referrer of the store may have changed its references, or gone; the rows the
        // pending changes write may be new referrers. Each candidate's references are read
        // as the call sees them. A pending rename can move any row: then every row is one.
        var candidates = Set(committed.map(\.from))
        var names = [type]
        var renames = false
        for segment in pending.segments {
            candidates.formUnion(segment.rows.keys)
            if case .renameType(let from, let to)? = segment.bulk {
                if names.contains(to) { names.append(from) }
                renames = true
            }
        }
        if renames {
            for type in try types() {
                candidates.formUnion(try rows(ofType: type, for: .metadata).map(\.key))
            }
        }
        var references: [(to: ObjectKey, from: ObjectKey)] = []
        var exists: [ObjectKey: Bool] = [:]
        func isLive(_ key: ObjectKey) throws -> Bool {
            if let known = exists[key] { return known }
            let live = try self.exists(key)
            exists[key] = live
            return live
        }
        for candidate in candidates.sorted() {
            // `.content`: a read for `.metadata` has no references.
            guard let row = try row(candidate, for: .content),
                  let keys = try? ReferenceList.decode(row.references) else { continue }
            var seen = Set<ObjectKey>()
            for key in keys where names.contains(key.typeName) && (identifier == nil || key.identifier == identifier) {
                let to = ObjectKey(typeName: type, identifier: key.identifier)
                if to != candidate, try isLive(to), seen.insert(to).inserted { references.append((to, candidate)) }
            }
        }
        return references.sorted { ($0.to, $0.from) < ($1.to, $1.from) }
    }

    /// The objects that reference `key` (not itself), in key order.
    func referrers(of key: ObjectKey) throws -> [ObjectKey] {
        try references(toType: key.typeName, identifier: key.identifier).map(\.from)
    }
}

extension RowRead {
    fileprivate var modificationDate: Date? {
        if case .row(let row) = self { return row.modificationDate }
        return nil
    }
}

extension StoreView {
    /// Whether the row `key` exists, readable or not: a damaged row can still be deleted.
    func exists(_ key: ObjectKey) throws -> Bool {
        do {
            return try row(key, for: .metadata) != nil
        } catch let error as GarageError {
            guard case .corruptData = error else { throw error }
            return true
        }
    }
}
