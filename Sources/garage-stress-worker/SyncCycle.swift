// The sync cycle under stress: the processes of SyncStressTests' sync-cycle test, which share
// one local store, one "server" store and one log. See main.swift for the command lines.
//
// Files, next to `<store-path>`:
//   <store-path>.server       the fake server: a garage of `SyncStressServerDocument`s, and of
//                             `SyncStressServerChange`s, the documents changed on the server
//                             that the downloader has not applied yet (its change feed)
//   <store-path>.server.lock  an flock(2) lock: the server handles one request at a time
//   <store-path>.log          the shared log (one line per event, O_APPEND, see below)
//   <store-path>.stop         created by the test at quiescence: jobs and downloader stop
//
// Identifiers: editor `<name>` owns `<name>-0` ..< `<name>-<count>`, and is the only one to
// change their content (version and body); the server changes only their `serverEdit`. The
// downloader owns `s-0` ..< `s-<count>`, which exist on the server only (created, edited and
// deleted there) and reach the local store by downloads only. Versions of an identifier only
// grow, across deletions and re-creations, so that "newer" is decidable.
//
// The log: `<KIND> <who> <time> <fields...>`, `<time>` the wall clock in seconds, lists
// comma-separated ("-" when empty), a version after a colon. A line is written after what it
// reports is committed, and an *intent* line (…ING) before a call whose effect a SIGKILL could
// leave unlogged, so that the replay can be tolerant in the right direction:
//   editor:     PARK <id> <version> create|edit|recreate      after the park commits
//               DELETE <id> <version>                         after the delete commits
//   job:        START <pid>
//               RECOVERING <interval>                          before releaseStaleClaims
//               RECOVERED <rows>                               after it
//               BEGIN <claim> <claim date> <id:version,...> <deleted ids>   after the claim commits
//               UPLOADING <claim>                              before the server transaction
//               UPLOADED <claim> <id:version,...> <deleted ids> <stale id:version:server version,...>
//                                                              after it commits: what the server has now
//               EXPIRED <claim> <age>                          the lease ran out before the upload: none
//               ENDING <claim> complete|fail|giveback|expired  before complete/release
//               END <claim> complete|release <synced> <notSynced> <deletionsUploaded> <keptByApp> <lost> <deleted>
//   downloader: SEDIT <id> <version> <serverEdit>              a server-side edit (serverEdit + 1)
//               SCREATE|SUPDATE|SDELETE <id> <version>         the server's own documents
//               DLBEGIN <id:version,...>                       before parkDownloaded (server locked)
//               DOWNLOAD <applied id:version,...> <kept-local conflicts id:status,...>
//               DLDELBEGIN <ids>                               before deleteDownloaded
//               DLDELETE <deleted ids> <kept-local conflicts>
//               SYNCCHECK <rows>                               every local .synced editor document
//                                                              is on the server, same version
//   the test:   KILL <job> (after the job died of SIGKILL); its final sync writes a job's and
//               the downloader's lines as `final`, and HELD <count> (objects held back at quiescence)
//
// The server is locked (flock) for every upload and download: a download reads the server and
// applies it locally while no upload runs, so it never applies a stale copy; an upload checks,
// while it holds the lock, that its claim is younger than the stale interval, so that a claim
// `releaseStaleClaims` may have handed to another job is never uploaded after that job's.
import Foundation
import GarageLite
import GarageStressModels

/// The upload failure of a job's failed batches.
struct FakeUploadError: Error, CustomStringConvertible {
    var description: String { "HTTP 503 (fake)" }
}

/// An flock(2) lock on a file, held around each request the fake server handles.
final class ServerLock {
    private let descriptor: Int32

    init?(path: String) {
        descriptor = open(path, O_RDWR | O_CREAT, 0o644)
        if descriptor < 0 { return nil }
    }

    deinit {
        close(descriptor)
    }

    func withLock<T>(_ body: () throws -> T) throws -> T {
        while flock(descriptor, LOCK_EX) != 0 {
            if errno != EINTR { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        }
        defer { flock(descriptor, LOCK_UN) }
        return try body()
    }
}

/// What one process writes to the shared log; a line it cannot write is an error.
struct SyncLog {
    let log: AppendLog
    let who: String
    let errors: Errors

    func write(_ kind: String, _ fields: String...) {
        let line = ([kind, who, "\(Date().timeIntervalSince1970)"] + fields).joined(separator: " ")
        if !log.append(line) { errors.report("\(who): cannot write the log: \(line)") }
    }
}

/// "-" for an empty list, its items comma-separated otherwise.
func logList(_ items: [String]) -> String {
    items.isEmpty ? "-" : items.joined(separator: ",")
}

/// The files of one sync-cycle run.
struct SyncFiles {
    let store: String
    var server: String { store + ".server" }
    var lock: String { store + ".server.lock" }
    var log: String { store + ".log" }
    var stop: String { store + ".stop" }
    var isStopped: Bool { FileManager.default.fileExists(atPath: stop) }
}

// MARK: - Editor

/// Edits, deletes and re-creates `<name>-0` ..< `<name>-<count>`, `operations` times in all,
/// checking before each operation that the document reads as this editor left it: downloads
/// may change its `serverEdit` only.
func runSyncEditor(files: SyncFiles, name: String, seed: String, count: Int, operations: Int, errors: Errors) throws {
    guard let append = AppendLog(path: files.log) else { throw POSIXError(.EIO) }
    let log = SyncLog(log: append, who: name, errors: errors)
    let garage = try Garage(path: files.store, busyTimeout: 30)
    var random = SplitMix64(seed: seed)
    var last = [Int](repeating: 0, count: count)     // the last version parked, 0: never
    var present = [Bool](repeating: false, count: count)
    var bodies = [String](repeating: "", count: count)
    for _ in 0..<operations {
        let index = Int.random(in: 0..<count, using: &random)
        let id = "\(name)-\(index)"
        let document = try garage.retrieve(SyncStressDocument.self, identifier: id)
        if present[index] {
            guard let document else {
                errors.report("\(name): \(id) is gone; last parked version \(last[index])")
                present[index] = false
                continue
            }
            if document.version != last[index] || document.body != bodies[index] {
                errors.report("\(name): \(id) reads version \(document.version) \"\(document.body)\", last parked \(last[index]) \"\(bodies[index])\"")
            }
            if Int.random(in: 0..<100, using: &random) < 20 {
                if !(try garage.delete(SyncStressDocument.self, identifier: id)) {
                    errors.report("\(name): deleting \(id) found nothing")
                }
                present[index] = false
                log.write("DELETE", id, "\(last[index])")
                if try garage.retrieve(SyncStressDocument.self, identifier: id) != nil {
                    errors.report("\(name): \(id) reads back after its deletion")
                }
            } else {
                var edited = document
                edited.version = last[index] + 1
                edited.body = "\(id) v\(edited.version)"
                edited.syncStatus = .notSynced
                try garage.park(edited)
                last[index] = edited.version
                bodies[index] = edited.body
                log.write("PARK", id, "\(edited.version)", "edit")
            }
        } else {
            if let document {
                errors.report("\(name): \(id) was deleted (or never parked) but reads version \(document.version)")
            }
            let created = SyncStressDocument(id: id, version: last[index] + 1, body: "\(id) v\(last[index] + 1)",
                                             serverEdit: 0, syncStatus: .notSynced)
            try garage.park(created)
            log.write("PARK", id, "\(created.version)", last[index] == 0 ? "create" : "recreate")
            last[index] = created.version
            bodies[index] = created.body
            present[index] = true
        }
        Thread.sleep(forTimeInterval: Double(Int.random(in: 0...4, using: &random)) / 1000)
    }
    for index in 0..<count {
        print("LAST \(name)-\(index) \(last[index]) \(present[index] ? "present" : "deleted")")
    }
}

// MARK: - Job

/// What an upload did: the versions the server now has of the claimed objects, the deletions
/// it made, and the objects it has newer versions of (which must never happen).
struct SyncUpload {
    var uploaded: [String] = []     // id:version
    var deleted: [String] = []
    var stale: [String] = []        // id:version:server version
    var written = 0
}

/// Uploads a claim to the server, in one server transaction: each object newer than the
/// server's copy (or missing there) replaces it, and each deletion deletes it.
func uploadClaim(_ claim: Claim<SyncStressDocument>, to server: Garage) throws -> SyncUpload {
    var upload = SyncUpload()
    var newer: [SyncStressServerDocument] = []
    for document in claim.objects {
        let current = try server.retrieve(SyncStressServerDocument.self, identifier: document.id)
        if let current, current.version > document.version {
            upload.stale.append("\(document.id):\(document.version):\(current.version)")
            continue
        }
        if current?.version != document.version {
            newer.append(SyncStressServerDocument(id: document.id, version: document.version,
                                                  body: document.body, serverEdit: document.serverEdit))
        }
        upload.uploaded.append("\(document.id):\(document.version)")
    }
    try server.transaction {
        if !newer.isEmpty { try server.parkAll(newer) }
        for id in claim.deletions {
            try server.delete(SyncStressServerDocument.self, identifier: id)
            upload.deleted.append(id)
        }
    }
    upload.written = newer.count
    return upload
}

/// The fields of a BEGIN line.
func beginFields(_ claim: Claim<SyncStressDocument>) -> [String] {
    [claim.id, "\(claim.date.timeIntervalSince1970)",
     logList(claim.objects.map { "\($0.id):\($0.version)" }), logList(claim.deletions)]
}

/// The fields of an END line.
func endFields(_ claim: Claim<SyncStressDocument>, _ how: String, _ report: ClaimReport) -> [String] {
    [claim.id, how, logList(report.synced), logList(report.notSynced), logList(report.deletionsUploaded),
     logList(report.keptByApp), logList(report.lost), logList(report.deleted)]
}

/// Claims, uploads and completes batches until the stop file appears; fails some uploads
/// (released with a retry delay, counting a failed attempt), gives some batches back, and
/// recovers stale claims when it starts and every half interval.
func runSyncJob(files: SyncFiles, name: String, seed: String, staleInterval: TimeInterval, errors: Errors) throws {
    guard let append = AppendLog(path: files.log), let lock = ServerLock(path: files.lock) else { throw POSIXError(.EIO) }
    let log = SyncLog(log: append, who: name, errors: errors)
    let garage = try Garage(path: files.store, busyTimeout: 30)
    garage.maximumUploadAttempts = 3
    let server = try Garage(path: files.server, busyTimeout: 30)
    var random = SplitMix64(seed: seed)
    log.write("START", "\(getpid())")
    let started = Date()
    var lastRecovery = Date.distantPast
    var batches = 0, failed = 0, givenBack = 0, expired = 0, lost = 0
    while !files.isStopped {
        if Date().timeIntervalSince(started) > 300 {
            errors.report("\(name): still running after 5 minutes")
            break
        }
        if Date().timeIntervalSince(lastRecovery) > staleInterval / 2 {
            log.write("RECOVERING", "\(staleInterval)")
            let rows = try garage.releaseStaleClaims(olderThan: staleInterval)
            log.write("RECOVERED", "\(rows)")
            lastRecovery = Date()
        }
        let claim = try garage.claim(SyncStressDocument.self, limit: Int.random(in: 1...6, using: &random))
        if claim.isEmpty {
            Thread.sleep(forTimeInterval: 0.005)
            continue
        }
        batches += 1
        log.write("BEGIN", beginFields(claim).joined(separator: " "))
        if claim.objects.map(\.id) != claim.identifiers || Set(claim.identifiers + claim.deletions).count != claim.identifiers.count + claim.deletions.count {
            errors.report("\(name): claim \(claim.id) of \(claim.objects.map(\.id)) under \(claim.identifiers), deleting \(claim.deletions)")
        }
        for document in claim.objects where document.syncStatus != .syncing || document.id.hasPrefix("s-") {
            errors.report("\(name): claimed \(document.id) with status \(document.syncStatus)")
        }
        for id in claim.deletions where id.hasPrefix("s-") {
            errors.report("\(name): claimed the deletion of the server's \(id)")
        }
        if !claim.failures.isEmpty { errors.report("\(name): claim failures \(claim.failures)") }
        // The request takes a moment: a SIGKILL often lands here, leaving the claim stale.
        Thread.sleep(forTimeInterval: Double(Int.random(in: 0...20, using: &random)) / 1000)
        let roll = Int.random(in: 0..<100, using: &random)
        let how: String
        if roll < 15 {
            how = "fail"
        } else if roll < 20 {
            how = "giveback"
        } else {
            log.write("UPLOADING", claim.id)
            let upload: SyncUpload? = try lock.withLock {
                // The lease: a claim older than the stale interval may have been released and
                // taken by another job, whose upload may already be on the server.
                let age = Date().timeIntervalSince(claim.date)
                if age >= staleInterval * 0.9 {
                    log.write("EXPIRED", claim.id, "\(age)")
                    return nil
                }
                return try uploadClaim(claim, to: server)
            }
            if let upload {
                log.write("UPLOADED", claim.id, logList(upload.uploaded), logList(upload.deleted), logList(upload.stale))
                if !upload.stale.isEmpty { errors.report("\(name): the server has newer versions than claim \(claim.id): \(upload.stale)") }
                Thread.sleep(forTimeInterval: Double(Int.random(in: 0...5, using: &random)) / 1000)
                how = "complete"
            } else {
                how = "expired"
            }
        }
        log.write("ENDING", claim.id, how)
        let report: ClaimReport
        switch how {
        case "complete": report = try garage.complete(claim)
        case "fail": report = try garage.release(claim, retryAfter: 0.02, error: FakeUploadError())
        default: report = try garage.release(claim)
        }
        log.write("END", endFields(claim, how == "complete" ? "complete" : "release", report).joined(separator: " "))
        switch how {
        case "fail": failed += 1
        case "giveback": givenBack += 1
        case "expired": expired += 1
        default: break
        }
        lost += report.lost.count
        let ended = report.synced.count + report.notSynced.count + report.deletionsUploaded.count
            + report.keptByApp.count + report.lost.count + report.deleted.count
        if ended != claim.identifiers.count + claim.deletions.count {
            errors.report("\(name): ending claim \(claim.id) of \(claim.identifiers) deleting \(claim.deletions) reported \(report)")
        }
    }
    print("STATS \(name): \(batches) batches, \(failed) failed, \(givenBack) given back, \(expired) expired, \(lost) rows lost")
}

// MARK: - Downloader (the server's side)

/// Plays the server's side until the stop file appears: edits the `serverEdit` of editors'
/// documents on the server, creates, edits and deletes its own documents `s-<n>`, and applies
/// the server's changes to the local store with `parkDownloaded` / `deleteDownloaded`
/// (`.keepLocal`); a change that conflicts with a local edit stays in the feed, to be
/// downloaded again once the edit is uploaded.
func runSyncDownloader(files: SyncFiles, name: String, seed: String, count: Int, errors: Errors) throws {
    guard let append = AppendLog(path: files.log), let lock = ServerLock(path: files.lock) else { throw POSIXError(.EIO) }
    let log = SyncLog(log: append, who: name, errors: errors)
    let garage = try Garage(path: files.store, busyTimeout: 30)
    let server = try Garage(path: files.server, busyTimeout: 30)
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
        try lock.withLock {
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
        }
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

// MARK: - Entry point

/// Runs one process of the sync-cycle test; never returns.
func runSyncRole(storePath: String, role: String, arguments: [String]) -> Never {
    let errors = Errors()
    let files = SyncFiles(store: storePath)
    guard arguments.count == 3 else {
        print("ERROR usage: garage-stress-worker <store-path> \(role) <name> <seed> <argument>")
        exit(2)
    }
    let name = arguments[0], seed = arguments[1]
    do {
        switch role {
        case "sync-editor":
            let fields = arguments[2].split(separator: "x")
            guard fields.count == 2, let count = Int(fields[0]), let operations = Int(fields[1]), count > 0 else {
                print("ERROR sync-editor wants <objects>x<operations>, not \(arguments[2])")
                exit(2)
            }
            try runSyncEditor(files: files, name: name, seed: seed, count: count, operations: operations, errors: errors)
        case "sync-job":
            guard let interval = TimeInterval(arguments[2]), interval > 0 else {
                print("ERROR sync-job wants a stale interval in seconds, not \(arguments[2])")
                exit(2)
            }
            try runSyncJob(files: files, name: name, seed: seed, staleInterval: interval, errors: errors)
        case "sync-downloader":
            guard let count = Int(arguments[2]), count > 0 else {
                print("ERROR sync-downloader wants a number of server documents, not \(arguments[2])")
                exit(2)
            }
            try runSyncDownloader(files: files, name: name, seed: seed, count: count, errors: errors)
        default:
            print("ERROR unknown role \(role)")
            exit(2)
        }
    } catch {
        errors.report("\(role) \(name) threw: \(error)")
    }
    exit(errors.count == 0 ? 0 : 1)
}
