import Foundation
import GarageLite

// Tombstones that end: a deletion stays in its scope's feed, for the devices that have not
// downloaded it yet, until it is older than the server's horizon; then it is purged, and the
// scope's horizon moves past it. The object's state stays (a small row): its version goes on
// from where it was if the object is created again, so that no version repeats and a device's
// edit based on an old one is still told apart. A device whose cursor is behind the
// horizon may have missed it: its next download is answered "rebase" (``DownloadBatch/rebase``),
// and its engine downloads the scope again, keeping its unsynced changes, and deletes the
// objects it doesn't get back. So no deletion comes back, however long a device was away.
extension SyncServer {
    /// Purges the tombstones of the feeds deleted before `date` (by default, ``tombstoneHorizon``
    /// ago); returns how many it purged. (The objects' states stay, so that versions never
    /// repeat.) Devices
    /// whose cursors are behind a purged tombstone are answered "rebase" from then on.
    ///
    /// ```swift
    /// let purged = try await server.purgeTombstones(deletedBefore: Date().addingTimeInterval(-30 * 86_400))
    /// ```
    ///
    /// It works in transactions of `batchSize` tombstones, so that instances serving meanwhile
    /// wait little; a tombstone an upload wrote again meanwhile (the object created again) makes
    /// its batch start again, and stays.
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
                        // Still the tombstone read (not written again since): deleted as read, so
                        // that an upload writing it meanwhile (the object created again) makes the
                        // commit stale, and the batch is tried again.
                        guard let current = try await garage.retrieve(FeedEntry.self, identifier: entry.id),
                              current.isDeleted, current.position == entry.position else { continue }
                        try await garage.delete(current)
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

    /// Every scope of the store's feeds, with its objects, tombstones, last position and
    /// horizon, in scope order: an operator's view (`garage sync-server scopes`). It reads every
    /// object's state once.
    public func scopes() async throws -> [SyncScope] {
        var scopes: [String: SyncScope] = [:]
        func scope(_ name: String) -> SyncScope { scopes[name] ?? SyncScope(name: name) }
        for counter in try await garage.retrieveAll(ScopeCounter.self) {
            var summary = scope(counter.id)
            summary.position = counter.position
            scopes[counter.id] = summary
        }
        for state in try await garage.retrieveAll(ObjectState.self) where !state.isDeleted && state.version > 0 {
            var summary = scope(state.scope)
            summary.objects += 1
            scopes[state.scope] = summary
        }
        for entry in try await garage.retrieve(Query(FeedEntry.self).filter(Field("isDeleted") == true)) {
            var summary = scope(entry.scope)
            summary.tombstones += 1
            scopes[entry.scope] = summary
        }
        for horizon in try await garage.retrieveAll(ScopeHorizon.self) {
            var summary = scope(horizon.id)
            summary.horizon = horizon.position
            scopes[horizon.id] = summary
        }
        return scopes.values.sorted { $0.name < $1.name }
    }

    /// Makes every device that read `scope` download it again (a rebase, keeping its unsynced
    /// changes) at its next download: after objects were changed in the store without the
    /// server (an import, a repair), or to drop objects devices should no longer hold. Devices
    /// that begin reading it afterwards don't rebase. Returns the scope's new horizon. (Not for
    /// a store restored from a backup: its counters are behind positions devices already hold.)
    @discardableResult
    public func forceRebase(of scope: String) async throws -> Int64 {
        var attempt = 0
        while true {
            attempt += 1
            do {
                return try await garage.transaction {
                    let position = try await garage.retrieve(ScopeCounter.self, identifier: scope)?.position ?? 0
                    var horizon = try await garage.retrieve(ScopeHorizon.self, identifier: scope) ?? ScopeHorizon(id: scope, position: 0)
                    // Past the last position: a device that read it all rebases too.
                    horizon.position = max(horizon.position, position + 1)
                    try await garage.park(&horizon)
                    return horizon.position
                }
            } catch let error as GarageError {
                guard case .staleObject = error, attempt < SyncServer.attempts else { throw error }
            }
        }
    }

    /// What a device's download cursor (as its store keeps it) says of each scope: the position
    /// it reached, the horizon it began from, and whether its next download is a rebase.
    public func describe(cursor: String) async throws -> [SyncCursorScope] {
        let cursor = FeedCursor(cursor)
        let names = Set(cursor.positions.keys).union(cursor.horizons.keys).sorted()
        let horizons = try await garage.retrieve(ScopeHorizon.self, identifiers: names)
        return zip(names, horizons).map { name, horizon in
            let position = cursor.positions[name] ?? 0, began = cursor.horizons[name] ?? 0, current = horizon?.position ?? 0
            return SyncCursorScope(scope: name, position: position, beganAtHorizon: began, horizon: current,
                                   rebases: position > 0 && current > began && position < current)
        }
    }
}

/// One scope of a sync server's feeds, for an operator: see ``SyncServer/scopes()``.
public struct SyncScope: Sendable, Hashable, Codable {
    /// The scope's name, as the rules give it.
    public var name: String
    /// The objects in it now.
    public var objects = 0
    /// The deletions in its feed, not yet purged.
    public var tombstones = 0
    /// The last position taken in its feed.
    public var position: Int64 = 0
    /// The last position whose tombstones were purged (or past which a rebase was forced).
    public var horizon: Int64 = 0

    /// A scope named `name`, with nothing in it yet.
    public init(name: String) {
        self.name = name
    }
}

/// What a device's cursor says of one scope: see ``SyncServer/describe(cursor:)``.
public struct SyncCursorScope: Sendable, Hashable, Codable {
    /// The scope.
    public var scope: String
    /// The position the device's downloads reached.
    public var position: Int64
    /// The scope's horizon when the device began reading it.
    public var beganAtHorizon: Int64
    /// The scope's horizon now.
    public var horizon: Int64
    /// Whether the device's next download is answered "rebase".
    public var rebases: Bool
}
