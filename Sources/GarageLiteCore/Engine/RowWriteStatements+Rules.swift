import Foundation

// The writes of ``RowWriteStatements`` done by the rules (``RowRules``): read the row, apply the
// rule, store the row. They are the default implementations of those requirements, so that an
// engine that stores and reads rows gets every write right; an engine with a faster path of its
// own (SQLite) is held to these by `RowRulesTests`, which calls both.
extension RowWriteStatements {
    /// The row `key` with every column, a tombstone too.
    private func fullRow(_ key: ObjectKey) throws -> StoredRow? {
        try record(key)?.get()
    }

    /// ``park(_:_:now:)`` by ``RowRules/parked(_:over:key:now:)``.
    package func parkByRule(_ key: ObjectKey, _ payload: RowPayload, now: Date) throws -> Bool {
        let parked = RowRules.parked(payload, over: try fullRow(key), key: key, now: now)
        if parked.changes { try putRow(parked.row) }
        return parked.changes
    }

    /// ``delete(_:now:)`` by ``RowRules/deleted(_:now:)``.
    package func deleteByRule(_ key: ObjectKey, now: Date) throws -> Bool {
        switch RowRules.deleted(try fullRow(key), now: now) {
        case nil: return false
        case .remove?: return try purge(key)
        case .tombstone(let row)?:
            try putRow(row)
            return true
        }
    }

    /// ``markDeletedOnServer(_:now:)`` by ``RowRules/deletedOnServer(_:now:)``.
    package func markDeletedOnServerByRule(_ key: ObjectKey, now: Date) throws -> Bool {
        guard let row = RowRules.deletedOnServer(try fullRow(key), now: now) else { return false }
        try putRow(row)
        return true
    }

    /// ``setSyncStatus(_:of:)`` by ``RowRules/settingStatus(_:of:)``.
    package func setSyncStatusByRule(_ status: SyncStatus, of key: ObjectKey) throws -> Bool {
        guard let row = RowRules.settingStatus(status, of: try fullRow(key)) else { return false }
        try putRow(row)
        return true
    }

    /// ``markClaimed(_:claim:at:)`` by ``RowRules/claimed(_:claim:at:)``.
    package func markClaimedByRule(_ key: ObjectKey, claim: String, at date: Date) throws {
        guard let existing = try fullRow(key) else { return }
        try putRow(RowRules.claimed(existing, claim: claim, at: date))
    }

    /// ``endClaim(_:status:completed:failure:uploaded:version:forgettingBase:)`` by
    /// ``RowRules/endingClaim(_:status:completed:failure:uploaded:version:forgettingBase:)``.
    package func endClaimByRule(_ key: ObjectKey, status: SyncStatus?, completed: Bool, failure: (error: String?, retryAt: Date)?,
                                uploaded: String?, version: String?, forgettingBase: String? = nil) throws {
        guard let existing = try fullRow(key) else { return }
        try putRow(RowRules.endingClaim(existing, status: status, completed: completed, failure: failure, uploaded: uploaded,
                                        version: version, forgettingBase: forgettingBase))
    }

    /// ``purgeSyncedTombstones(ofType:)`` by ``RowRules/isPurgeableTombstone(_:)`` and
    /// ``RowStatements/isReferenced(_:)``, a page of records at a time; an unreadable row stays.
    package func purgeSyncedTombstonesByRule(ofType type: String?) throws -> Int {
        var purged = 0
        var after: ObjectKey?
        while true {
            let page = try records(ofType: type, after: after, limit: 500)
            guard let last = page.last else { return purged }
            for case .row(let row) in page where RowRules.isPurgeableTombstone(row) {
                if try !isReferenced(row.key), try purge(row.key) { purged += 1 }
            }
            after = last.key
        }
    }

    /// ``releaseClaims(takenBefore:)`` by ``RowRules/releasingStaleClaim(_:takenBefore:)``.
    package func releaseClaimsByRule(takenBefore cutoff: Date) throws -> [ObjectKey] {
        try everyRow(ofType: nil).compactMap { row in
            guard let released = RowRules.releasingStaleClaim(row, takenBefore: cutoff) else { return nil }
            try putRow(released)
            return row.key
        }
    }

    /// ``forgetAttempts(ofType:identifiers:)`` by ``RowRules/forgettingAttempts(_:)``.
    package func forgetAttemptsByRule(ofType type: String, identifiers: [String]?) throws -> Int {
        let names = identifiers.map(Set.init)
        return try everyRow(ofType: type).reduce(0) { count, row in
            guard names?.contains(row.key.identifier) ?? true, let forgotten = RowRules.forgettingAttempts(row) else { return count }
            try putRow(forgotten)
            return count + 1
        }
    }

    /// ``deleteAll(ofType:now:)`` for one type, by ``RowRules/deleted(_:now:)``.
    package func deleteAllByRule(ofType type: String, now: Date) throws -> Int {
        try everyRow(ofType: type).reduce(0) { count, row in
            switch RowRules.deleted(row, now: now) {
            case nil: return count
            case .remove?: try purge(row.key)
            case .tombstone(let tombstone)?: try putRow(tombstone)
            }
            return count + 1
        }
    }
}

// The rules as the default writes: an engine that implements none of these gets them right.
extension RowWriteStatements {
    @discardableResult package func park(_ key: ObjectKey, _ payload: RowPayload, now: Date) throws -> Bool {
        try parkByRule(key, payload, now: now)
    }

    package func prepareToWrite(_ keys: [ObjectKey]) throws {}

    package func park(_ rows: [(key: ObjectKey, payload: RowPayload)], now: Date) throws -> [Bool] {
        try rows.map { try park($0.key, $0.payload, now: now) }
    }

    @discardableResult package func delete(_ key: ObjectKey, now: Date) throws -> Bool {
        try deleteByRule(key, now: now)
    }

    @discardableResult package func markDeletedOnServer(_ key: ObjectKey, now: Date) throws -> Bool {
        try markDeletedOnServerByRule(key, now: now)
    }

    @discardableResult package func setSyncStatus(_ status: SyncStatus, of key: ObjectKey) throws -> Bool {
        try setSyncStatusByRule(status, of: key)
    }

    package func markClaimed(_ keys: [ObjectKey], claim: String, at date: Date) throws {
        for key in keys { try markClaimedByRule(key, claim: claim, at: date) }
    }

    package func claimTransaction<T>(_ body: () throws -> T) throws -> T {
        try transaction(body)
    }

    package func claimRows(ofType type: String, status: SyncStatus, limit: Int, excluding: Set<ObjectKey>,
                           claim: String, now: Date, maximumAttempts: Int) throws -> [RowRead] {
        let reads = try claimableRows(ofType: type, status: status, limit: limit, excluding: excluding, now: now,
                                      maximumAttempts: maximumAttempts)
        try markClaimed(reads.compactMap { try? $0.get().key }, claim: claim, at: now)
        return reads
    }

    package func restoreClaimed(_ originals: [StoredRow], claim: String) throws {
        for original in originals where try fullRow(original.key)?.claim == claim { try putRow(original) }
    }

    package func claimEndTransaction<T>(_ body: () throws -> T) throws -> T {
        try transaction(body)
    }

    package func endClaimsIfUnchanged(_ rows: [StoredRow]) throws -> Set<ObjectKey> {
        []
    }

    package func endClaim(_ key: ObjectKey, status: SyncStatus?, completed: Bool, failure: (error: String?, retryAt: Date)?,
                          uploaded: String?, version: String?, forgettingBase: String?) throws {
        try endClaimByRule(key, status: status, completed: completed, failure: failure, uploaded: uploaded, version: version,
                           forgettingBase: forgettingBase)
    }

    package func endClaims(_ keys: [ObjectKey], status: SyncStatus?, completed: Bool) throws {
        for key in keys {
            try endClaim(key, status: status, completed: completed, failure: nil, uploaded: nil, version: nil, forgettingBase: nil)
        }
    }

    package func releaseClaims(takenBefore cutoff: Date) throws -> [ObjectKey] {
        try releaseClaimsByRule(takenBefore: cutoff)
    }

    package func forgetAttempts(ofType type: String, identifiers: [String]?) throws -> Int {
        try forgetAttemptsByRule(ofType: type, identifiers: identifiers)
    }

    @discardableResult package func purgeSyncedTombstones(ofType type: String?) throws -> Int {
        try purgeSyncedTombstonesByRule(ofType: type)
    }

    package func deleteAll(ofType type: String?, now: Date) throws -> Int {
        guard let type else {
            return try everyRow(ofType: nil).reduce(0) { count, row in try purge(row.key) ? count + 1 : count }
        }
        return try deleteAllByRule(ofType: type, now: now)
    }
}
