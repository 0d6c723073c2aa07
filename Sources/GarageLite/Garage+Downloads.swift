import Foundation

// Downloads: bringing the server's changes in without overwriting an edit it has not seen.
extension Garage {
    /// Parks objects that came from the server as `.synced` (with every object they
    /// reference), in one transaction, and decides each conflict with a local edit inside it.
    ///
    /// ```swift
    /// let notes = try await server.changes(since: lastSync)
    /// let report = try garage.parkDownloaded(notes)        // local edits win by default
    /// for conflict in report.conflicts { log(conflict) }  // Note(n1): kept the local edit
    /// ```
    ///
    /// An object whose row is `.notSynced` (the app edited it, and the edit is not uploaded
    /// yet) or claimed by a sync job is a conflict, resolved by `onConflict` (see
    /// ``ConflictResolution``). A referenced object with a local edit keeps it. The check and
    /// the write are one transaction, so an edit the app parks meanwhile is either seen as a
    /// conflict or parked after the download, never lost.
    ///
    /// The download is written to the store at once, outside this garage's unsaved changes and
    /// transactions. An object those changes touch is a conflict whose local edit is kept,
    /// whatever `onConflict` says: it is written after the download, as an edit to upload.
    ///
    /// - throws: The errors of ``park(_:)-7fg4m``, those of the `merge` closure, and those of
    ///   decoding the local version for a merge; nothing is written then.
    @discardableResult
    public func parkDownloaded<T: Codable & SendableMetatype>(
        _ objects: [T], onConflict: ConflictResolution<T> = .keepLocal
    ) throws -> DownloadReport {
        try run(parkingDownloaded(objects, onConflict: onConflict))
    }

    /// Parks objects that came from the server (see ``parkDownloaded(_:onConflict:)-5otc``)
    /// without blocking the calling thread.
    @discardableResult
    public nonisolated(nonsending) func parkDownloaded<T: Codable & SendableMetatype>(
        _ objects: [T], onConflict: ConflictResolution<T> = .keepLocal
    ) async throws -> DownloadReport {
        try await run(parkingDownloaded(objects, onConflict: onConflict))
    }

    private func parkingDownloaded<T: Codable & SendableMetatype>(
        _ objects: [T], onConflict: ConflictResolution<T>
    ) throws -> StoreWork<DownloadReport> {
        let configuration = configuration()
        let graph = configuration.encoder()
        let roots = try objects.map { try graph.encodeRoot($0) }
        let rows: RowStream.Batch = try graph.rows.map { row in
            var (key, payload) = try configuration.encryption.seal(row)
            payload.syncStatus = .synced
            payload.isDownloaded = true
            return (key, payload)
        }
        let resolve: @Sendable (ObjectKey, StoreView, () -> StoreView) throws -> Store.DownloadDecision
        switch onConflict {
        case .keepLocal:
            resolve = { _, _, _ in .keepLocal }
        case .takeDownloaded:
            resolve = { _, _, _ in .takeDownloaded }
        case .merge(let merge):
            resolve = { key, local, downloadedView in
                let downloaded = downloadedView()
                // No local row in a conflict: the app deleted the object, and a deletion has
                // nothing to merge with. It stays deleted, for its job to upload.
                guard let localRow = try local.row(key), let downloadedRow = try downloaded.row(key) else {
                    return .keepLocal
                }
                let merged = try merge(
                    configuration.decode(T.self, localRow, with: configuration.decoder(local)),
                    configuration.decode(T.self, downloadedRow, with: configuration.decoder(downloaded)))
                let graph = configuration.encoder()
                let root = try graph.encodeRoot(merged)
                return .replace(try graph.rows.map { row in
                    var (key, payload) = try configuration.encryption.seal(row)
                    // The merge is the app's edit: uploaded by the next sync job.
                    if key == root { payload.syncStatus = .notSynced }
                    return (key, payload)
                })
            }
        }
        return store.parkingDownloaded(rows, roots: roots, pending: pendingChanges(), resolve: resolve)
    }

    /// Deletes objects that were deleted on the server, without leaving anything for a sync
    /// job to upload, in one transaction.
    ///
    /// ```swift
    /// try garage.deleteDownloaded(Note.self, identifiers: server.deletedNoteIDs)
    /// ```
    ///
    /// An object with a local edit (`.notSynced`, or claimed) is a conflict: with
    /// `.takeDownloaded` it is deleted; otherwise (`.keepLocal`, and `.merge`, since nothing
    /// came to merge) it is kept, and its upload re-creates it on the server. An identifier
    /// that is not parked is skipped.
    ///
    /// Local objects that reference a deleted object keep reading: an array, set or
    /// dictionary leaves it out, and an optional property reads `nil` (a property that is not
    /// optional can't do without it, and fails to read until the referrer is downloaded or
    /// parked again). They are not changed, so they stay `.synced` (a local edit of theirs
    /// stays an edit to upload); parked again, they are stored without the reference. The
    /// store keeps a tombstone of the deleted object, which nothing uploads, while a referrer
    /// names it.
    ///
    /// A download never ends a sync job's claim: an object a job holds that is deleted here
    /// (`.takeDownloaded`) becomes a deletion to upload once that job completes, and a
    /// deletion a job holds stays until it ends, so that no second job claims the identifier
    /// meanwhile and the server ends with the deletion, whatever the first job sends.
    @discardableResult
    public func deleteDownloaded<T, ID: GarageIdentifier>(
        _ type: T.Type, identifiers: [ID], onConflict: ConflictResolution<T> = .keepLocal
    ) throws -> DownloadReport {
        try run(deletingDownloaded(T.self, identifiers, onConflict))
    }

    /// Deletes objects that were deleted on the server (see
    /// ``deleteDownloaded(_:identifiers:onConflict:)-3x5xn``) without blocking the calling thread.
    @discardableResult
    public nonisolated(nonsending) func deleteDownloaded<T, ID: GarageIdentifier>(
        _ type: T.Type, identifiers: [ID], onConflict: ConflictResolution<T> = .keepLocal
    ) async throws -> DownloadReport {
        try await run(deletingDownloaded(T.self, identifiers, onConflict))
    }

    private func deletingDownloaded<T, ID: GarageIdentifier>(
        _ type: T.Type, _ identifiers: [ID], _ onConflict: ConflictResolution<T>
    ) throws -> StoreWork<DownloadReport> {
        let typeName = try storedTypeName(T.self)
        let keys = try identifiers.map { ObjectKey(typeName: typeName, identifier: try Identity.string(fromID: $0)) }
        var takeDownloaded = false
        if case .takeDownloaded = onConflict { takeDownloaded = true }
        return store.deletingDownloaded(keys, takeDownloaded: takeDownloaded, pending: pendingChanges())
    }
}
