import Foundation
import GarageLiteCore

// Claims: how a sync job takes a batch of rows, then completes or releases it, without
// marking an edit made meanwhile as synced, and without two jobs taking one row.
//
// A claimed row records the claim's identifier and date. The job keeps the claim, with the
// revision of each row at claim time: completing compares revisions, so a row parked again
// during the upload goes back to `.notSynced`. Claims work on the committed store: they
// neither see nor save a garage's unsaved changes.
extension Store {
    /// Claims up to `limit` rows of `type` with `status`, oldest change first, decoding each
    /// with the decoder `decoding` makes for the claim's view, in one transaction.
    ///
    /// A row that can't be read or decoded (`isRowFailure`) is not claimed: it is listed in
    /// the claim's failures, stays as it is, and the batch is filled with the next rows.
    func claiming<T>(
        _ type: String, limit: Int, status: SyncStatus, maximumAttempts: Int,
        decoding: @escaping @Sendable (StoreView) -> (StoredRow) throws -> T,
        decodingBases: (@Sendable (StoreView) -> (StoredRow) throws -> T)? = nil,
        isRowFailure: @escaping @Sendable (any Error) -> Bool
    ) -> StoreWork<Claim<T>> {
        StoreWork(operation: "claim \(type)", access: .write { [listener] statements in
            let claimID = ClaimOwner.current.claimText()
            let date = Date()
            let limit = max(0, limit)
            let claim = try Store.transaction(statements, .claim) {
                let decode = decoding(StoreView(statements, pending: nil))
                let decodeBase = decodingBases?(StoreView(statements, pending: nil))
                var objects: [T] = []
                var bases: [T?] = []
                var claimed: [StoredRow] = []
                var deleted: [StoredRow] = []
                var failures: [RetrievalFailure] = []
                var deletedVersions: [DeletedVersion<T>] = []
                // The rows that don't decode, as they were: claimRows marked them.
                var givenBack: [StoredRow] = []
                while claimed.count + deleted.count < limit {
                    // The rows taken are marked as they are read, so the next read skips them; the
                    // unreadable ones, left as they are, are left out.
                    let reads = try statements.claimRows(
                        ofType: type, status: status, limit: limit - claimed.count - deleted.count,
                        excluding: Set(failures.map { ObjectKey(typeName: type, identifier: $0.identifier) }),
                        claim: claimID, now: date, maximumAttempts: maximumAttempts)
                    if reads.isEmpty { break }
                    for read in reads {
                        var taken: StoredRow?
                        do {
                            var row = try read.get()
                            taken = row
                            if row.isDeleted {
                                deleted.append(row)
                                // The version deleted, when the tombstone kept it and it decodes.
                                let object = row.data.isEmpty ? nil : try? decode(row.deletedVersion)
                                deletedVersions.append(DeletedVersion(identifier: row.key.identifier,
                                                                      revision: row.revision - 1, object: object))
                            } else {
                                row.syncStatus = .syncing
                                objects.append(try decode(row))
                                claimed.append(row)
                                if let decodeBase {
                                    // The version before the edit uploaded; none for an object
                                    // no answer of the server's reached (its base is what an
                                    // earlier send of it gave it).
                                    bases.append(row.serverVersion == nil ? nil : row.base.flatMap { base in
                                        var before = row
                                        before.data = base
                                        return try? decodeBase(before)
                                    })
                                }
                            }
                        } catch where isRowFailure(error) {
                            failures.append(RetrievalFailure(typeName: type, identifier: read.key.identifier, error: error))
                            if let taken { givenBack.append(taken) }
                        }
                    }
                }
                // A row that doesn't decode stays as it was, unclaimed.
                if !givenBack.isEmpty { try statements.restoreClaimed(givenBack, claim: claimID) }
                let claimedRows = claimed.map { RowRules.claimed($0, claim: claimID, at: date) }
                return Claim(id: claimID, typeName: type, date: date, objects: objects,
                             identifiers: claimed.map(\.key.identifier), revisions: claimed.map(\.revision),
                             uploaded: zip(claimed, claimedRows).map {
                                 Uploaded(data: $0.data, isEncrypted: $0.isEncrypted, base: $1.base,
                                          sentAsNew: $0.serverVersion == nil && $1.base != nil)
                             },
                             claimedRows: claimedRows.allSatisfy { $0.rowVersion != nil } ? claimedRows : [],
                             serverVersions: claimed.map(\.serverVersion),
                             deletions: deleted.map(\.key.identifier), deletionRevisions: deleted.map(\.revision),
                             deletionVersions: deleted.map(\.serverVersion),
                             deletedVersions: deletedVersions, failures: failures, bases: bases)
            }
            if listener.isListening { listener.committed(.statusChanges(claim.keys.map { ($0, .syncing) })) }
            return claim
        })
    }

    /// How a claim ends for one of its rows.
    enum ClaimEnd: Sendable {
        /// Uploaded: `.synced`, or `.notSynced` when its content changed meanwhile; `version`,
        /// the server's for the upload, becomes the row's (``StoredRow/serverVersion``).
        case completed(version: String? = nil)
        /// Given back: `.notSynced` again (unless the app set another status meanwhile).
        case released
        /// Given back after a failed upload: one more failed attempt, with `error`, and held
        /// back from claims until `retryAt`.
        case failed(error: String?, retryAt: Date)
        /// Not taken: the server holds another version (a conflict, merged next). Counts as
        /// ``failed(error:retryAt:)``; a new object's first upload also gives back the base its
        /// claim gave it, since the server never had it (``RowRules``, "Bases").
        case conflicted(retryAt: Date)
    }

    /// Ends a claim, each row as `end` says. A tombstone completed is purged: the server has
    /// the deletion.
    ///
    /// When the engine gave the claimed rows their versions (``ClaimTicket/claimedRows``), the rules end
    /// the rows as the claim left them, and the engine stores them unread if nothing wrote them
    /// since (``RowWriteStatements/endClaimsIfUnchanged(_:)``: on PostgreSQL one round trip, not
    /// two). The rows something did write, and every row otherwise, are read and ended in one
    /// transaction.
    func endingClaim(_ ticket: ClaimTicket, _ operation: String,
                     end: @escaping @Sendable (_ identifier: String) -> ClaimEnd) -> StoreWork<ClaimReport> {
        StoreWork(operation: "\(operation) a claim of \(ticket.typeName)", access: .write({ [listener] statements in
            let isObserved = listener.isListening
            var report = ClaimReport()
            var changed: [(ObjectKey, SyncStatus)] = []
            var ended: Set<ObjectKey> = []
            if !ticket.claimedRows.isEmpty, ticket.claimedRows.count == ticket.identifiers.count {
                let ends = ticket.claimedRows.map { Self.rowEnd($0, end($0.key.identifier), claimedRevision: $0.revision) }
                ended = try statements.endClaimsIfUnchanged(zip(ticket.claimedRows, ends).enumerated().map { index, end in
                    RowRules.endingClaim(end.0, status: end.1.status, completed: end.1.completed, failure: end.1.failure,
                                         version: end.1.version, forgettingBase: ticket.baseToForget(end.1, at: index))
                })
                for (row, rowEnd) in zip(ticket.claimedRows, ends) where ended.contains(row.key) {
                    report.record(row.key.identifier, rowEnd)
                    if isObserved, let status = rowEnd.status, status != row.syncStatus { changed.append((row.key, status)) }
                }
            }
            if ended.count < ticket.identifiers.count {
                // Shutting out the store's writers (a claim's end that took only its rows' locks,
                // on PostgreSQL, deadlocked with writes of the same rows: issue 27's stress
                // test), not the ends of other claims, whose rows are others.
                let (readReport, readChanges) = try Store.transaction(statements, .claimEnd) {
                    try Self.endingReadRows(ticket, statements, skipping: ended, end: end)
                }
                report.merge(readReport)
                changed += readChanges
            }
            if isObserved { listener.committed(.statusChanges(changed)) }
            return report
        }), isCancellable: false)
    }

    /// What ending its claim as `how` says does to `row`, a row under the claim that had
    /// `claimedRevision` when claimed: the status it ends with (`nil`: the app's, kept),
    /// whether the upload completed, the failure it counts, the server's version it records.
    private static func rowEnd(_ row: StoredRow, _ how: ClaimEnd, claimedRevision: Int64) -> RowEnd {
        switch how {
        case .completed(let version):
            return RowEnd(status: row.revision == claimedRevision ? .synced : .notSynced, completed: true, version: version)
        case .released:
            return RowEnd(status: row.syncStatus == .syncing ? .notSynced : nil)
        case .failed(let error, let retryAt):
            return RowEnd(status: row.syncStatus == .syncing ? .notSynced : nil, failure: (error, retryAt))
        case .conflicted(let retryAt):
            return RowEnd(status: row.syncStatus == .syncing ? .notSynced : nil,
                          failure: ("conflict with the server's version", retryAt), notTaken: true)
        }
    }

    /// See ``rowEnd(_:_:claimedRevision:)``.
    struct RowEnd {
        var status: SyncStatus?
        var completed = false
        var failure: (error: String?, retryAt: Date)?
        var version: String?
        /// The server did not take the upload: it holds another version.
        var notTaken = false
    }

    /// Ends the claim of `ticket`'s rows but those of `skipping`, each read (and, on
    /// PostgreSQL, locked) first, in the caller's transaction.
    private static func endingReadRows(_ ticket: ClaimTicket, _ statements: any RowWriteStatements, skipping: Set<ObjectKey>,
                                       end: (_ identifier: String) -> ClaimEnd) throws -> (ClaimReport, [(ObjectKey, SyncStatus)]) {
        var report = ClaimReport()
        var changed: [(ObjectKey, SyncStatus)] = []
        // The ends alike (no failure, upload's data or server version), written together after
        // the reads: one statement a kind of end rather than one a row.
        var alike: [(status: SyncStatus?, completed: Bool, keys: [ObjectKey])] = []
        func endAlike(_ key: ObjectKey, _ status: SyncStatus?, _ completed: Bool) {
            if let index = alike.firstIndex(where: { $0.status == status && $0.completed == completed }) {
                alike[index].keys.append(key)
            } else {
                alike.append((status, completed, [key]))
            }
        }
        let keys = ticket.identifiers.map { ObjectKey(typeName: ticket.typeName, identifier: $0) }
        try statements.prepareToWrite(keys.filter { !skipping.contains($0) })
        for (index, (key, revision)) in zip(keys, ticket.revisions).enumerated() where !skipping.contains(key) {
            guard let row = try statements.rowOrTombstone(key, for: .metadata) else {
                report.deleted.append(key.identifier)
                continue
            }
            guard row.claim == ticket.id else {
                report.lost.append(key.identifier)
                continue
            }
            let rowEnd = rowEnd(row, end(key.identifier), claimedRevision: revision)
            // A completed upload of a row changed meanwhile: what was uploaded is what the
            // server has, the base of the change (in the row's encryption only).
            var uploaded: String?
            if rowEnd.completed, rowEnd.status == .notSynced, index < ticket.uploaded.count, !row.isDeleted,
               ticket.uploaded[index].isEncrypted == row.isEncrypted,
               try statements.rowOrTombstone(key, for: .all)?.base == ticket.uploaded[index].base {
                uploaded = ticket.uploaded[index].data
            }
            if row.isDeleted, rowEnd.status == .synced {
                // The server has the deletion. While a referrer names the object, its tombstone
                // stays, `.synced` (as a deletion downloaded from the server does), so that the
                // referrer reads without it.
                if try statements.isReferenced(key) {
                    endAlike(key, .synced, true)
                } else {
                    try statements.purge(key)
                }
                report.deletionsUploaded.append(key.identifier)
                continue
            }
            if rowEnd.failure == nil, uploaded == nil, rowEnd.version == nil {
                endAlike(key, rowEnd.status, rowEnd.completed)
            } else {
                try statements.endClaim(key, status: rowEnd.status, completed: rowEnd.completed, failure: rowEnd.failure,
                                        uploaded: uploaded, version: rowEnd.version,
                                        forgettingBase: row.isDeleted ? nil : ticket.baseToForget(rowEnd, at: index))
            }
            report.record(key.identifier, rowEnd)
            if let status = rowEnd.status, status != row.syncStatus { changed.append((key, status)) }
        }
        for group in alike { try statements.endClaims(group.keys, status: group.status, completed: group.completed) }
        return (report, changed)
    }

    /// Renews the claim `ticket` names: its rows still under it are claimed at `date`, so that
    /// ``releasingClaims(takenBefore:)`` doesn't take them from a job that still works.
    func renewingClaim(_ ticket: ClaimTicket, at date: Date) -> StoreWork<[ObjectKey]> {
        let keys = ticket.identifiers.map { ObjectKey(typeName: ticket.typeName, identifier: $0) }
        return changingRows(keys, "renew a claim of \(ticket.typeName)") { row in
            guard row.claim == ticket.id else { return false }
            row.claimedAt = date
            return true
        }
    }

    /// Records each `versions` value as the server's version of its live row with a local edit
    /// (``StoredRow/serverVersion``): the server deleted the object, and the edit, which wins,
    /// is uploaded next as based on that deletion. Returns the rows it recorded a version for.
    func recordingServerVersions(_ versions: [ObjectKey: String?]) -> StoreWork<[ObjectKey]> {
        changingRows(versions.keys.sorted { ($0.typeName, $0.identifier) < ($1.typeName, $1.identifier) },
                     "record the server's versions") { row in
            guard !row.isDeleted, row.syncStatus == .notSynced, let version = versions[row.key] else { return false }
            row.serverVersion = version
            return true
        }
    }

    /// Changes the rows of `keys` that `change` changes (it returns whether it did), in one
    /// transaction, whatever the cancellation; returns their keys.
    private func changingRows(_ keys: [ObjectKey], _ operation: String,
                              _ change: @escaping @Sendable (inout StoredRow) -> Bool) -> StoreWork<[ObjectKey]> {
        StoreWork(operation: operation, access: .write { statements in
            try Store.transaction(statements) {
                try statements.prepareToWrite(keys)
                return try keys.compactMap { key in
                    guard var row = try statements.record(key)?.get(), change(&row) else { return nil }
                    try statements.putRow(row)
                    return key
                }
            }
        }, isCancellable: false)
    }

    /// The rows of `type` held back from claims after `maximumAttempts` failed uploads.
    func listingHeld(_ type: String, maximumAttempts: Int) -> StoreWork<[HeldObject]> {
        StoreWork(operation: "list the held objects of \(type)", access: .read { statements in
            try statements.snapshot {
                try statements.heldRows(ofType: type, maximumAttempts: maximumAttempts).map {
                    HeldObject(identifier: $0.identifier, attempts: $0.attempts, lastError: $0.lastError)
                }
            }
        })
    }

    /// Forgets the failed attempts of the rows of `type` (those `identifiers` name, or all).
    func retryingHeld(_ type: String, identifiers: [String]?) -> StoreWork<Int> {
        StoreWork(operation: "retry the held objects of \(type)", access: .write { statements in
            try Store.transaction(statements) { try statements.forgetAttempts(ofType: type, identifiers: identifiers) }
        })
    }

    /// Ends every claim taken before `cutoff`, as if its job had released it; returns how
    /// many rows were released.
    func releasingClaims(takenBefore cutoff: Date) -> StoreWork<Int> {
        StoreWork(operation: "release stale claims", access: .write { [listener] statements in
            let released = try Store.transaction(statements) { try statements.releaseClaims(takenBefore: cutoff) }
            if listener.isListening { listener.committed(.statusChanges(released.map { ($0, .notSynced) })) }
            return released.count
        })
    }
}

extension Store {
    /// Releases the claims of processes of this host that ended (``ClaimOwner/hasEnded``):
    /// their rows go back to `.notSynced` at once, for the next claim. Reads first, and writes
    /// only when there is such a claim, so that a garage that opens while another process
    /// writes doesn't wait for it. Returns how many rows it released.
    func releasingClaimsOfEndedProcesses() -> StoreCall<Int> {
        let reading = StoreWork<[(key: ObjectKey, claim: String)]>(operation: "list the open claims", access: .read { statements in
            var ended: [String: Bool] = [:]
            return try statements.claimedRows().filter { _, claim in
                if let known = ended[claim] { return known }
                let hasEnded = ClaimOwner(claimText: claim)?.hasEnded ?? false
                ended[claim] = hasEnded
                return hasEnded
            }
        })
        return StoreCall(reading) { [self] claimed in
            guard !claimed.isEmpty else { return .done(0) }
            return StoreCall(StoreWork(operation: "release the claims of ended processes", access: .write { [listener] statements in
                let released = try Store.transaction(statements) {
                    try claimed.compactMap { key, claim -> ObjectKey? in
                        // Still that claim's: not completed, nor taken again, meanwhile.
                        guard let row = try statements.rowOrTombstone(key, for: .metadata), row.claim == claim else { return nil }
                        try statements.endClaim(key, status: row.syncStatus == .syncing ? .notSynced : nil, completed: false, failure: nil,
                                                uploaded: nil, version: nil, forgettingBase: nil)
                        return key
                    }
                }
                if listener.isListening { listener.committed(.statusChanges(released.map { ($0, .notSynced) })) }
                return released.count
            }))
        }
    }
}

extension ChangeSet {
    /// The changes of status a sync job made, as observers are told of them.
    static func statusChanges(_ changes: [(ObjectKey, SyncStatus)]) -> ChangeSet {
        var set = ChangeSet()
        for (key, status) in changes { set.record(.setSyncStatus(status), for: key) }
        return set
    }
}

extension ClaimTicket {
    /// The base a claim's end as `end` takes back from the object at `index`: the one a claim
    /// gave it when it was sent as new (no server version: no answer of the server's ever
    /// reached this store), once the server answers that it holds another version
    /// (``Store/ClaimEnd/conflicted(retryAt:)``). Whether the server ever had this device's
    /// version (an earlier send whose answer was lost) or another device created the object
    /// can't be told: without a base, the merge names every property the two differ on, rather
    /// than take the server's version whole.
    func baseToForget(_ end: Store.RowEnd, at index: Int) -> String? {
        guard end.notTaken, index < uploaded.count, uploaded[index].sentAsNew else { return nil }
        return uploaded[index].base
    }
}
