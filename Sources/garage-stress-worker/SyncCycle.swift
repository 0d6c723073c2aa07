// The sync cycle under stress: the processes of the sync-cycle tests (SyncStressTests on SQLite,
// PostgresStressTests on PostgreSQL), which share one local store, one "server" store and one
// log; the downloader is in SyncCycleDownloader.swift. See main.swift for the command lines.
//
// Files, next to `<store-path>` (on PostgreSQL, the two stores are schemas instead, and a
// process carries on through a restart of the server: see SyncCycleStores.swift):
//   <store-path>.server       the fake server: a garage of `SyncStressServerDocument`s, and of
//                             `SyncStressServerChange`s, the documents changed on the server
//                             that the downloader has not applied yet (its change feed)
//   <store-path>.restart      created by the test before it restarts the PostgreSQL server
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
//               the downloader's lines as `final`, and HELD <count> (objects held back at quiescence);
//               SERVER restarting|restarted around a restart of the PostgreSQL server
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

/// The files of one sync-cycle run, and where its stores are (SyncCycleStores.swift).
struct SyncFiles {
    let store: String
    /// The PostgreSQL schemas of the store and the server, instead of the files.
    var storeURL: String?
    var serverURL: String?
    var server: String { store + ".server" }
    var lock: String { store + ".server.lock" }
    var log: String { store + ".log" }
    var stop: String { store + ".stop" }
    /// Created by the test before it restarts the PostgreSQL server.
    var restart: String { store + ".restart" }
    var isStopped: Bool { FileManager.default.fileExists(atPath: stop) }
}

// MARK: - Editor

/// Edits, deletes and re-creates `<name>-0` ..< `<name>-<count>`, `operations` times in all,
/// checking before each operation that the document reads as this editor left it: downloads
/// may change its `serverEdit` only. A park or delete that a server restart interrupted is
/// followed by a read that tells whether it landed: it is logged if it did, made again if not.
func runSyncEditor(files: SyncFiles, name: String, seed: String, count: Int, operations: Int, errors: Errors) throws {
    guard let append = AppendLog(path: files.log) else { throw POSIXError(.EIO) }
    let log = SyncLog(log: append, who: name, errors: errors)
    let restarts = ServerRestarts(files: files, who: name)
    let garage = try restarts.retrying("open the store") { try files.openStore() }
    let editor = SyncEditorCalls(garage: garage, restarts: restarts, errors: errors, name: name)
    var random = SplitMix64(seed: seed)
    var last = [Int](repeating: 0, count: count)     // the last version parked, 0: never
    var present = [Bool](repeating: false, count: count)
    var bodies = [String](repeating: "", count: count)
    for _ in 0..<operations {
        let index = Int.random(in: 0..<count, using: &random)
        let id = "\(name)-\(index)"
        let document = try editor.read(id)
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
                try editor.delete(id, version: last[index])
                present[index] = false
                log.write("DELETE", id, "\(last[index])")
                if try editor.read(id) != nil {
                    errors.report("\(name): \(id) reads back after its deletion")
                }
            } else {
                var edited = document
                edited.version = last[index] + 1
                edited.body = "\(id) v\(edited.version)"
                edited.syncStatus = .notSynced
                try editor.park(edited, over: last[index])
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
            try editor.park(created, over: nil)
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

/// What became of a claim's upload.
enum SyncUploadOutcome {
    case uploaded(SyncUpload)
    /// The lease ran out first: nothing was sent.
    case expired
    /// A server restart interrupted it: the server may or may not have it.
    case interrupted
}

/// Claims, uploads and completes batches until the stop file appears; fails some uploads
/// (released with a retry delay, counting a failed attempt), gives some batches back, and
/// recovers stale claims when it starts and every half interval.
///
/// Through a server restart: a claim it interrupted is forgotten (if it committed, its rows
/// stay claimed by this live process until a recovery finds the claim stale); an upload it
/// interrupted is a failed upload; a recovery it interrupted is made again later; a claim's
/// end it interrupted is made again until it works (if the first one committed, the second
/// finds its rows no longer the claim's, and reports them lost).
func runSyncJob(files: SyncFiles, name: String, seed: String, staleInterval: TimeInterval, errors: Errors) throws {
    guard let append = AppendLog(path: files.log), let lock = ServerLock(path: files.lock) else { throw POSIXError(.EIO) }
    let log = SyncLog(log: append, who: name, errors: errors)
    let restarts = ServerRestarts(files: files, who: name)
    let garage = try restarts.retrying("open the store") { try files.openStore() }
    garage.maximumUploadAttempts = 3
    let server = try restarts.retrying("open the server") { try files.openServer() }
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
            if let rows = try restarts.attempt("releaseStaleClaims", { try garage.releaseStaleClaims(olderThan: staleInterval) }) {
                log.write("RECOVERED", "\(rows)")
                lastRecovery = Date()
            }
        }
        let limit = Int.random(in: 1...6, using: &random)
        let taken = try restarts.attempt("claim", { try garage.claim(SyncStressDocument.self, limit: limit) })
        guard let claim = taken, !claim.isEmpty else {
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
            let outcome: SyncUploadOutcome = try lock.withLock {
                // The lease: a claim older than the stale interval may have been released and
                // taken by another job, whose upload may already be on the server.
                let age = Date().timeIntervalSince(claim.date)
                if age >= staleInterval * 0.9 {
                    log.write("EXPIRED", claim.id, "\(age)")
                    return .expired
                }
                return try restarts.attempt("upload \(claim.id)", { try uploadClaim(claim, to: server) }).map { .uploaded($0) } ?? .interrupted
            }
            switch outcome {
            case .uploaded(let upload):
                log.write("UPLOADED", claim.id, logList(upload.uploaded), logList(upload.deleted), logList(upload.stale))
                if !upload.stale.isEmpty { errors.report("\(name): the server has newer versions than claim \(claim.id): \(upload.stale)") }
                Thread.sleep(forTimeInterval: Double(Int.random(in: 0...5, using: &random)) / 1000)
                how = "complete"
            case .expired:
                how = "expired"
            case .interrupted:
                how = "fail"
            }
        }
        log.write("ENDING", claim.id, how)
        let report = try restarts.retrying("\(how) \(claim.id)") { () throws -> ClaimReport in
            switch how {
            case "complete": try garage.complete(claim)
            case "fail": try garage.release(claim, retryAfter: 0.02, error: FakeUploadError())
            default: try garage.release(claim)
            }
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

// MARK: - Entry point

/// Runs one process of the sync-cycle test; never returns.
func runSyncRole(storePath: String, role: String, arguments: [String]) -> Never {
    let errors = Errors()
    guard arguments.count == 3 || arguments.count == 5 else {
        print("ERROR usage: garage-stress-worker <store-path> \(role) <name> <seed> <argument> [<store-url> <server-url>]")
        exit(2)
    }
    // With two postgres:// URLs, the stores are their schemas (SyncCycleStores.swift).
    let files = SyncFiles(store: storePath, storeURL: arguments.count == 5 ? arguments[3] : nil,
                          serverURL: arguments.count == 5 ? arguments[4] : nil)
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
