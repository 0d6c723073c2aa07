// The work behind the entry points of Garage+Downloads.swift (the façade, at the root): the store
// calls they run and their helpers. Nothing here is public; the root files hold the API.
import Foundation
import GarageLiteCore

extension Garage {
    /// Parks downloaded `objects` with their server versions (the sync engine's downloads).
    /// `ownRevisions` names the objects whose server version came from this store's own change
    /// at that revision: one changed here again since (a local revision at least as high, still
    /// to upload) keeps its local version, since the download is no news to it.
    func parkDownloaded<T: Codable & SendableMetatype>(
        _ objects: [T], versions: [String?], ownRevisions: [ObjectKey: Int64] = [:], onConflict: ConflictResolution<T>
    ) async throws -> DownloadReport {
        try await run(sealingWithCurrentKey {
            StoreCall(try self.parkingDownloaded(objects, versions: versions, ownRevisions: ownRevisions, onConflict: onConflict))
        })
    }

    /// Parks `objects`, as ``parkDownloaded(_:onConflict:)-74tja`` does, recording for each the
    /// server's version `versions` gives (the sync engine's downloads).
    func parkingDownloaded<T: Codable & SendableMetatype>(
        _ objects: [T], versions: [String?] = [], ownRevisions: [ObjectKey: Int64] = [:], onConflict: ConflictResolution<T>
    ) throws -> StoreWork<DownloadReport> {
        let edits = try downloadedRows(objects, versions: versions, ownRevisions: ownRevisions, onConflict: onConflict)
        let count = objects.count
        return store.applyingDownloadPage(Store.DownloadPage(edits: edits, pending: pendingChanges()),
                                          operation: "park \(count) downloaded objects").map { $0[0] }
    }

    /// The rows of downloaded `objects`, and how a conflict of one with a local edit is decided.
    func downloadedRows<T: Codable & SendableMetatype>(
        _ objects: [T], versions: [String?], ownRevisions: [ObjectKey: Int64], onConflict: ConflictResolution<T>
    ) throws -> Store.DownloadedRows {
        let configuration = configuration()
        let graph = configuration.encoder()
        let roots = try objects.map { try graph.encodeRoot($0) }
        let versionOf = Dictionary(zip(roots, versions).compactMap { root, version in version.map { (root, $0) } },
                                   uniquingKeysWith: { $1 })
        let rows: RowStream.Batch = try graph.rows.map { row in
            var (key, payload) = try configuration.encryption.seal(row)
            payload.syncStatus = .synced
            payload.isDownloaded = true
            payload.serverVersion = versionOf[key]
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
                // nothing to merge with. The server's edit wins: nothing is lost.
                guard let localRow = try local.row(key), let downloadedRow = try downloaded.row(key) else {
                    return .takeDownloaded
                }
                return try .replace(configuration.mergedRows(merge(
                    configuration.decode(T.self, localRow, with: configuration.decoder(local)),
                    configuration.decode(T.self, downloadedRow, with: configuration.decoder(downloaded)))))
            }
        case .threeWay(let merge):
            resolve = { key, local, downloadedView in
                let downloaded = downloadedView()
                guard let localRow = try local.row(key), let downloadedRow = try downloaded.row(key) else {
                    return .takeDownloaded
                }
                // The base is in the row's encryption, for its key: read as the row's data, its
                // children as theirs. Each version has a decoder of its own: one decoder gives one
                // instance per object, and the base and the local version of a class are two.
                let base = try local.statements.rowOrTombstone(key, for: .all)?.base.flatMap { data -> T? in
                    var row = localRow
                    row.data = data
                    return try? configuration.decode(T.self, row, with: configuration.decoder(local, bases: true))
                }
                let mine = try configuration.decode(T.self, localRow, with: configuration.decoder(local))
                let theirs = try configuration.decode(T.self, downloadedRow, with: configuration.decoder(downloaded))
                // The status is the store's, not a property either side changed.
                let merged: (object: T, discarded: [String])
                do {
                    merged = try merge.merge(base: base.map(Self.withoutStatus), local: Self.withoutStatus(mine),
                                             downloaded: Self.withoutStatus(theirs))
                } catch {
                    return .unmerged("\(error)")
                }
                // A merge that is the server's version has nothing to upload.
                if try Self.sameJSON(merged.object, Self.withoutStatus(theirs)) { return .mergedIntoDownloaded(discarded: merged.discarded) }
                var rows = try configuration.mergedRows(merged.object)
                // The merge is based on the downloaded version, which the server has.
                if let index = rows.firstIndex(where: { $0.0 == key }) {
                    rows[index].1.base = downloadedRow.data
                    rows[index].1.serverVersion = versionOf[key]
                }
                return .replace(rows, discarded: merged.discarded)
            }
        case .resolve(let decide):
            resolve = { key, local, downloadedView in
                let downloaded = downloadedView()
                guard let downloadedRow = try downloaded.row(key) else { return .keepLocal }
                let localSide = try configuration.conflictSide(T.self, key, in: local)
                let outcome = try decide(localSide, .edited(
                    configuration.decode(T.self, downloadedRow, with: configuration.decoder(downloaded))))
                return try configuration.decision(outcome)
            }
        }
        guard !ownRevisions.isEmpty else { return Store.DownloadedRows(rows: rows, roots: roots, resolve: resolve) }
        // This store's own change, come back after it changed the object again (an edit whose
        // answer was lost, then a deletion): decided in the write transaction, against the row
        // as it is then, so that no local change slips in between.
        let decide = resolve
        return Store.DownloadedRows(rows: rows, roots: roots) { key, local, downloaded in
            if let own = ownRevisions[key], let row = try local.statements.rowOrTombstone(key, for: .metadata), row.revision >= own {
                return .keepLocal
            }
            return try decide(key, local, downloaded)
        }
    }

    /// `object` with the status `.notSynced` when it is `Syncable` (a merge's, whatever its sides said).
    static func withoutStatus<T>(_ object: T) -> T {
        guard let syncable = object as? any Syncable else { return object }
        return syncable.settingSyncStatus(.notSynced) as! T
    }

    func deletingDownloaded<T, ID: GarageIdentifier>(
        _ type: T.Type, _ identifiers: [ID], _ onConflict: ConflictResolution<T>
    ) throws -> StoreWork<DownloadReport> {
        let deletions = try deletedOnServer(T.self, identifiers, onConflict)
        let count = identifiers.count
        return store.applyingDownloadPage(Store.DownloadPage(deletions: deletions, pending: pendingChanges()),
                                          operation: "delete \(count) objects deleted on the server").map { $0[0] }
    }

    /// The keys of objects deleted on the server, and how a conflict with a local edit is decided.
    func deletedOnServer<T, ID: GarageIdentifier>(
        _ type: T.Type, _ identifiers: [ID], _ onConflict: ConflictResolution<T>
    ) throws -> Store.DeletedOnServer {
        let typeName = try storedTypeName(T.self)
        let keys = try identifiers.map { ObjectKey(typeName: typeName, identifier: try Identity.string(fromID: $0)) }
        let resolve: @Sendable (ObjectKey, StoreView) throws -> Store.DownloadDecision
        switch onConflict {
        case .keepLocal, .merge, .threeWay:
            // A deletion has nothing to merge with: the local edit wins, and its upload
            // re-creates the object.
            resolve = { _, _ in .keepLocal }
        case .takeDownloaded:
            resolve = { _, _ in .takeDownloaded }
        case .resolve(let decide):
            guard let decodable = T.self as? any (Decodable & SendableMetatype).Type else {
                throw GarageError.missingConformance("\(Identity.displayName(T.self)) (Decodable, for .resolve)")
            }
            let configuration = configuration()
            resolve = { key, local in
                let outcome = try decide(try configuration.conflictSide(decodable, key, in: local, as: T.self), .deleted(nil))
                return try configuration.decision(outcome)
            }
        }
        return Store.DeletedOnServer(keys: keys, resolve: resolve)
    }

}

extension Garage.Configuration {
    /// The rows that park `merged`, a resolution's version: its root as the app's edit,
    /// `.notSynced`, for the next sync job to upload.
    func mergedRows<T: Encodable>(_ merged: T) throws -> RowStream.Batch {
        let graph = encoder()
        let root = try graph.encodeRoot(merged)
        return try graph.rows.map { row in
            var (key, payload) = try encryption.seal(row)
            // The root is the edit to upload. A child keeps its row's status (the merge took its
            // status from one side or the other: a child's local edit, said `.synced` by the
            // downloaded side, must not be marked synced), `.notSynced` when the merge changes it.
            payload.syncStatus = key == root ? .notSynced : nil
            return (key, payload)
        }
    }

    /// What the local side of a conflict did to `key`: edited it (the version stored), or
    /// deleted it (the version its tombstone kept, when it still decodes).
    func conflictSide<T: Decodable & SendableMetatype>(_ type: T.Type, _ key: ObjectKey, in view: StoreView) throws -> ConflictSide<T> {
        if let row = try view.row(key) { return .edited(try decode(T.self, row, with: decoder(view))) }
        guard let tombstone = try view.statements.rowOrTombstone(key, for: .content), !tombstone.data.isEmpty else {
            return .deleted(nil)
        }
        return .deleted(try? decode(T.self, tombstone.deletedVersion, with: decoder(view)))
    }

    /// ``conflictSide(_:_:in:)`` for a type known to be decodable only at run time, as `T`.
    func conflictSide<D: Decodable & SendableMetatype, T>(_ decodable: D.Type, _ key: ObjectKey, in view: StoreView,
                                                          as type: T.Type) throws -> ConflictSide<T> {
        switch try conflictSide(D.self, key, in: view) {
        case .edited(let object): return .edited(object as! T)
        case .deleted(let object): return .deleted(object.map { $0 as! T })
        }
    }

    /// What the store does for `outcome`.
    func decision<T>(_ outcome: ConflictOutcome<T>) throws -> Store.DownloadDecision {
        switch outcome {
        case .keepLocal: return .keepLocal
        case .takeDownloaded: return .takeDownloaded
        case .merged(let merged):
            guard let encodable = merged as? any Encodable else {
                throw GarageError.missingConformance("\(Identity.displayName(T.self)) (Encodable, for .merged)")
            }
            return .replace(try mergedRows(encodable))
        }
    }

}
