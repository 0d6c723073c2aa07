import Foundation
import GarageLite

// Tombstones that end: a deletion stays in its scope's feed, for the devices that have not
// downloaded it yet, until it is older than the server's horizon; then it is purged, with the
// object's state, and the scope's horizon moves past it. A device whose cursor is behind the
// horizon may have missed it: its next download is answered "rebase" (``DownloadBatch/rebase``),
// and its engine downloads the scope again, keeping its unsynced changes, and deletes the
// objects it doesn't get back. So no deletion comes back, however long a device was away.
extension SyncServer {
    /// Purges the tombstones of the feeds deleted before `date` (by default, ``tombstoneHorizon``
    /// ago), with the states of the objects they deleted; returns how many it purged. Devices
    /// whose cursors are behind a purged tombstone are answered "rebase" from then on.
    ///
    /// ```swift
    /// let purged = try await server.purgeTombstones(deletedBefore: Date().addingTimeInterval(-30 * 86_400))
    /// ```
    ///
    /// It works in transactions of `batchSize` tombstones, so that instances serving meanwhile
    /// wait little; one that changed a purged object meanwhile (it was created again) keeps it.
    ///
    /// - throws: The garage's errors: the batches before the failing one stay purged.
    @discardableResult
    public func purgeTombstones(deletedBefore date: Date? = nil, batchSize: Int = 500) async throws -> Int {
        guard let cutoff = date ?? tombstoneHorizon.map({ Date().addingTimeInterval(-$0) }) else { return 0 }
        try await garage.index(FeedEntry.self, on: Field("isDeleted"), Field("deletedAt"))
        var purged = 0
        while true {
            let query = Query(FeedEntry.self)
                .filter(Field("isDeleted") == true && Field("deletedAt") < cutoff.timeIntervalSince1970)
                .limit(max(1, batchSize))
            let entries = try await garage.retrieve(query)
            if entries.isEmpty { return purged }
            let count = try await purging(entries)
            metrics.purged(count)
            purged += count
        }
    }

    /// Purges `entries` in one transaction, tried again when another instance changed what it read.
    private func purging(_ entries: [FeedEntry]) async throws -> Int {
        var attempt = 0
        while true {
            attempt += 1
            do {
                return try await garage.transaction {
                    var horizons: [String: Int64] = [:]
                    var purged = 0
                    for entry in entries {
                        // Still the tombstone read (not written again since).
                        guard let current = try await garage.retrieve(FeedEntry.self, identifier: entry.id),
                              current.isDeleted, current.position == entry.position else { continue }
                        _ = try await garage.delete(FeedEntry.self, identifier: entry.id)
                        let stateID = ObjectState.id(typeName: entry.typeName, identifier: entry.identifier)
                        // The object's state goes with its deletion; an object that moved to another scope stays.
                        if let state = try await garage.retrieve(ObjectState.self, identifier: stateID), state.isDeleted {
                            _ = try await garage.delete(ObjectState.self, identifier: stateID)
                        }
                        horizons[entry.scope] = max(horizons[entry.scope] ?? 0, entry.position)
                        purged += 1
                    }
                    for (scope, position) in horizons {
                        var horizon = try await garage.retrieve(ScopeHorizon.self, identifier: scope) ?? ScopeHorizon(id: scope, position: 0)
                        guard position > horizon.position else { continue }
                        horizon.position = position
                        try await garage.park(&horizon)
                    }
                    return purged
                }
            } catch let error as GarageError {
                guard case .staleObject = error, attempt < SyncServer.attempts else { throw error }
                try await Task.sleep(for: .milliseconds(Int.random(in: 0...(attempt * 4))))
            }
        }
    }

    /// The tombstones in each scope's feed, and its horizon: for an operator's view.
    public func tombstones() async throws -> [String: (count: Int, horizon: Int64)] {
        var result: [String: (count: Int, horizon: Int64)] = [:]
        for entry in try await garage.retrieve(Query(FeedEntry.self).filter(Field("isDeleted") == true)) {
            result[entry.scope, default: (0, 0)].count += 1
        }
        for horizon in try await garage.retrieveAll(ScopeHorizon.self) {
            result[horizon.id, default: (0, 0)].horizon = horizon.position
        }
        return result
    }
}
