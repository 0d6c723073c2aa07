import Foundation

/// The rules of the object table, written once: what each write makes of a row (statuses,
/// revisions, dates, tombstones, claims, failed attempts and their backoff), and which rows a
/// claim may take.
///
/// Every engine obeys them. An engine that stores and reads rows gets every write from them
/// (the default implementations in ``RowWriteStatements``, `…ByRule`, which read the row, apply
/// the rule and write the row back). An engine may keep a faster path in its own language
/// (SQLite's one-statement upsert, `SQLiteConnection+Rows.swift`): `RowRulesTests` drives random
/// sequences of writes through the rules and through the fast path, and requires the same rows.
/// A change of a rule is made here, and the fast path follows until that test passes.
///
/// ## Bases
///
/// A row with local changes the server has not seen keeps its *base* (``StoredRow/base``): the
/// data of the last version both sides had, for three-way merges. It is written when a
/// `.synced` row stops being so (a park, whether it changes the content or only the status, as
/// a parent parked again for its child's edit does; a deletion; a status the app sets; only
/// when the new data is in the same encryption as the old, so that the base reads like the row), moves to the uploaded data
/// when an upload completes but the row changed meanwhile (the server has the upload: the edit
/// made during it is based on that), is set to the downloaded data by a merge with a download
/// (``RowPayload/base``), and is dropped whenever the row becomes `.synced`, or its data moves to
/// the other encryption (a base must read like its row). A row that was never on the server
/// (``StoredRow/isRemote`` is false: a new object) gets its data as base when a claim takes it:
/// once sent, the server may have that version, whatever happens to the answer (lost, or its
/// job killed), and an edit of the server's after it must not be merged as conflicting with it.
/// When the server answers an upload of an object sent as new (no answer of the server's ever
/// reached the store for it: no server version) with a conflict, the server holds another
/// object under that identifier: another device's creation, or this device's earlier send
/// whose answer was lost, edited since, which can't be told apart. The claim's end forgets the
/// base a claim gave, and the merge runs without one: every property the sides differ on
/// follows the policy, and the report names those it dropped, rather than the server's version
/// taken whole without a word.
/// A row that may be on the server but has no base (kept from before format 6, say) gets none:
/// its pending edit is merged without one, where the policy decides and the report says so.
///
/// ## Server versions
///
/// A row's ``StoredRow/serverVersion`` is the server's version it is based on: a park records
/// its payload's (a download's, or a merge's), a completed claim the version the server gave
/// the upload, a conflict with the server's deletion that deletion's
/// (``Store/recordingServerVersions(_:)``); every other write keeps it.
package enum RowRules {
    // MARK: - Parking

    /// The row once `payload` is parked over `existing` (a tombstone too, which the park brings
    /// back), and whether the park changes it (when it doesn't, it writes nothing).
    ///
    /// - The content changes when the data differs, or when parks folded into the payload
    ///   changed it (``RowPayload/foldedRevisions``): then the revision counts each change, the
    ///   modification date is `now`, and the failed attempts are forgotten (a new edit is a new
    ///   chance), as they are when the row becomes `.synced` (the server has its version).
    /// - The status: see ``status(parking:over:contentChanged:)``.
    /// - A row once parked as a root stays one; once `.synced`, a copy may be on the server
    ///   (``StoredRow/isRemote``), so that deleting it leaves a tombstone.
    package static func parked(
        _ payload: RowPayload, over existing: StoredRow?, key: ObjectKey, now: Date
    ) -> (row: StoredRow, changes: Bool) {
        guard let existing else {
            let status = status(parking: payload, over: nil, contentChanged: true)
            return (StoredRow(
                key: key, data: payload.data, isEncrypted: payload.isEncrypted, syncStatus: status,
                creationDate: now, modificationDate: now, revision: 1 + payload.foldedRevisions,
                isRoot: payload.isRoot, references: payload.references,
                isRemote: (payload.syncStatus ?? .undetermined) == .synced, base: payload.base,
                serverVersion: payload.serverVersion), true)
        }
        let changed = existing.data != payload.data || payload.foldedRevisions > 0
        let status = status(parking: payload, over: existing, contentChanged: changed)
        let base: String?
        if let recorded = payload.base {
            base = recorded
        } else if status == .synced {
            base = nil
        } else if existing.syncStatus == .synced, !existing.isDeleted, existing.isEncrypted == payload.isEncrypted {
            base = existing.data
        } else if existing.isEncrypted != payload.isEncrypted {
            base = nil
        } else {
            base = existing.base
        }
        // The row as this payload's: its data sealed for `key`, at the row's revision.
        var row = existing
        row.sealedFor = nil
        row.provisional = nil
        guard changed || status != existing.syncStatus || existing.isDeleted || (payload.isRoot && !existing.isRoot)
            || existing.references != payload.references || !existing.referencesKnown || base != existing.base
            || (payload.serverVersion != nil && payload.serverVersion != existing.serverVersion) else { return (row, false) }
        row.base = base
        row.serverVersion = payload.serverVersion ?? existing.serverVersion
        row.data = payload.data
        row.isEncrypted = payload.isEncrypted
        row.references = payload.references
        row.referencesKnown = true
        row.isRoot = existing.isRoot || payload.isRoot
        row.syncStatus = status
        row.isRemote = existing.isRemote || status == .synced
        row.isDeleted = false
        row.revision += (existing.data != (payload.firstData ?? payload.data) ? 1 : 0) + payload.foldedRevisions
        if changed {
            row.modificationDate = now
        }
        // A new edit is a new chance; a version the server has is no failure.
        if changed || (status == .synced && existing.syncStatus != .synced) {
            row.attempts = 0
            row.retryAt = nil
        }
        return (row, true)
    }

    /// The status a row gets when `payload` is parked over `existing`.
    ///
    /// - A download (``RowPayload/isDownloaded``) is stored with its own status.
    /// - Over a tombstone, the object comes back as an edit to upload: `.notSynced`.
    /// - An object that is not `Syncable` (no status) keeps the row's (`.undetermined` for a
    ///   new row), but a `.synced` row whose content it changes is `.notSynced`: the server has
    ///   the object (it was downloaded, or uploaded), and the edit must reach it.
    /// - An object that says `.syncing` over a row no claim holds (it was retrieved during a
    ///   claim, and parked after it ended) is `.notSynced`: no job would ever end that status.
    ///   With ``RowPayload/keepsSyncing`` (GarageStorage's rule, for its apps' own jobs, which
    ///   set `.syncing` themselves), it is `.syncing`.
    /// - An object that says `.synced` over a row whose content it changes (it was retrieved
    ///   as `.synced`, edited and parked, once or more) is `.notSynced`: its edit must be
    ///   uploaded. Changes from the server are parked with `parkDownloaded`, which stores
    ///   `.synced`. Over a row whose content it leaves as it is, `.synced` is stored: an app
    ///   marks an object synced after uploading it.
    package static func status(parking payload: RowPayload, over existing: StoredRow?, contentChanged: Bool) -> SyncStatus {
        if payload.isDownloaded { return payload.syncStatus ?? .synced }
        if existing?.isDeleted == true { return .notSynced }
        guard let parked = payload.syncStatus else {
            if contentChanged, existing?.syncStatus == .synced { return .notSynced }
            return existing?.syncStatus ?? .undetermined
        }
        switch parked {
        case .syncing where existing?.claim == nil && !payload.keepsSyncing:
            return .notSynced
        case .synced where contentChanged && existing != nil:
            return .notSynced
        default:
            return parked
        }
    }

    // MARK: - Deleting

    /// What deleting the object does to its row: a tombstone when a copy may be on the server
    /// (`.notSynced` and a new revision, for a sync job to upload the deletion; the content
    /// stays, the references go, the claim stays), `.remove` otherwise; `nil` when there is no
    /// object (no row, or a tombstone).
    package static func deleted(_ existing: StoredRow?, now: Date) -> Deletion? {
        guard let existing, !existing.isDeleted else { return nil }
        guard existing.isRemote else { return .remove }
        return .tombstone(tombstone(existing, status: .notSynced, now: now))
    }

    /// The row once the server deleted its object (a downloaded deletion): a `.synced`
    /// tombstone that keeps the content, so that referrers read without it; `nil` unless the
    /// row is live and unclaimed.
    package static func deletedOnServer(_ existing: StoredRow?, now: Date) -> StoredRow? {
        guard let existing, !existing.isDeleted, existing.claim == nil else { return nil }
        var row = tombstone(existing, status: .synced, now: now)
        row.isRemote = true
        row.base = nil
        return row
    }

    /// Whether `row` is a tombstone the store may forget once no other row references it: a
    /// deletion the server has (`.synced`: downloaded, or uploaded and completed) that no claim
    /// holds. A `.notSynced` tombstone is a deletion still to upload, and stays.
    package static func isPurgeableTombstone(_ row: StoredRow) -> Bool {
        row.isDeleted && row.syncStatus == .synced && row.claim == nil
    }

    private static func tombstone(_ existing: StoredRow, status: SyncStatus, now: Date) -> StoredRow {
        var row = existing
        row.isDeleted = true
        row.syncStatus = status
        row.references = "[]"
        row.isRoot = false
        row.revision += 1
        row.modificationDate = now
        row.attempts = 0
        row.retryAt = nil
        if existing.syncStatus == .synced { row.base = existing.data }
        return row
    }

    /// What a deletion does to a row: leaves a tombstone, or removes it.
    package enum Deletion {
        case tombstone(StoredRow)
        case remove
    }

    // MARK: - Statuses

    /// The row with `status` set by the app; `nil` when it is a tombstone, or has it already.
    package static func settingStatus(_ status: SyncStatus, of existing: StoredRow?) -> StoredRow? {
        guard var row = existing, !row.isDeleted, row.syncStatus != status else { return nil }
        if status == .synced {
            row.base = nil
        } else if row.syncStatus == .synced {
            row.base = row.data
        }
        row.syncStatus = status
        row.isRemote = row.isRemote || status == .synced
        return row
    }

    // MARK: - Claims

    /// Whether a claim of `status` rows, at `now`, takes `row` (of the claim's type): unclaimed,
    /// not held back until after `now`, with fewer than `maximumAttempts` failed uploads, and
    /// not a deletion the server made (a `.synced` tombstone: nothing to upload). Claims take
    /// them in ``claimOrder(_:_:)``.
    package static func isClaimable(_ row: StoredRow, status: SyncStatus, now: Date, maximumAttempts: Int) -> Bool {
        row.syncStatus == status && row.claim == nil && (row.retryAt.map { $0 <= now } ?? true)
            && row.attempts < maximumAttempts && !(row.isDeleted && row.syncStatus == .synced)
    }

    /// Whether a claim takes `first` before `second`: the oldest modification first. Rows
    /// modified at the same instant (a `parkAll`'s) come in an order the engine chooses, the
    /// one its index of statuses gives without sorting (SQLite: the order the rows were
    /// inserted); this rule puts them in identifier order (bytewise), and `RowRulesTests`
    /// compares the two as groups of ties.
    package static func claimOrder(_ first: StoredRow, _ second: StoredRow) -> Bool {
        if first.modificationDate != second.modificationDate { return first.modificationDate < second.modificationDate }
        return Array(first.key.identifier.utf8).lexicographicallyPrecedes(second.key.identifier.utf8)
    }

    /// Whether `row` is held back from claims: `maximumAttempts` failed uploads or more, and
    /// no claim.
    package static func isHeld(_ row: StoredRow, maximumAttempts: Int) -> Bool {
        row.attempts >= maximumAttempts && row.claim == nil
    }

    /// The row taken by `claim` at `date`: `.syncing`, and from now on possibly on the server
    /// (so its data is its base, unless it has one: see "Bases").
    package static func claimed(_ existing: StoredRow, claim: String, at date: Date) -> StoredRow {
        var row = existing
        if row.base == nil && !row.isDeleted && !row.isRemote { row.base = row.data }
        row.syncStatus = .syncing
        row.claim = claim
        row.claimedAt = date
        row.isRemote = true
        return row
    }

    /// The row once its claim ends with `status` (`nil`: left as it is). A completed upload
    /// forgets the failed attempts; a failed one counts one more, with its error, and holds the
    /// row back until its `retryAt`. `uploaded`, the data a completed upload sent when the row
    /// changed meanwhile, becomes its base; a `.synced` row has none. `version`, the server's
    /// version of a completed upload, becomes the row's ``StoredRow/serverVersion``.
    /// `forgettingBase`, the data of a first upload the server did not take (it answered with
    /// another object of the same identifier: see "Bases"), is forgotten as the row's base if
    /// it still is: the server never had that version, so a merge must not take it for one
    /// both sides had.
    package static func endingClaim(_ existing: StoredRow, status: SyncStatus?, completed: Bool,
                            failure: (error: String?, retryAt: Date)?, uploaded: String? = nil,
                            version: String? = nil, forgettingBase: String? = nil) -> StoredRow {
        var row = existing
        if let version { row.serverVersion = version }
        row.syncStatus = status ?? existing.syncStatus
        if row.syncStatus == .synced {
            row.base = nil
        } else if let uploaded {
            row.base = uploaded
        } else if let forgettingBase, row.base == forgettingBase {
            row.base = nil
        }
        row.claim = nil
        row.claimedAt = nil
        if completed {
            row.attempts = 0
            row.retryAt = nil
            row.lastError = nil
        } else if let failure {
            row.attempts += 1
            row.retryAt = failure.retryAt
            row.lastError = failure.error
        }
        return row
    }

    /// The row once a claim taken before `cutoff` is released (its job is presumed dead):
    /// `.syncing` goes back to `.notSynced`; `nil` when no such claim holds it.
    package static func releasingStaleClaim(_ existing: StoredRow, takenBefore cutoff: Date) -> StoredRow? {
        guard existing.claim != nil, let claimedAt = existing.claimedAt, claimedAt < cutoff else { return nil }
        var row = existing
        if row.syncStatus == .syncing { row.syncStatus = .notSynced }
        row.claim = nil
        row.claimedAt = nil
        return row
    }

    /// The row with its failed attempts forgotten, so that claims take it again; `nil` when it
    /// has none.
    package static func forgettingAttempts(_ existing: StoredRow) -> StoredRow? {
        guard existing.attempts > 0 || existing.retryAt != nil else { return nil }
        var row = existing
        row.attempts = 0
        row.retryAt = nil
        return row
    }
}
