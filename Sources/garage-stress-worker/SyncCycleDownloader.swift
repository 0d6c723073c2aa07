// The sync cycle's downloader: the server's side of SyncStressTests' and PostgresStressTests'
// sync-cycle tests (see SyncCycle.swift for the files, the log and the other processes).
import Foundation
import GarageLite
import GarageStressModels

// MARK: - Downloader (the server's side)

/// Plays the server's side until the stop file appears: edits the `serverEdit` of editors'
/// documents on the server, creates, edits and deletes its own documents `s-<n>`, and applies
/// the server's changes to the local store with `parkDownloaded` / `deleteDownloaded`
/// (`.keepLocal`); a change that conflicts with a local edit stays in the feed, to be
/// downloaded again once the edit is uploaded.
///
/// A step that a server restart interrupted is made again from its start (each is: a server
/// edit or a download made twice is only one more; what the first made is not logged).
func runSyncDownloader(files: SyncFiles, name: String, seed: String, count: Int, errors: Errors) throws {
    guard let append = AppendLog(path: files.log), let lock = ServerLock(path: files.lock) else { throw POSIXError(.EIO) }
    let log = SyncLog(log: append, who: name, errors: errors)
    let restarts = ServerRestarts(files: files, who: name)
    let garage = try restarts.retrying("open the store") { try files.openStore() }
    let server = try restarts.retrying("open the server") { try files.openServer() }
    var random = SplitMix64(seed: seed)
    var versions = [Int](repeating: 0, count: count)    // of the server's own documents
    var downloads = 0, conflicts = 0
    let started = Date()
    while !files.isStopped {
        if Date().timeIntervalSince(started) > 300 {
            errors.report("\(name): still running after 5 minutes")
            break
        }
        let roll = Int.random(in: 0..<100, using: &random)
        try lock.withLock { try restarts.retrying("a step of the server's (\(roll))") {
            if roll < 30 {
                // A server-side edit of an editor's document: its serverEdit only.
                let ids = try server.identifiers(of: SyncStressServerDocument.self).filter { !$0.hasPrefix("s-") }
                guard let id = ids.randomElement(using: &random),
                      var document = try server.retrieve(SyncStressServerDocument.self, identifier: id) else { return }
                document.serverEdit += 1
                try server.transaction {
                    try server.park(document)
                    try server.park(SyncStressServerChange(id: id))
                }
                log.write("SEDIT", id, "\(document.version)", "\(document.serverEdit)")
            } else if roll < 50 {
                // The server's own documents: created, edited, deleted and created again.
                let index = Int.random(in: 0..<count, using: &random)
                let id = "s-\(index)"
                let exists = try server.retrieve(SyncStressServerDocument.self, identifier: id) != nil
                let kind = !exists ? "SCREATE" : Int.random(in: 0..<100, using: &random) < 30 ? "SDELETE" : "SUPDATE"
                try server.transaction {
                    if kind == "SDELETE" {
                        try server.delete(SyncStressServerDocument.self, identifier: id)
                    } else {
                        versions[index] += 1
                        try server.park(SyncStressServerDocument(id: id, version: versions[index], body: "\(id) v\(versions[index])",
                                                                 serverEdit: versions[index]))
                    }
                    try server.park(SyncStressServerChange(id: id))
                }
                log.write(kind, id, "\(versions[index])")
            } else if roll < 90 {
                let changes = try server.retrieveAll(SyncStressServerChange.self).map(\.id).shuffled(using: &random).prefix(8)
                if changes.isEmpty { return }
                var present: [SyncStressDocument] = []
                var absent: [String] = []
                for id in changes {
                    if let document = try server.retrieve(SyncStressServerDocument.self, identifier: id) {
                        present.append(SyncStressDocument(id: id, version: document.version, body: document.body,
                                                          serverEdit: document.serverEdit, syncStatus: .synced))
                    } else {
                        absent.append(id)
                    }
                }
                var keep: Set<String> = []
                if !present.isEmpty {
                    log.write("DLBEGIN", logList(present.map { "\($0.id):\($0.version)" }))
                    let report = try garage.parkDownloaded(present)
                    let versionOf = Dictionary(uniqueKeysWithValues: present.map { ($0.id, $0.version) })
                    log.write("DOWNLOAD", logList(report.applied.map { "\($0):\(versionOf[$0] ?? -1)" }),
                              logList(report.conflicts.map { "\($0.object.identifier):\($0.localStatus.rawValue)" }))
                    keep.formUnion(report.conflicts.map(\.object.identifier))
                    check(report, downloaded: present.map(\.id), errors: errors, who: name)
                    downloads += 1
                    conflicts += report.conflicts.count
                }
                if !absent.isEmpty {
                    log.write("DLDELBEGIN", logList(absent))
                    let report = try garage.deleteDownloaded(SyncStressDocument.self, identifiers: absent)
                    log.write("DLDELETE", logList(report.deleted), logList(report.conflicts.map(\.object.identifier)))
                    keep.formUnion(report.conflicts.map(\.object.identifier))
                    check(report, downloaded: absent, errors: errors, who: name)
                    conflicts += report.conflicts.count
                }
                try server.transaction {
                    for id in changes where !keep.contains(id) {
                        try server.delete(SyncStressServerChange.self, identifier: id)
                    }
                }
            } else {
                // No edit is marked synced before the server has it: while the server is
                // locked, each local .synced editor document is there, at the same version.
                let synced = try garage.retrieveAll(SyncStressDocument.self, withStatus: .synced).filter { !$0.id.hasPrefix("s-") }
                for document in synced {
                    let copy = try server.retrieve(SyncStressServerDocument.self, identifier: document.id)
                    if copy?.version != document.version {
                        errors.report("\(name): \(document.id) is .synced at version \(document.version), the server has \(copy.map { "version \($0.version)" } ?? "nothing")")
                    }
                }
                log.write("SYNCCHECK", "\(synced.count)")
            }
        } }
        Thread.sleep(forTimeInterval: Double(Int.random(in: 1...6, using: &random)) / 1000)
    }
    print("STATS \(name): \(downloads) downloads, \(conflicts) conflicts")
}

/// A download's conflicts are local edits kept: of editors' documents only, never of the
/// server's own, which no one edits locally.
private func check(_ report: DownloadReport, downloaded: [String], errors: Errors, who: String) {
    for conflict in report.conflicts {
        if conflict.resolution != .keptLocal || conflict.object.identifier.hasPrefix("s-")
            || !(conflict.localStatus == .notSynced || conflict.localStatus == .syncing) {
            errors.report("\(who): unexpected download conflict \(conflict) (\(conflict.localStatus), claimed: \(conflict.wasClaimed))")
        }
    }
    let conflicted = Set(report.conflicts.map(\.object.identifier))
    if !Set(report.applied + report.deleted).isDisjoint(with: conflicted) {
        errors.report("\(who): a download both applied and kept \(report)")
    }
    for id in report.applied + report.deleted where !downloaded.contains(id) {
        errors.report("\(who): a download reported \(id), which it did not carry")
    }
}
