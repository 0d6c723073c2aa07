import Foundation

// The reads of ``RowStatements`` built on its primitives (``RowStatements/record(_:)``,
// ``RowStatements/records(ofType:after:limit:)``, ``RowStatements/metadata(_:)``): the default
// implementations of the fast paths, so that an engine that reads rows by key and in key order
// answers every report right. They read every row they need, a page at a time; an engine with a
// faster path (an index, a query) implements the requirement itself, and `RowRulesTests` and
// `EngineReportTests` hold it to these, through the reference engine of the tests, which
// implements the primitives only.
extension RowStatements {
    /// How many rows a default reads at a time.
    private var page: Int { 500 }

    /// Calls `body` with each row of `type` (of every type when `nil`) after the row `key` (`nil`:
    /// from the first), tombstones too, with every column, in key order, a page at a time, until
    /// it returns `false`.
    package func forEachRecord(ofType type: String?, after key: ObjectKey? = nil, _ body: (RowRead) throws -> Bool) throws {
        var after = key
        while true {
            let records = try records(ofType: type, after: after, limit: page)
            for record in records where try !body(record) { return }
            guard records.count == page, let last = records.last else { return }
            after = last.key
        }
    }

    /// Calls `body` with each row of `type` (of every type when `nil`), with every column, in key
    /// order, tombstones too or not; an unreadable row throws its error.
    package func forEachRow(ofType type: String?, tombstones: Bool, _ body: (StoredRow) throws -> Void) throws {
        try forEachRecord(ofType: type) { record in
            let row = try record.get()
            if tombstones || !row.isDeleted { try body(row) }
            return true
        }
    }

    /// Every row of `type` (of every type when `nil`), tombstones too, with every column, in key
    /// order; an unreadable row throws its error.
    package func everyRow(ofType type: String?) throws -> [StoredRow] {
        var rows: [StoredRow] = []
        try forEachRow(ofType: type, tombstones: true) { rows.append($0) }
        return rows
    }

    /// Every live row of `type` (of every type when `nil`), in key order; an unreadable row
    /// throws its error.
    package func liveRows(ofType type: String?) throws -> [StoredRow] {
        var rows: [StoredRow] = []
        try forEachRow(ofType: type, tombstones: false) { rows.append($0) }
        return rows
    }

    // MARK: - Rows

    package func rowOrTombstone(_ key: ObjectKey, for purpose: RowPurpose) throws -> StoredRow? {
        try record(key)?.get()
    }

    package func row(_ key: ObjectKey, for purpose: RowPurpose) throws -> StoredRow? {
        guard let row = try rowOrTombstone(key, for: purpose), !row.isDeleted else { return nil }
        return row
    }

    package func rows(ofType type: String, for purpose: RowPurpose) throws -> [RowRead] {
        var rows: [RowRead] = []
        try forEachRow(ofType: type, for: purpose) { rows.append($0) }
        return rows
    }

    /// A page at a time (``rows(ofType:after:limit:for:)``): no read is open while `body` runs.
    package func forEachRow(ofType type: String, for purpose: RowPurpose, _ body: (RowRead) throws -> Void) throws {
        var after: String?
        while true {
            let rows = try rows(ofType: type, after: after, limit: page, for: purpose)
            for row in rows { try body(row) }
            guard rows.count == page, let last = rows.last else { return }
            after = last.key.identifier
        }
    }

    /// The records after `identifier`, tombstones skipped; an unreadable record is returned, as
    /// whether it is a tombstone can't be told.
    package func rows(ofType type: String, after identifier: String?, limit: Int, for purpose: RowPurpose) throws -> [RowRead] {
        var rows: [RowRead] = []
        var after = identifier.map { ObjectKey(typeName: type, identifier: $0) }
        while rows.count < limit {
            let records = try records(ofType: type, after: after, limit: limit)
            for record in records where rows.count < limit {
                if case .row(let row) = record, row.isDeleted { continue }
                rows.append(record)
            }
            guard records.count == limit, let last = records.last else { break }
            after = last.key
        }
        return rows
    }

    /// Oldest modification first; rows modified at the same instant in identifier order.
    package func rows(ofType type: String, status: SyncStatus, for purpose: RowPurpose) throws -> [RowRead] {
        try liveRows(ofType: type).filter { $0.syncStatus == status }.sorted(by: RowRules.claimOrder).map { .row($0) }
    }

    /// By ``RowRules/isClaimable(_:status:now:maximumAttempts:)``, in ``RowRules/claimOrder(_:_:)``.
    package func claimableRows(ofType type: String, status: SyncStatus, limit: Int, excluding: Set<ObjectKey>,
                               now: Date, maximumAttempts: Int) throws -> [RowRead] {
        try claimableRowsByRule(ofType: type, status: status, limit: limit, excluding: excluding, now: now,
                                maximumAttempts: maximumAttempts).map { .row($0) }
    }

    /// ``claimableRows(ofType:status:limit:excluding:now:maximumAttempts:)`` by
    /// ``RowRules/isClaimable(_:status:now:maximumAttempts:)``, in ``RowRules/claimOrder(_:_:)``.
    package func claimableRowsByRule(ofType type: String, status: SyncStatus, limit: Int, excluding: Set<ObjectKey>,
                                     now: Date, maximumAttempts: Int) throws -> [StoredRow] {
        let claimable = try everyRow(ofType: type)
            .filter { !excluding.contains($0.key) && RowRules.isClaimable($0, status: status, now: now, maximumAttempts: maximumAttempts) }
            .sorted(by: RowRules.claimOrder)
        return Array(claimable.prefix(limit))
    }

    package func claimedRows() throws -> [(key: ObjectKey, claim: String)] {
        var claimed: [(key: ObjectKey, claim: String)] = []
        try forEachRow(ofType: nil, tombstones: true) { row in
            if let claim = row.claim, row.claimedAt != nil { claimed.append((row.key, claim)) }
        }
        return claimed
    }

    /// Tombstones too: a deletion that failed to upload is held as an edit is.
    package func heldRows(ofType type: String, maximumAttempts: Int) throws -> [(identifier: String, attempts: Int, lastError: String?)] {
        try everyRow(ofType: type).filter { RowRules.isHeld($0, maximumAttempts: maximumAttempts) }
            .sorted(by: RowRules.claimOrder)
            .map { ($0.key.identifier, Int($0.attempts), $0.lastError) }
    }

    // MARK: - Counts and identifiers

    package func count() throws -> Int {
        var count = 0
        try forEachRow(ofType: nil, tombstones: false) { _ in count += 1 }
        return count
    }

    package func count(ofType type: String) throws -> Int {
        try liveRows(ofType: type).count
    }

    package func count(ofType type: String, status: SyncStatus) throws -> Int {
        try liveRows(ofType: type).count { $0.syncStatus == status }
    }

    package func countsPerType(status: SyncStatus) throws -> [String: Int] {
        var counts: [String: Int] = [:]
        try forEachRow(ofType: nil, tombstones: false) { row in
            if row.syncStatus == status { counts[row.key.typeName, default: 0] += 1 }
        }
        return counts
    }

    package func identifiers(ofType type: String) throws -> [String] {
        try liveRows(ofType: type).map(\.key.identifier)
    }

    package func identifiers(ofType type: String, status: SyncStatus) throws -> [String] {
        try rows(ofType: type, status: status, for: .metadata).map { try $0.get().key.identifier }
    }

    /// In key order.
    package func types() throws -> [String] {
        var types: [String] = []
        try forEachRow(ofType: nil, tombstones: false) { row in
            if types.last != row.key.typeName { types.append(row.key.typeName) }
        }
        return types
    }

    package func stamps(ofType type: String, identifiers: [String]?) throws -> [String: RowStamp] {
        let wanted = identifiers.map(Set.init)
        var stamps: [String: RowStamp] = [:]
        for row in try liveRows(ofType: type) where wanted?.contains(row.key.identifier) ?? true {
            stamps[row.key.identifier] = RowStamp(revision: row.revision, modificationDate: row.modificationDate.timeIntervalSince1970,
                                                  syncStatus: Int64(row.syncStatus.rawValue))
        }
        return stamps
    }

    // MARK: - References

    /// Every reference the rows' lists hold, as (referenced, referrer) pairs: the valid pairs of
    /// each list (a damaged list contributes those; ``RowChecks`` reports it), in the referrers'
    /// key order.
    package func everyReference() throws -> [(to: ObjectKey, from: ObjectKey)] {
        var references: [(to: ObjectKey, from: ObjectKey)] = []
        try forEachRow(ofType: nil, tombstones: true) { row in
            guard row.references != ReferenceList.empty else { return }
            for key in RowChecks.validReferences(row.references) { references.append((key, row.key)) }
        }
        return references
    }

    package func isReferenced(_ key: ObjectKey) throws -> Bool {
        try everyReference().contains { $0.to == key && $0.from != key }
    }

    /// Only references to live objects: a reference that dangles already is no referrer of anything.
    package func references(toType type: String, identifier: String?) throws -> [(to: ObjectKey, from: ObjectKey)] {
        let live = Set(try liveRows(ofType: type).map(\.key))
        var seen = Set<[ObjectKey]>()
        return try everyReference()
            .filter { $0.to.typeName == type && (identifier == nil || $0.to.identifier == identifier) && live.contains($0.to) }
            .filter { seen.insert([$0.to, $0.from]).inserted }
            .sorted { ObjectKey.storeOrder($0.to, $1.to) || ($0.to == $1.to && ObjectKey.storeOrder($0.from, $1.from)) }
    }

    // MARK: - Records and statistics

    package func typeStatistics(maximumAttempts: Int) throws -> [TypeStatistics] {
        var statistics: [String: TypeStatistics] = [:]
        try forEachRow(ofType: nil, tombstones: true) { row in
            var entry = statistics[row.key.typeName] ?? TypeStatistics(typeName: row.key.typeName)
            // A tombstone's data is the content it deleted: stored bytes too.
            entry.dataSize += row.data.utf8.count
            if row.isDeleted {
                entry.tombstones += 1
            } else {
                entry.count += 1
                entry.countsByStatus[row.syncStatus, default: 0] += 1
                if row.isEncrypted { entry.encryptedCount += 1 }
            }
            if row.claim != nil { entry.openClaims += 1 }
            if RowRules.isHeld(row, maximumAttempts: maximumAttempts) { entry.heldObjects += 1 }
            if row.syncStatus == .notSynced {
                entry.oldestUnsyncedChange = min(entry.oldestUnsyncedChange ?? row.modificationDate, row.modificationDate)
            }
            statistics[row.key.typeName] = entry
        }
        return statistics.values.sorted { $0.typeName < $1.typeName }
    }

    // MARK: - Encryption

    /// The count in the store fact `encryptions`.
    package func encryptionCount() throws -> Int64 {
        try metadata("encryptions").flatMap { Int64($0) } ?? 0
    }

    package func countRows(encrypted: Bool) throws -> Int {
        var count = 0
        try forEachRow(ofType: nil, tombstones: true) { row in
            if row.isEncrypted == encrypted && !row.data.isEmpty { count += 1 }
        }
        return count
    }

    package func rows(encrypted: Bool, after key: ObjectKey?, limit: Int) throws -> [(key: ObjectKey, data: String, base: String?)] {
        var found: [(key: ObjectKey, data: String, base: String?)] = []
        guard limit > 0 else { return found }
        try forEachRecord(ofType: nil, after: key) { record in
            if case .row(let row) = record, row.isEncrypted == encrypted, !row.data.isEmpty {
                found.append((row.key, row.data, row.base))
            }
            return found.count < limit
        }
        return found
    }
}

extension ObjectKey {
    /// Whether `first` comes before `second` in the store's key order: type name, then
    /// identifier, each by its UTF-8 bytes (SQLite's `BINARY`, PostgreSQL's `COLLATE "C"`).
    package static func storeOrder(_ first: ObjectKey, _ second: ObjectKey) -> Bool {
        if first.typeName != second.typeName { return first.typeName.utf8.lexicographicallyPrecedes(second.typeName.utf8) }
        return first.identifier.utf8.lexicographicallyPrecedes(second.identifier.utf8)
    }
}
