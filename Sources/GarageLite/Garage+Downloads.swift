import Foundation
import GarageLiteCore

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
    /// - throws: The errors of ``park(_:children:)-3a5in``, those of the `merge` closure, and those of
    ///   decoding the local version for a merge; nothing is written then.
    @discardableResult
    public func parkDownloaded<T: Codable & SendableMetatype>(
        _ objects: [T], onConflict: ConflictResolution<T> = .keepLocal
    ) throws -> DownloadReport {
        try run(sealingWithCurrentKey { StoreCall(try self.parkingDownloaded(objects, onConflict: onConflict)) })
    }

    /// Parks objects that came from the server (see ``parkDownloaded(_:onConflict:)-74tja``)
    /// without blocking the calling thread.
    @discardableResult
    public nonisolated(nonsending) func parkDownloaded<T: Codable & SendableMetatype>(
        _ objects: [T], onConflict: ConflictResolution<T> = .keepLocal
    ) async throws -> DownloadReport {
        try await run(sealingWithCurrentKey { StoreCall(try self.parkingDownloaded(objects, onConflict: onConflict)) })
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
    /// A deleted object that local objects still reference is a conflict, and the report names
    /// them (``DownloadConflict/referencedBy``). When one of them has a change to upload (it
    /// may be what added the reference: a note filed, offline, in a notebook another device
    /// deleted), `.keepLocal`, `.merge` and `.threeWay` keep the object, as an edit to upload
    /// that re-creates it on the server, so that the referrer keeps it everywhere; with
    /// `.takeDownloaded`, or when none has, it is deleted.
    ///
    /// Local objects that reference a deleted object keep reading: an array, set or
    /// dictionary leaves it out, an optional property reads `nil`, and a property that is not
    /// optional (which can't do without it) reads its last version, until the referrer's own
    /// download replaces it. They are not changed, so they stay `.synced` (a local edit of
    /// theirs stays an edit to upload); parked again, they are stored without the reference
    /// (parking back a `Revisioned` last version is refused as stale). The store keeps a
    /// tombstone of the deleted object, with its last version, which nothing uploads, while a
    /// referrer names it (see <doc:ReferenceRule>).
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
    /// ``deleteDownloaded(_:identifiers:onConflict:)-116er``) without blocking the calling thread.
    @discardableResult
    public nonisolated(nonsending) func deleteDownloaded<T, ID: GarageIdentifier>(
        _ type: T.Type, identifiers: [ID], onConflict: ConflictResolution<T> = .keepLocal
    ) async throws -> DownloadReport {
        try await run(deletingDownloaded(T.self, identifiers, onConflict))
    }

    /// Whether `first` and `second` encode to the same JSON (keys sorted): the engine's merges and the sync server's.
    package static func sameJSON<T: Encodable>(_ first: T, _ second: T) throws -> Bool {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return try encoder.encode(first) == encoder.encode(second)
    }
}

extension Garage.Configuration {
}
