import Foundation
import GRDB

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
    /// claimed until ``complete(_:)-26tgn``, ``release(_:)-2mefx`` or ``releaseStaleClaims(olderThan:)``
    /// ends its claim, even if the app parks it again meanwhile.
    ///
    /// An object that can't be decoded (see ``retrieveAllLossy(_:)-92q15``) is not claimed: it is
    /// listed in ``Claim/failures``, stays as it is, and the batch is filled with the next
    /// objects, so that one bad row can't stop every sync job.
    ///
    /// - throws: The store's errors, such as ``GarageError/storeBusy(operation:path:)``;
    ///   nothing is claimed then.
    public func claim<T: Decodable>(_ type: T.Type, limit: Int, status: SyncStatus = .notSynced) throws -> Claim<T> {
        let configuration = configuration()
        let claim = try store.write("claim \(Identity.typeName(T.self))") { db in
            try Self.claimRows(T.self, limit: limit, status: status, in: db, configuration: configuration)
        }
        observers.publishSyncStatusChanges(claim.keys)
        return claim
    }

    /// Claims objects (see ``claim(_:limit:status:)``) without blocking the calling thread.
    public func claim<T: Decodable & Sendable>(
        _ type: T.Type, limit: Int, status: SyncStatus = .notSynced
    ) async throws -> Claim<T> {
        let configuration = configuration()
        let claim = try await store.write("claim \(Identity.typeName(T.self))") { db in
            try Self.claimRows(T.self, limit: limit, status: status, in: db, configuration: configuration)
        }
        observers.publishSyncStatusChanges(claim.keys)
        return claim
    }

    private static func claimRows<T: Decodable>(
        _ type: T.Type, limit: Int, status: SyncStatus, in db: Database, configuration: Configuration
    ) throws -> Claim<T> {
        let typeName = Identity.typeName(T.self)
        let claimID = UUID().uuidString
        let date = Date()
        return try Store.inTransaction(db) { db in
            let decoder = decoder(db, nil, configuration)
            let limit = max(0, limit)
            var objects: [T] = []
            var claimed: [StoredRow] = []
            var failures: [RetrievalFailure] = []
            // A row that can't be decoded is skipped, and stays unclaimed: the batch is filled
            // with the next rows, so that one bad row can't stop every sync job.
            while claimed.count < limit {
                let rows = try Store.claimableRows(
                    db, type: typeName, status: status, limit: limit - claimed.count, skipping: failures.count)
                if rows.isEmpty { break }
                for var row in rows {
                    row.syncStatus = .syncing
                    do {
                        objects.append(try decoder.decode(T.self, from: row))
                    } catch where !isStoreError(error) {
                        failures.append(RetrievalFailure(typeName: typeName, identifier: row.key.identifier, error: error))
                        continue
                    }
                    try Store.markClaimed(db, key: row.key, claim: claimID, at: date)
                    claimed.append(row)
                }
            }
            return Claim(id: claimID, typeName: typeName, date: date, objects: objects,
                         identifiers: claimed.map(\.key.identifier), revisions: claimed.map(\.revision),
                         failures: failures)
        }
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
        try store.write("complete a claim of \(claim.typeName)", endClaimWork(claim.ticket, completing: true))
    }

    /// Ends a claim after a successful upload (see ``complete(_:)``) without blocking the
    /// calling thread.
    @discardableResult
    public func complete<T>(_ claim: Claim<T>) async throws -> ClaimReport {
        try await store.write("complete a claim of \(claim.typeName)", endClaimWork(claim.ticket, completing: true))
    }

    /// Ends a claim after a failed upload: each row still `.syncing` under the claim goes back
    /// to `.notSynced`; a row whose status the app changed meanwhile keeps it.
    ///
    /// ```swift
    /// try garage.release(claim)
    /// ```
    @discardableResult
    public func release<T>(_ claim: Claim<T>) throws -> ClaimReport {
        try store.write("release a claim of \(claim.typeName)", endClaimWork(claim.ticket, completing: false))
    }

    /// Ends a claim after a failed upload (see ``release(_:)``) without blocking the calling thread.
    @discardableResult
    public func release<T>(_ claim: Claim<T>) async throws -> ClaimReport {
        try await store.write("release a claim of \(claim.typeName)", endClaimWork(claim.ticket, completing: false))
    }

    private func endClaimWork(_ ticket: ClaimTicket, completing: Bool) -> @Sendable (Database) throws -> ClaimReport {
        { [observers] db in
            var changed: [RowKey] = []
            let report = try Store.inTransaction(db) { db in
                var report = ClaimReport()
                for (identifier, revision) in zip(ticket.identifiers, ticket.revisions) {
                    let key = RowKey(type: ticket.typeName, identifier: identifier)
                    guard let row = try Store.row(db, key) else {
                        report.deleted.append(identifier)
                        continue
                    }
                    guard row.claim == ticket.id else {
                        report.lost.append(identifier)
                        continue
                    }
                    let status: SyncStatus?
                    if completing {
                        status = row.revision == revision ? .synced : .notSynced
                    } else {
                        status = row.syncStatus == .syncing ? .notSynced : nil
                    }
                    try Store.endClaim(db, key: key, status: status)
                    switch status {
                    case .synced?: report.synced.append(identifier)
                    case .notSynced?: report.notSynced.append(identifier)
                    default: report.keptByApp.append(identifier)
                    }
                    if status != nil, status != row.syncStatus { changed.append(key) }
                }
                return report
            }
            observers.publishSyncStatusChanges(changed)
            return report
        }
    }

    /// Ends every claim taken more than `interval` seconds ago, as if its job had released it:
    /// rows still `.syncing` go back to `.notSynced`. Returns how many rows were released.
    ///
    /// Run it when a sync job starts, with an interval longer than any upload takes, to
    /// recover the rows of a job that crashed:
    ///
    /// ```swift
    /// try garage.releaseStaleClaims(olderThan: 15 * 60)
    /// ```
    ///
    /// A job whose claim was released this way finds the rows in ``ClaimReport/lost`` when it
    /// completes; they are uploaded again by the next claim.
    @discardableResult
    public func releaseStaleClaims(olderThan interval: TimeInterval) throws -> Int {
        try store.write("release stale claims") { [observers] db in
            let released = try Store.inTransaction(db) { db in
                try Store.releaseClaims(db, takenBefore: Date().addingTimeInterval(-interval))
            }
            observers.publishSyncStatusChanges(released)
            return released.count
        }
    }
}

/// A batch of objects a sync job has claimed: their rows are `.syncing` and no other job can
/// claim them until ``Garage/complete(_:)-26tgn`` or ``Garage/release(_:)-2mefx`` ends the claim.
///
/// See ``Garage/claim(_:limit:status:)-4xq55``.
public struct Claim<Object> {
    /// Identifies the claim in the store.
    public let id: String
    /// The type name of the claimed objects.
    public let typeName: String
    /// When the objects were claimed.
    public let date: Date
    /// The claimed objects, as they were when claimed, oldest change first.
    public let objects: [Object]
    /// The identifiers of `objects`, in the same order.
    public let identifiers: [String]
    /// The revision of each object's row when it was claimed.
    let revisions: [Int64]
    /// The objects that could have been claimed but can't be decoded: they were left unclaimed,
    /// with their status. Park a valid object under the same identifier, or delete it.
    public var failures: [RetrievalFailure] = []

    /// Whether nothing was claimed: there is nothing to upload.
    public var isEmpty: Bool { objects.isEmpty }

    /// How many objects were claimed.
    public var count: Int { objects.count }

    var keys: [RowKey] { identifiers.map { RowKey(type: typeName, identifier: $0) } }

    /// What ending the claim needs: everything but the objects.
    var ticket: ClaimTicket {
        ClaimTicket(id: id, typeName: typeName, identifiers: identifiers, revisions: revisions)
    }
}

extension Claim: Sendable where Object: Sendable {}

struct ClaimTicket: Sendable {
    var id: String
    var typeName: String
    var identifiers: [String]
    var revisions: [Int64]
}

/// What ending a claim did to each of its objects, by identifier.
public struct ClaimReport: Sendable, Hashable {
    /// Now `.synced`: the content uploaded is the content stored.
    public var synced: [String] = []
    /// Now `.notSynced`: when completing, their content changed during the upload; when
    /// releasing, the upload failed. The next claim takes them again.
    public var notSynced: [String] = []
    /// Released with the status the app gave them during the claim.
    public var keptByApp: [String] = []
    /// Deleted during the claim: nothing was done.
    public var deleted: [String] = []
    /// No longer under this claim (released as stale, or deleted and parked again): nothing
    /// was done.
    public var lost: [String] = []

    public init() {}
}
