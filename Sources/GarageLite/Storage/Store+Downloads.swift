import Foundation
import GarageLiteCore

// Downloads: applying what the server sent without overwriting an edit it has not seen.
// Each conflict is decided inside the write transaction that applies the download, so no app
// edit can land between the check and the write.
extension Store {
    /// `keys` in key order.
    static func sorted(_ keys: [ObjectKey]) -> [ObjectKey] {
        keys.sorted { ($0.typeName, $0.identifier) < ($1.typeName, $1.identifier) }
    }

    /// Whether `referrer` has a change to upload that may be what made it name `key`: the
    /// version of it the server may have (its base, or its data when `.synced` under unsaved
    /// changes) doesn't name `key`'s identifier, or is unknown (a new object, an encrypted
    /// base). A base that holds the identifier named it already, as far as can be told: the
    /// server's deletion then stands.
    static func namesLocally(_ referrer: ObjectKey, _ key: ObjectKey, _ statements: any RowWriteStatements,
                             pending: ChangeSet?) throws -> Bool {
        let row = try statements.rowOrTombstone(referrer, for: .all)
        let hasPendingChange = pending?.touches(referrer) ?? false
        if !hasPendingChange {
            guard let row, !row.isDeleted, row.claim != nil || row.syncStatus == .notSynced else { return false }
        }
        guard let row, !row.isDeleted else { return true }
        let serverSide = row.syncStatus == .synced && row.claim == nil ? row.data : row.base
        guard let serverSide, !row.isEncrypted else { return true }
        let named = String(decoding: JSONWriter.bytes(from: .string(key.identifier)), as: UTF8.self)
        return !serverSide.contains(named)
    }

    /// What to do with one downloaded object that conflicts with a local edit.
    enum DownloadDecision: Sendable {
        case keepLocal
        case takeDownloaded
        /// Park these rows instead: a merge, as the app's own edit; `discarded` names the
        /// properties whose change the merge dropped.
        case replace(RowStream.Batch, discarded: [String] = [])
        /// Keep the local version: the merge failed, for this reason.
        case unmerged(String)
        /// Take the downloaded version: a merge that came to it, dropping these properties of
        /// the local version.
        case mergedIntoDownloaded(discarded: [String])
        /// Keep the local version, and report nothing: the download is the version the local
        /// change is based on (a rebase sends every object again), no news to it.
        case unchanged
    }

    /// Downloaded rows, and how a conflict of one of their roots with a local edit is decided
    /// (see ``applyDownloaded(_:pending:_:_:)``).
    struct DownloadedRows: Sendable {
        var rows: RowStream.Batch
        var roots: [ObjectKey]
        var resolve: @Sendable (_ key: ObjectKey, _ local: StoreView, _ downloaded: () -> StoreView) throws -> DownloadDecision
    }

    /// Objects deleted on the server, and how a conflict with a local edit is decided (see
    /// ``applyDeleted(_:pending:_:_:)``).
    struct DeletedOnServer: Sendable {
        var keys: [ObjectKey]
        var resolve: @Sendable (_ key: ObjectKey, _ local: StoreView) throws -> DownloadDecision
        /// When set, a key is deleted only while its row is still based on this server version
        /// (a rebase's objects the server no longer sends: one uploaded meanwhile stays).
        var expectedVersions: [ObjectKey: String?]? = nil
    }

    /// One page of a download: its edits, its deletions, and rows written with them (the
    /// engine's cursor, so that the page and the position after it commit together).
    struct DownloadPage: Sendable {
        var edits: DownloadedRows?
        var deletions: DeletedOnServer?
        var alsoWriting: RowStream.Batch = []
        var pending: ChangeSet?
    }

    /// Applies `page` in one transaction: its edits, then its deletions, then its other rows.
    /// Returns the edits' report (when it has edits), then the deletions'.
    func applyingDownloadPage(_ page: DownloadPage, operation: @autoclosure @escaping @Sendable () -> String) -> StoreWork<[DownloadReport]> {
        StoreWork(operation: operation(), access: .write { [listener] statements in
            var written: ChangeSet? = listener.isListening ? ChangeSet() : nil
            let reports = try Store.transaction(statements) {
                var reports: [DownloadReport] = []
                if let edits = page.edits {
                    reports.append(try Self.applyDownloaded(edits, pending: page.pending, statements, &written))
                }
                if let deletions = page.deletions {
                    reports.append(try Self.applyDeleted(deletions, pending: page.pending, statements, &written))
                }
                let now = Date()
                for (key, payload) in page.alsoWriting where try statements.park(key, payload, now: now) {
                    written?.record(.park(payload), for: key)
                }
                return reports
            }
            if let written { listener.committed(written) }
            return reports
        })
    }

    /// Parks `edits.rows` (a downloaded graph, every payload `.synced`). A row
    /// whose local version is `.notSynced` or claimed is a conflict: for a root, `resolve`
    /// decides (given the committed store, and the store as it would read with the download
    /// applied, built only if `resolve` asks for it: a merge); a referenced object keeps its
    /// local edit.
    ///
    /// A row `pending` changes (the unsaved changes, the calling transactions') is a conflict
    /// resolved by keeping the local edit, whatever `resolve` says: that edit is written after
    /// the download, and must stay an edit to upload.
    private static func applyDownloaded(_ edits: DownloadedRows, pending: ChangeSet?, _ statements: any RowWriteStatements,
                                        _ written: inout ChangeSet?) throws -> DownloadReport {
        let rows = edits.rows, resolve = edits.resolve
        let local = StoreView(statements, pending: nil)
        // The store as the download would make it: built for the first merge only.
        var downloaded: StoreView?
        func downloadedView() -> StoreView {
            if let downloaded { return downloaded }
            var downloads = ChangeSet()
            for (key, payload) in rows { downloads.record(.park(payload), for: key) }
            let view = StoreView(statements, pending: downloads)
            downloaded = view
            return view
        }
        let rootSet = Set(edits.roots)
        // Every decision is taken on the store as it was, before anything is written.
        var report = DownloadReport()
        var toWrite: RowStream.Batch = []
        for (key, payload) in rows {
            let isPending = pending?.touches(key) ?? false
            // A tombstone is a local edit too: the deletion the server has not seen.
            let existing = try statements.rowOrTombstone(key, for: .metadata)
            guard isPending || existing.map({ $0.syncStatus == .notSynced || $0.claim != nil }) == true else {
                toWrite.append((key, payload))
                if rootSet.contains(key) { report.applied.append(key.identifier) }
                continue
            }
            let decision = rootSet.contains(key) && !isPending ? try resolve(key, local, downloadedView) : .keepLocal
            if case .unchanged = decision { continue }
            var conflict = DownloadConflict(object: key, localStatus: isPending ? .notSynced : existing?.syncStatus ?? .notSynced,
                                                    wasClaimed: existing?.claim != nil, resolution: .keptLocal)
            conflict.wasDeletedLocally = !isPending && existing?.isDeleted == true
            switch decision {
            case .keepLocal, .unchanged:
                break
            case .unmerged(let reason):
                conflict.mergeFailure = reason
            case .takeDownloaded:
                toWrite.append((key, payload))
                conflict.resolution = .tookDownloaded
            case .mergedIntoDownloaded(let discarded):
                toWrite.append((key, payload))
                conflict.resolution = .tookDownloaded
                conflict.discardedFields = discarded
            case .replace(let merged, let discarded):
                toWrite.append(contentsOf: merged)
                conflict.resolution = .merged
                conflict.discardedFields = discarded
            }
            report.conflicts.append(conflict)
        }
        let now = Date()
        for (key, payload) in toWrite {
            if try statements.park(key, payload, now: now) {
                written?.record(.park(payload), for: key)
            }
        }
        return report
    }

    /// Deletes the rows `deletions.keys` names (deletions made on the server). A row
    /// whose local version is `.notSynced` or claimed is a conflict: `deletions.resolve` decides
    /// (given the committed store): `takeDownloaded` deletes it; `keepLocal` keeps it, and its
    /// upload re-creates it on the server; `replace` parks the rows it gives instead.
    ///
    /// A claimed row is never purged: its claim must last until its job ends it, or a second
    /// job could claim the identifier while the first still uploads. Deleted, it becomes a
    /// tombstone under the same claim, which completes as edited meanwhile, so the deletion is
    /// uploaded after whatever the first job sends; a claimed tombstone stays as it is.
    ///
    /// A row `pending` changes is a conflict whose local edit is kept (see
    /// ``applyDownloaded(_:pending:_:_:)``).
    private static func applyDeleted(_ deletions: DeletedOnServer, pending: ChangeSet?, _ statements: any RowWriteStatements,
                                     _ written: inout ChangeSet?) throws -> DownloadReport {
        let keys = deletions.keys, resolve = deletions.resolve
        var report = DownloadReport()
        let now = Date()
        for key in keys {
            let existing = try statements.rowOrTombstone(key, for: .metadata)
            if let expected = deletions.expectedVersions?[key], existing?.serverVersion != expected { continue }
            if pending?.touches(key) ?? false {
                report.conflicts.append(DownloadConflict(
                    object: key, localStatus: .notSynced, wasClaimed: existing?.claim != nil, resolution: .keptLocal))
                continue
            }
            guard let existing else { continue }
            let local = StoreView(statements, pending: nil)
            // The referrers as this garage sees them: its unsaved changes may add one.
            let referrers = try StoreView(statements, pending: pending)
                .references(toType: key.typeName, identifier: key.identifier).map(\.from).filter { $0 != key }
            // A local edit, or a claimed row: a conflict (a claimed tombstone stays as it is).
            let isEdited = existing.claim != nil || (!existing.isDeleted && existing.syncStatus == .notSynced)
            // A `.synced` object that local objects still name: a conflict the report names
            // with them. One whose change to upload named it (made offline: the version the
            // server has of it doesn't) keeps it, as an edit to upload, re-created on the
            // server, rather than the referrer uploaded without it.
            let isNamedLocally = try !isEdited && !existing.isDeleted
                && referrers.contains { try Self.namesLocally($0, key, statements, pending: pending) }
            if isEdited || isNamedLocally {
                let isClaimed = existing.claim != nil
                var conflict = DownloadConflict(object: key, localStatus: existing.syncStatus, wasClaimed: isClaimed,
                                                        resolution: .keptLocal)
                if isNamedLocally { conflict.referencedBy = Self.sorted(referrers) }
                switch existing.isDeleted ? .keepLocal : try resolve(key, local) {
                case .keepLocal, .unmerged, .mergedIntoDownloaded, .unchanged:
                    report.conflicts.append(conflict)
                    if isNamedLocally, try statements.setSyncStatus(.notSynced, of: key) {
                                written?.record(.setSyncStatus(.notSynced), for: key)
                    }
                    continue
                case .replace(let merged, let discarded):
                    conflict.resolution = .merged
                    conflict.discardedFields = discarded
                    report.conflicts.append(conflict)
                    for (mergedKey, payload) in merged where try statements.park(mergedKey, payload, now: now) {
                                written?.record(.park(payload), for: mergedKey)
                    }
                    continue
                case .takeDownloaded:
                    conflict.resolution = .tookDownloaded
                    report.conflicts.append(conflict)
                    if isClaimed {
                                try statements.delete(key, now: now)
                                written?.record(.delete, for: key)
                                report.deleted.append(key.identifier)
                                continue
                    }
                }
            } else if !existing.isDeleted, !referrers.isEmpty {
                var conflict = DownloadConflict(object: key, localStatus: existing.syncStatus, wasClaimed: false,
                                                        resolution: .tookDownloaded)
                conflict.referencedBy = Self.sorted(referrers)
                report.conflicts.append(conflict)
            }
            // Objects that still name it read without it: the store remembers the
            // deletion (a tombstone nothing uploads) while a referrer names it.
            if !referrers.isEmpty {
                try statements.markDeletedOnServer(key, now: now)
            } else {
                try statements.purge(key)
            }
            written?.record(.delete, for: key)
            report.deleted.append(key.identifier)
        }
        return report
    }
}
