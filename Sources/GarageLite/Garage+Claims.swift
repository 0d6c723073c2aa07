import Foundation
import GarageLiteCore

// Claims: how a sync job takes a batch of objects to upload, then completes or releases it,
// without marking an edit made meanwhile as synced, and without two jobs taking one object.
//
// A claimed row records the claim's identifier and date. The job keeps the claim, with the
// revision of each row at claim time: completing compares revisions, so a row re-parked
// during the upload goes back to `.notSynced`. Claims work on the committed store: they
// neither see nor save a garage's unsaved changes.
extension Garage {
    /// Claims up to `limit` objects of type `T` with status `status`, oldest change first, and
    /// moves their rows to `.syncing`, in one transaction.
    ///
    /// `limit` counts the changed objects and the deletions (``Claim/deletions``) together:
    /// a batch of 100 may hold 90 objects and 10 deleted identifiers (``Claim/count`` counts
    /// only the objects).
    ///
    /// ```swift
    /// let claim = try garage.claim(Note.self, limit: 100)
    /// do {
    ///     try upload(claim.objects)
    ///     try garage.complete(claim)       // .synced, or .notSynced if edited meanwhile
    /// } catch {
    ///     try garage.release(claim)        // back to .notSynced, for the next run
    /// }
    /// ```
    ///
    /// Two jobs, in threads or in processes, never claim the same row: a claimed row stays
    /// claimed until ``complete(_:)-26tgn``, ``release(_:)-2mefx`` or ``releaseStaleClaims(olderThan:)-46uoc``
    /// ends its claim, even if the app parks it again meanwhile.
    ///
    /// An object that can't be decoded (see ``retrieveAllLossy(_:)-2impn``) is not claimed: it is
    /// listed in ``Claim/failures``, stays as it is, and the batch is filled with the next
    /// objects, so that one bad row can't stop every sync job.
    ///
    /// - throws: The store's errors, such as ``GarageError/storeBusy(operation:path:)``;
    ///   nothing is claimed then.
    public func claim<T: Decodable & SendableMetatype>(_ type: T.Type, limit: Int, status: SyncStatus = .notSynced) throws -> Claim<T> {
        try run(claiming(T.self, limit: limit, status: status))
    }

    /// Claims objects (see ``claim(_:limit:status:)-8fs3h``) without blocking the calling thread.
    public nonisolated(nonsending) func claim<T: Decodable & SendableMetatype>(
        _ type: T.Type, limit: Int, status: SyncStatus = .notSynced
    ) async throws -> Claim<T> {
        try await run(claiming(T.self, limit: limit, status: status))
    }

    /// Ends a claim after a successful upload: each row whose content did not change since the
    /// claim becomes `.synced`; a row parked again with other content meanwhile goes back to
    /// `.notSynced`, so that its edit is uploaded next time; a row deleted meanwhile is skipped.
    ///
    /// ```swift
    /// let report = try garage.complete(claim)
    /// report.notSynced      // edited during the upload: will be claimed again
    /// ```
    @discardableResult
    public func complete<T>(_ claim: Claim<T>) throws -> ClaimReport {
        try run(store.endingClaim(claim.ticket, "complete") { _ in .completed() })
    }

    /// Ends a claim after a successful upload (see ``complete(_:)-26tgn``) without blocking the
    /// calling thread.
    @discardableResult
    public nonisolated(nonsending) func complete<T>(_ claim: Claim<T>) async throws -> ClaimReport {
        try await run(store.endingClaim(claim.ticket, "complete") { _ in .completed() })
    }

    /// Ends a claim after a failed upload: each row still `.syncing` under the claim goes back
    /// to `.notSynced`; a row whose status the app changed meanwhile keeps it.
    ///
    /// ```swift
    /// try garage.release(claim)
    /// ```
    @discardableResult
    public func release<T>(_ claim: Claim<T>) throws -> ClaimReport {
        try run(store.endingClaim(claim.ticket, "release") { _ in .released })
    }

    /// Ends a claim after a failed upload (see ``release(_:)-2mefx``) without blocking the calling thread.
    @discardableResult
    public nonisolated(nonsending) func release<T>(_ claim: Claim<T>) async throws -> ClaimReport {
        try await run(store.endingClaim(claim.ticket, "release") { _ in .released })
    }

    /// Ends a claim after a failed upload, counting one more failed attempt for each of its
    /// objects and holding them back from claims for `retryAfter` seconds.
    ///
    /// ```swift
    /// do {
    ///     try server.upload(claim.objects, deleting: claim.deletions)
    ///     try garage.complete(claim)
    /// } catch {
    ///     try garage.release(claim, retryAfter: 60, error: error)   // not before a minute
    /// }
    /// ```
    ///
    /// An object whose uploads failed ``maximumUploadAttempts`` times is *held*: claims skip
    /// it. Every object of the batch counts this failure: when the server says which objects
    /// it rejected, end the claim with ``complete(_:rejected:retryAfter:)-7nkru`` instead, so that
    /// one object it always rejects can't hold the others back. List them with
    /// ``heldObjects(_:)-1a0n``, with the last error; ``retryHeld(_:identifiers:)-5l9ef`` lets claims take
    /// them again, and so does parking an object with new content. A completed claim forgets
    /// the failed attempts. ``release(_:)-2mefx`` gives a batch back without counting a failure.
    @discardableResult
    public func release<T>(_ claim: Claim<T>, retryAfter: TimeInterval, error: (any Error)? = nil) throws -> ClaimReport {
        try run(failing(claim, retryAfter: retryAfter, error: error))
    }

    /// Ends a claim after a failed upload (see ``release(_:retryAfter:error:)-8n7ea``) without
    /// blocking the calling thread.
    @discardableResult
    public nonisolated(nonsending) func release<T>(
        _ claim: Claim<T>, retryAfter: TimeInterval, error: (any Error)? = nil
    ) async throws -> ClaimReport {
        try await run(failing(claim, retryAfter: retryAfter, error: error))
    }

    /// Ends a claim after an upload the server took but for some objects, which it rejected:
    /// the others are completed (see ``complete(_:)-26tgn``); each rejected one counts a failed
    /// attempt, with its error, and is held back from claims for `retryAfter` seconds (a
    /// minute by default: longer than a batch takes, so that a job that claims until nothing
    /// is left does not take it again in the same run; a new edit lets claims take it at once).
    ///
    /// ```swift
    /// let answer = try server.upload(claim.objects, deleting: claim.deletions)
    /// try garage.complete(claim, rejected: answer.errorsByIdentifier)
    /// ```
    ///
    /// This is how one object the server always rejects stays out of the way: after
    /// ``maximumUploadAttempts`` rejections it is held, and the rest of each batch syncs.
    /// (``release(_:retryAfter:error:)-8n7ea`` counts a failure for every object of the batch.)
    @discardableResult
    public func complete<T>(
        _ claim: Claim<T>, rejected: [String: any Error], retryAfter: TimeInterval = 60
    ) throws -> ClaimReport {
        try run(completing(claim, rejected: rejected, retryAfter: retryAfter))
    }

    /// Ends a claim the server took but for some objects (see
    /// ``complete(_:rejected:retryAfter:)-7nkru``) without blocking the calling thread.
    @discardableResult
    public nonisolated(nonsending) func complete<T>(
        _ claim: Claim<T>, rejected: [String: any Error], retryAfter: TimeInterval = 60
    ) async throws -> ClaimReport {
        try await run(completing(claim, rejected: rejected, retryAfter: retryAfter))
    }

    /// The objects of type `T` whose uploads failed ``maximumUploadAttempts`` times, which claims
    /// skip, oldest change first.
    ///
    /// ```swift
    /// for held in try garage.heldObjects(Note.self) {
    ///     log("\(held)")                  // n1: 10 failed uploads, last: HTTP 422
    /// }
    /// ```
    public func heldObjects<T>(_ type: T.Type) throws -> [HeldObject] {
        try run(store.listingHeld(storedTypeName(T.self, listing: "list the held objects of"), maximumAttempts: maximumUploadAttempts))
    }

    /// The objects of type `T` held back from claims (see ``heldObjects(_:)-1a0n``), without
    /// blocking the calling thread.
    public nonisolated(nonsending) func heldObjects<T>(_ type: T.Type) async throws -> [HeldObject] {
        try await run(store.listingHeld(storedTypeName(T.self, listing: "list the held objects of"), maximumAttempts: maximumUploadAttempts))
    }

    /// Forgets the failed uploads of the objects of type `T` that `identifiers` name (every
    /// one when `nil`), so that claims take them again; returns how many had failed.
    @discardableResult
    public func retryHeld<T, ID: GarageIdentifier>(_ type: T.Type, identifiers: [ID]? = nil as [String]?) throws -> Int {
        try run(store.retryingHeld(storedTypeName(T.self), identifiers: identifiers.map { try $0.map(Identity.string(fromID:)) }))
    }

    /// Forgets the failed uploads of objects (see ``retryHeld(_:identifiers:)-5l9ef``) without
    /// blocking the calling thread.
    @discardableResult
    public nonisolated(nonsending) func retryHeld<T, ID: GarageIdentifier>(_ type: T.Type, identifiers: [ID]? = nil as [String]?) async throws -> Int {
        try await run(store.retryingHeld(storedTypeName(T.self), identifiers: identifiers.map { try $0.map(Identity.string(fromID:)) }))
    }

    /// Ends at once the claims of processes of this host that no longer run (a job killed, or
    /// crashed, during its upload): their objects go back to `.notSynced`, for the next claim;
    /// returns how many. A claim records the process that took it (its id, its start time, and
    /// where that id names it), so that a claim of a live process, or of another host, is never
    /// ended this way;
    /// those expire with ``releaseStaleClaims(olderThan:)-46uoc``. A garage that opens a store
    /// file does this itself.
    ///
    /// ```swift
    /// try garage.releaseStaleClaims()     // after the previous run of the job was killed
    /// ```
    @discardableResult
    public func releaseStaleClaims() throws -> Int {
        try run(store.releasingClaimsOfEndedProcesses())
    }

    /// Ends the claims of processes of this host that no longer run (see
    /// ``releaseStaleClaims()-6epwf``) without blocking the calling thread.
    @discardableResult
    public nonisolated(nonsending) func releaseStaleClaims() async throws -> Int {
        try await run(store.releasingClaimsOfEndedProcesses())
    }

    /// Ends every claim taken more than `interval` seconds ago, as if its job had released it:
    /// rows still `.syncing` go back to `.notSynced`. Returns how many rows were released.
    ///
    /// Run it when a sync job starts, with an interval longer than any upload takes, to
    /// recover the rows of a job that crashed on another host (those of a process of this host
    /// that ended are released at once: ``releaseStaleClaims()-6epwf``):
    ///
    /// ```swift
    /// try garage.releaseStaleClaims(olderThan: 15 * 60)
    /// ```
    ///
    /// A job whose claim was released this way finds the rows in ``ClaimReport/lost`` when it
    /// completes; they are uploaded again by the next claim.
    @discardableResult
    public func releaseStaleClaims(olderThan interval: TimeInterval) throws -> Int {
        try run(store.releasingClaims(takenBefore: Date().addingTimeInterval(-interval)))
    }

    /// Ends every claim taken more than `interval` seconds ago (see
    /// ``releaseStaleClaims(olderThan:)-46uoc``) without blocking the calling thread.
    @discardableResult
    public nonisolated(nonsending) func releaseStaleClaims(olderThan interval: TimeInterval) async throws -> Int {
        try await run(store.releasingClaims(takenBefore: Date().addingTimeInterval(-interval)))
    }
}
