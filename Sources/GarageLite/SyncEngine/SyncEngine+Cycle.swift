import Foundation
import GarageLiteCore

/// One type a ``SyncEngine`` syncs, and how it merges the conflicts of its objects.
///
/// ```swift
/// SyncEngine(garage: garage, transport: api, types: [
///     .of(Note.self),                                            // property by property, local wins
///     .of(Notebook.self, merge: .fields(bothChanged: .serverWins)),
/// ])
/// ```
public struct SyncedType: Sendable {
    let cycle: @Sendable (SyncEngine, inout SyncEngineReport) async throws -> Void
    let changes: @Sendable (Garage) -> AsyncStream<[GarageChange]>
    let pending: @Sendable (Garage) async throws -> Int
    let typeName: @Sendable (Garage) throws -> String

    /// The objects of type `T`, whose conflicts `merge` resolves (by default property by
    /// property: a property changed on one side only is taken from that side, one changed on
    /// both is the local edit's).
    public static func of<T: Codable & Syncable & SendableMetatype>(_ type: T.Type, merge: SyncMerge<T> = .fields()) -> SyncedType {
        SyncedType(
            cycle: { engine, report in try await engine.cycle(T.self, merge: merge, into: &report) },
            changes: { $0.changes(of: T.self) },
            pending: { try await $0.count(T.self, withStatus: .notSynced) },
            typeName: { try $0.storedTypeName(T.self) })
    }
}

/// Settings a sync engine keeps in the store it syncs: the download cursor of each type.
enum SyncEngineSettings: SettingsNamespace {
    static let id = "garage-sync-engine"

    static func cursor(_ typeName: String) -> SettingsKey<SyncEngineSettings, String?> {
        SettingsKey(id: "cursor-\(typeName)", defaultValue: nil)
    }

    /// The store's device identifier (``SyncChangeID/device``), chosen at its first upload.
    static let device = SettingsKey<SyncEngineSettings, String?>(id: "device", defaultValue: nil)

    /// The rebase of `typeName` in progress, when one is: its generation, which names its notes.
    static func rebase(_ typeName: String) -> SettingsKey<SyncEngineSettings, String?> {
        SettingsKey(id: "rebase-\(typeName)", defaultValue: nil)
    }
}

/// What one page of a rebase received: parked with the page, so that a rebase killed midway
/// resumes knowing what it received before; the objects no page received are deleted at its end.
struct RebaseNotes: Codable, Identifiable, Sendable, StoredTypeNamed {
    static let storedTypeName = "GarageLite.SyncEngineRebaseNotes"

    /// `typeName␟generation/page`.
    var id: String
    var identifiers: [String]

    /// What the identifiers of the notes of `typeName`'s rebase `generation` start with.
    static func prefix(_ typeName: String, _ generation: String) -> String { typeName + "\u{1F}" + generation + "/" }
}

extension SyncEngine {
    /// Uploads and downloads the objects of `T`: a round uploads every change, then downloads;
    /// another round follows while conflicts were merged (their merges are to upload), at
    /// most ``Configuration/maximumRounds``.
    func cycle<T: Codable & Syncable & SendableMetatype>(_ type: T.Type, merge: SyncMerge<T>,
                                                           into report: inout SyncEngineReport) async throws {
        let typeName = try garage.storedTypeName(T.self)
        var uploads: [String: Int] = [:]        // how many times this sync uploaded each object
        for _ in 1...max(1, configuration.maximumRounds) {
            let merged = report.conflicts.count
            try await upload(T.self, typeName, merge, &uploads, &report)
            try await download(T.self, typeName, merge, &report)
            if report.conflicts.count == merged { break }
            if try await garage.count(T.self, withStatus: .notSynced) == 0 { break }
        }
        let held = try await garage.heldObjects(T.self)
        if !held.isEmpty { report.held[typeName] = held }
    }

    /// Claims and uploads batches until none is left (or only objects uploaded
    /// ``Configuration/maximumRounds`` times by this sync).
    private func upload<T: Codable & Syncable & SendableMetatype>(
        _ type: T.Type, _ typeName: String, _ merge: SyncMerge<T>, _ uploads: inout [String: Int],
        _ report: inout SyncEngineReport
    ) async throws {
        let total = try await garage.count(T.self, withStatus: .notSynced)
        var done = 0
        while true {
            try Task.checkCancellation()
            let claim = try await garage.run(garage.claiming(T.self, limit: configuration.batchSize, status: .notSynced,
                                                             withBases: true))
            for failure in claim.failures {
                report.unreadable[ObjectKey(typeName: typeName, identifier: failure.identifier)] = "\(failure.error)"
            }
            if claim.isEmpty { return }
            update { $0.activity = .uploading(typeName: typeName, done: done, total: max(total, done + claim.keys.count)) }
            let identifiers = claim.identifiers + claim.deletions
            if identifiers.allSatisfy({ uploads[$0, default: 0] >= configuration.maximumRounds }) {
                try await garage.release(claim)      // conflicting again and again: next sync
                return
            }
            for identifier in identifiers { uploads[identifier, default: 0] += 1 }
            let results = try await uploading(claim, typeName)
            // The server has what it accepted: the claim ends whatever the cancellation.
            let now = Date()
            var conflicts: [T] = [], conflictVersions: [String?] = [], deletedOnServer: [ObjectKey: String?] = [:]
            var mergedOnServer: [SyncChange<T>] = []
            var ends: [String: Store.ClaimEnd] = [:]
            let deleted = Set(claim.deletions)
            func refuse(_ identifier: String, _ reason: String) {
                ends[identifier] = .failed(error: reason, retryAt: now.addingTimeInterval(configuration.retryAfter))
                report.refused[ObjectKey(typeName: typeName, identifier: identifier)] = reason
            }
            for identifier in identifiers {
                switch results[identifier] {
                case .accepted(let version)?:
                    ends[identifier] = .completed(version: version)
                case .merged(let object, let version)? where !deleted.contains(identifier):
                    // Taken as the server's merge: the upload is done, and the merge is the
                    // server's version of it, kept below (an edit made meanwhile merged with it).
                    ends[identifier] = .completed(version: version)
                    mergedOnServer.append(SyncChange(identifier: identifier, object: object, version: version))
                case .merged(let object, let version)?:
                    // A deletion is never merged: a server that says so holds the object, as
                    // in a conflict.
                    ends[identifier] = .conflicted(retryAt: now)
                    conflicts.append(object)
                    conflictVersions.append(version)
                case .conflict(nil, let version)? where deleted.contains(identifier):
                    ends[identifier] = .completed(version: version)    // deleted on both sides
                case .conflict(let current, let version)?:
                    // Merged below, and uploaded again at once: not held back.
                    ends[identifier] = .conflicted(retryAt: now)
                    if let current {
                        conflicts.append(current)
                        conflictVersions.append(version)
                    } else {
                        deletedOnServer[ObjectKey(typeName: typeName, identifier: identifier)] = version
                    }
                case .failed(let reason)?:
                    refuse(identifier, reason)
                case nil:
                    refuse(identifier, "the server did not answer for it")
                }
            }
            let decided = ends
            report.uploads.append(try await garage.ending(claim, "complete") { decided[$0] ?? .released })
            // What the server took, to name it if a download replaces it before it comes back.
            try await rememberUploads(claim, results, typeName)
            if !mergedOnServer.isEmpty {
                // The server's merges of this device's uploads: parked as the server's, and the
                // properties of the uploads they hold otherwise reported.
                let parked = try await garage.parkDownloaded(mergedOnServer.compactMap(\.object), versions: mergedOnServer.map(\.version),
                                                             onConflict: .threeWay(merge))
                report.downloads.append(parked)
                report.replaced += try await replacedUploads(by: mergedOnServer, applied: Set(parked.applied), typeName)
            }
            // The server's versions, merged with the local ones.
            if !conflicts.isEmpty {
                report.downloads.append(try await garage.parkDownloaded(
                    conflicts, versions: conflictVersions, onConflict: .threeWay(merge)))
            }
            if !deletedOnServer.isEmpty {
                // Deleted on the server, edited here: the edit wins, uploaded again as based on
                // the deletion's version, so that the server takes it.
                var kept = DownloadReport()
                kept.conflicts = try await garage.run(garage.store.recordingServerVersions(deletedOnServer)).map {
                    DownloadConflict(object: $0, localStatus: .notSynced, wasClaimed: false, resolution: .keptLocal)
                }
                report.downloads.append(kept)
            }
            done += identifiers.count
            update { $0.activity = .uploading(typeName: typeName, done: done, total: max(total, done)) }
        }
    }

    /// Sends a claim's batch, renewing the claim while the server works on it. A failure or a
    /// cancellation gives the batch back as it was: a transport's error (the server can't be
    /// reached, say) says nothing of the objects, and an outage must hold none of them; the
    /// engine's backoff paces the retries. An object the server can't take is answered
    /// ``UploadResult/failed(_:)``: that counts.
    private func uploading<T: Codable & Syncable & SendableMetatype>(_ claim: Claim<T>, _ typeName: String) async throws -> UploadResults<T> {
        let renewal = renewing(claim)
        defer { renewal.cancel() }
        do {
            let device = try await garage.updateValue(for: SyncEngineSettings.device) { $0 ?? UUID().uuidString } ?? ""
            // The status is this device's (the claim says .syncing): not the server's business.
            var edits: [SyncChange<T>] = []
            for (index, var object) in claim.objects.enumerated() {
                object.syncStatus = .undetermined
                edits.append(SyncChange(identifier: claim.identifiers[index], object: object, version: claim.serverVersions[index],
                                        changeID: SyncChangeID(device: device, revision: claim.revisions[index])))
            }
            let deletions = claim.deletions.indices.map {
                SyncChange<T>(identifier: claim.deletions[$0], object: nil, version: claim.deletionVersions[$0],
                              changeID: SyncChangeID(device: device, revision: claim.deletionRevisions[$0]))
            }
            return try await transport.upload(UploadBatch(typeName: typeName, changes: edits + deletions))
        } catch {
            try await garage.release(claim)
            if error is CancellationError || Task.isCancelled { throw CancellationError() }
            throw error
        }
    }

    /// A task that renews `claim` every third of the lease until cancelled.
    private func renewing<T>(_ claim: Claim<T>) -> Task<Void, Never> {
        let garage = garage, ticket = claim.ticket
        let interval = UInt64(max(0.01, configuration.lease / 3) * 1_000_000_000)
        return Task {
            while !Task.isCancelled {
                try? await Task.sleep(nanoseconds: interval)
                if Task.isCancelled { return }
                _ = try? await garage.run(garage.store.renewingClaim(ticket, at: Date()))
            }
        }
    }

    /// Downloads the server's changes after the stored cursor, page after page, and stores
    /// the cursor with each page applied. One engine of a store downloads a type at a time (a
    /// lock in the store, renewed with each page): another engine's older page, applied after a
    /// newer one, would undo it and move the cursor back. An engine that finds the lock taken
    /// leaves the download to its holder.
    private func download<T: Codable & Syncable & SendableMetatype>(
        _ type: T.Type, _ typeName: String, _ merge: SyncMerge<T>, _ report: inout SyncEngineReport
    ) async throws {
        let lock = "sync-engine download \(typeName)"
        let owner = ClaimOwner.current.claimText()
        func holdsLock() async throws -> Bool {
            let now = Date()
            return try await garage.run(garage.store.takingLock(lock, owner: owner, at: now,
                                                                staleBefore: now.addingTimeInterval(-configuration.lease)))
        }
        guard try await holdsLock() else { return }
        do {
            try await downloading(T.self, typeName, merge, &report, holdsLock: holdsLock)
        } catch {
            _ = try? await garage.run(garage.store.releasingLock(lock, owner: owner))
            throw error
        }
        try await garage.run(garage.store.releasingLock(lock, owner: owner))
    }

    private func downloading<T: Codable & Syncable & SendableMetatype>(
        _ type: T.Type, _ typeName: String, _ merge: SyncMerge<T>, _ report: inout SyncEngineReport,
        holdsLock: () async throws -> Bool
    ) async throws {
        let key = SyncEngineSettings.cursor(typeName), rebaseKey = SyncEngineSettings.rebase(typeName)
        var cursor = try await garage.value(for: key)
        // A rebase in progress (a process killed during one): it goes on from its cursor.
        var rebase = try await garage.value(for: rebaseKey)
        // At a rebase's end: the objects no page received, with the server version each was
        // based on then, and those received since.
        var leftOut: [String: String?]?
        // This store's device (its uploads, before this download, chose it): read once, not a page.
        let device = try await garage.value(for: SyncEngineSettings.device)
        var received = 0
        // The next page, asked for while this one is applied (the server reads and sends it
        // while this store writes): `nil` when the loop asks itself.
        var prefetched: DownloadBatch<T>?
        while true {
            try Task.checkCancellation()
            let batch: DownloadBatch<T>
            if let next = prefetched {
                (batch, prefetched) = (next, nil)
            } else {
                batch = try await transport.download(DownloadRequest<T>(typeName: typeName, cursor: cursor))
            }
            // Still this engine's download (its lease renewed), from the cursor it asked after.
            guard try await holdsLock(), try await garage.value(for: key) == cursor else { return }
            if batch.rebase {
                // The server purged deletions after the cursor: everything again, from no cursor.
                // The generation first: a process killed between the two writes resumes a rebase.
                try await forgetRebases(of: typeName)
                let generation = UUID().uuidString
                try await garage.set(generation, for: rebaseKey)
                try await garage.set(nil, for: key)
                (rebase, cursor, leftOut) = (generation, nil, nil)
                if !report.rebased.contains(typeName) { report.rebased.append(typeName) }
                continue
            }
            let edits = batch.changes.filter { $0.object != nil }
            let deletions = batch.changes.filter { $0.object == nil }.map(\.identifier)
            // The server's versions that came from this store's own changes (a SyncServer says
            // which): one changed here again since is no news, and stays as it is here.
            let ownRevisions = Dictionary(edits.compactMap { change in
                change.changeID.flatMap { $0.device == device ? (ObjectKey(typeName: typeName, identifier: change.identifier), $0.revision) : nil }
            }, uniquingKeysWith: max)
            var notes: [(record: any Encodable & Sendable, identifier: String)] = []
            if let rebase, !edits.isEmpty {
                let id = RebaseNotes.prefix(typeName, rebase) + UUID().uuidString
                notes.append((RebaseNotes(id: id, identifiers: edits.map(\.identifier)), id))
            }
            // The next page, while this one is applied: it is asked after this page's cursor,
            // which this page's transaction stores (checked above when it arrives).
            let nextCursor = batch.hasMore && !batch.changes.isEmpty ? batch.cursor : nil, asksNext = nextCursor != nil
            async let next = asksNext ? transport.download(DownloadRequest<T>(typeName: typeName, cursor: nextCursor)) : nil
            // The page and the cursor after it, in one transaction: a page is applied once,
            // whenever the process is killed, and the next request asks after it.
            let page = try await garage.applyDownloadPage(
                edits: edits.compactMap(\.object), versions: edits.map(\.version), ownRevisions: ownRevisions,
                deletions: deletions, onConflict: .threeWay(merge), settings: batch.cursor.map { [(key, $0)] } ?? [],
                rebasing: rebase != nil, alsoParking: notes)
            if !edits.isEmpty { report.downloads.append(page.edits) }
            if !deletions.isEmpty { report.downloads.append(page.deletions) }
            report.replaced += try await replacedUploads(by: batch.changes, applied: Set(page.edits.applied), typeName)
            if let next = batch.cursor { cursor = next }
            for change in batch.changes { leftOut?[change.identifier] = nil }
            received += batch.changes.count
            if received > 0 { update { $0.activity = .downloading(typeName: typeName, received: received) } }
            prefetched = try await next
            guard !asksNext else { continue }
            guard !batch.hasMore || batch.changes.isEmpty else { continue }
            guard let generation = rebase else { return }
            guard let gone = leftOut else {
                // The objects no page received, and the version each is based on now; then one
                // more request, for what was uploaded before these versions were read: an
                // object uploaded after keeps a newer version, and is not deleted.
                leftOut = try await objectsLeftOut(T.self, typeName, generation)
                continue
            }
            // The deletions and the rebase's end, in one transaction: a process killed after it
            // has no rebase to resume, one killed before resumes it with its notes whole.
            let deleted = try await garage.applyDownloadPage(
                edits: [T](), versions: [], ownRevisions: [:], deletions: gone.keys.sorted(), onConflict: .threeWay(merge),
                settings: [(rebaseKey, nil)], expectedVersions: gone)
            if !gone.isEmpty { report.downloads.append(deleted.deletions) }
            try await forgetRebases(of: typeName)
            return
        }
    }

    /// The `.synced` objects of `T` that no page of the rebase `generation` received, with the
    /// server version each is based on.
    private func objectsLeftOut<T: Codable & Syncable & SendableMetatype>(_ type: T.Type, _ typeName: String,
                                                                          _ generation: String) async throws -> [String: String?] {
        let prefix = RebaseNotes.prefix(typeName, generation)
        let received = Set(try await garage.retrieveAll(RebaseNotes.self).filter { $0.id.hasPrefix(prefix) }.flatMap(\.identifiers))
        var leftOut: [String: String?] = [:]
        for identifier in try await garage.identifiers(of: T.self, withStatus: .synced) where !received.contains(identifier) {
            leftOut[identifier] = try await garage.metadata(T.self, identifier: identifier)?.serverVersion
        }
        return leftOut
    }

    /// Deletes the notes of the rebases of `typeName` (the one that ended, those a kill left).
    private func forgetRebases(of typeName: String) async throws {
        for notes in try await garage.retrieveAll(RebaseNotes.self) where notes.id.hasPrefix(typeName + "\u{1F}") {
            _ = try await garage.delete(RebaseNotes.self, identifier: notes.id)
        }
    }
}

extension Garage {
    /// Ends `claim`, each object as `end` says.
    func ending<T>(_ claim: Claim<T>, _ operation: String,
                   _ end: @escaping @Sendable (String) -> Store.ClaimEnd) async throws -> ClaimReport {
        try await run(store.endingClaim(claim.ticket, operation, end: end))
    }
}
