import Foundation
import GarageStressModels
import Testing
@testable import GarageLite

// The sync-cycle stress test's log, replayed: the worker's processes (SyncCycle.swift in
// Sources/garage-stress-worker) and the test append one line per event to a shared file, and
// this replay checks the sync invariants on it. The documents are GarageStressModels' types.

struct SyncCycleReplay {
    /// What a process did, or what the test must find at the end.
    struct EditorEvent: Equatable {
        var version: Int
        var deleted: Bool
    }

    private(set) var violations: [String] = []
    /// How many times each invariant was checked.
    private(set) var checks: [String: Int] = [:]
    /// How many times each event happened.
    private(set) var counts: [String: Int] = [:]
    /// The last event of each editor document: the version parked, or deleted.
    private(set) var lastEditorEvent: [String: EditorEvent] = [:]
    /// Whether the last download of each of the server's own documents deleted it.
    private(set) var lastDownloadDeleted: [String: Bool] = [:]

    private struct Holding {
        var job: String
        var claim: String
        var date: Double
    }

    private struct ClaimRecord {
        var job: String
        var versions: [String: Int]
        var deletions: Set<String>
        var uploaded: [String: Int]?
        var uploadedDeletions: Set<String> = []
        var ending = false
    }

    private var holders: [String: Holding] = [:]
    private var recoveries: [(time: Double, interval: Double)] = []
    private var claims: [String: ClaimRecord] = [:]
    private var killed: Set<String> = []
    /// When each killed job was killed: from then on its claims are a dead process's, which any
    /// garage that opens the store releases (issue 26, claims know their owner).
    private var killTimes: [String: Double] = [:]
    /// Per downloader, the editor events logged before its DLBEGIN: committed before the download.
    private var downloadSnapshot: [String: (line: Int, events: [String: EditorEvent])] = [:]
    /// The line being replayed, and the lines of each editor document's events.
    private var lineNumber = 0
    private var editorEvents: [String: [(line: Int, deleted: Bool)]] = [:]
    private var pendingDeletionChecks: [(id: String, after: Int, at: Int, line: String)] = []
    /// The rows a download deleted while a claim held them, to explain a second claim.
    private var purgedWhileHeld: [String: (claim: String, line: String)] = [:]

    init(log: String) {
        for (number, text) in log.split(separator: "\n").enumerated() {
            let fields = text.split(separator: " ").map(String.init)
            guard fields.count >= 3, let time = Double(fields[2]) else {
                violations.append("line \(number + 1) is not an event: \(text)")
                continue
            }
            lineNumber = number + 1
            replay(kind: fields[0], who: fields[1], time: time, Array(fields.dropFirst(3)), line: "line \(number + 1): \(text)")
        }
        for (id, claim) in claims where !claim.ending && !killed.contains(claim.job) {
            violations.append("job \(claim.job) never ended its claim \(id), and was not killed")
        }
        // A download deleted an editor's document whose last event before the download was a
        // park: only right if the editor had deleted it meanwhile. An editor logs each event
        // after it commits and commits the next one after that, so the event in force when
        // `deleteDownloaded` committed is one logged between DLDELBEGIN and DLDELETE, or the
        // first one logged after DLDELETE (committed before, logged late). One of them must be
        // a deletion; a later park (a re-creation) is the editor's right.
        for pending in pendingDeletionChecks {
            let events = editorEvents[pending.id, default: []]
            let during = events.filter { $0.line > pending.after && $0.line < pending.at }
            let candidates = during + events.filter { $0.line > pending.at }.prefix(1)
            check("a server deletion removes only documents deleted on both sides", candidates.contains { $0.deleted },
                  "\(pending.id) was live locally, the server did not have it: \(pending.line)")
        }
    }

    private mutating func check(_ invariant: String, _ holds: Bool, _ message: @autoclosure () -> String) {
        checks[invariant, default: 0] += 1
        if !holds { violations.append("\(invariant): \(message())") }
    }

    private mutating func count(_ event: String, _ by: Int = 1) {
        counts[event, default: 0] += by
    }

    private static func list(_ field: String) -> [String] {
        field == "-" ? [] : field.split(separator: ",").map(String.init)
    }

    /// `id:version,...`, as a dictionary.
    private static func versions(_ field: String) -> [String: Int] {
        var versions: [String: Int] = [:]
        for item in list(field) {
            let parts = item.split(separator: ":")
            versions[String(parts[0])] = parts.count > 1 ? Int(parts[1]) ?? -1 : -1
        }
        return versions
    }

    private static let arity = [
        "PARK": 3, "DELETE": 2, "START": 1, "KILL": 0, "RECOVERING": 1, "RECOVERED": 1, "BEGIN": 4,
        "UPLOADING": 1, "UPLOADED": 4, "EXPIRED": 2, "ENDING": 2, "END": 8, "SEDIT": 3, "SCREATE": 2,
        "SUPDATE": 2, "SDELETE": 2, "DLBEGIN": 1, "DOWNLOAD": 2, "DLDELBEGIN": 1, "DLDELETE": 2,
        "SYNCCHECK": 1, "HELD": 1, "SERVER": 1,
    ]

    private mutating func replay(kind: String, who: String, time: Double, _ fields: [String], line: String) {
        guard let arity = Self.arity[kind], fields.count == arity else {
            violations.append("unexpected \(line)")
            return
        }
        switch kind {
        case "PARK":
            let version = Int(fields[1]) ?? -1
            if let last = lastEditorEvent[fields[0]] {
                check("versions grow", version > last.version, "\(line) after version \(last.version)")
            }
            lastEditorEvent[fields[0]] = EditorEvent(version: version, deleted: false)
            editorEvents[fields[0], default: []].append((lineNumber, false))
            count("park \(fields[2])")
        case "DELETE":
            lastEditorEvent[fields[0]] = EditorEvent(version: Int(fields[1]) ?? -1, deleted: true)
            editorEvents[fields[0], default: []].append((lineNumber, true))
            count("delete")
        case "START":
            count("job start")
        case "KILL":
            killed.insert(who)
            killTimes[who] = time
            count("kill")
        case "RECOVERING":
            recoveries.append((time, Double(fields[0]) ?? 0))
        case "RECOVERED":
            count("recovery")
            count("recovered rows", Int(fields[0]) ?? 0)
            if (Int(fields[0]) ?? 0) > 0 { count("recovery that released rows") }
        case "BEGIN":
            begin(who: who, time: time, fields, line: line)
        case "UPLOADING":
            break
        case "UPLOADED":
            guard claims[fields[0]]?.job == who else {
                violations.append("upload of a claim this job did not take: \(line)")
                return
            }
            claims[fields[0]]?.uploaded = Self.versions(fields[1])
            claims[fields[0]]?.uploadedDeletions = Set(Self.list(fields[2]))
            check("no upload older than the server's copy", fields[3] == "-", line)
            count("upload")
        case "EXPIRED":
            count("expired lease")
        case "ENDING":
            guard claims[fields[0]]?.job == who else {
                violations.append("end of a claim this job did not take: \(line)")
                return
            }
            claims[fields[0]]?.ending = true
            // From here the claim may have ended: its rows are free for other jobs.
            for (id, holding) in holders where holding.claim == fields[0] { holders[id] = nil }
            count("ending \(fields[1])")
        case "END":
            end(who: who, fields, line: line)
        case "SEDIT", "SCREATE", "SUPDATE", "SDELETE":
            count("server \(kind)")
        case "DLBEGIN", "DLDELBEGIN":
            var snapshot: [String: EditorEvent] = [:]
            for id in Self.list(fields[0]) {
                let id = String(id.split(separator: ":")[0])
                snapshot[id] = lastEditorEvent[id]
            }
            downloadSnapshot[who] = (lineNumber, snapshot)
        case "DOWNLOAD":
            download(who: who, fields, line: line)
        case "DLDELETE":
            // An editor's document deleted by a download must have been deleted on both
            // sides: a local tombstone the server no longer has. Its deletion, logged after it
            // committed, was logged before the download began, or is the editor's next event.
            count("download deletion batch")
            let snapshot = downloadSnapshot[who] ?? (0, [:])
            for id in Self.list(fields[0]) {
                count("download deleted")
                if let holding = holders[id] { purgedWhileHeld[id] = (holding.claim, line) }
                if id.hasPrefix("s-") {
                    lastDownloadDeleted[id] = true
                } else if snapshot.events[id]?.deleted == true {
                    check("a server deletion removes only documents deleted on both sides", true, "")
                } else {
                    pendingDeletionChecks.append((id, snapshot.line, lineNumber, line))
                }
            }
            count("download conflict kept local", Self.list(fields[1]).count)
        case "SYNCCHECK":
            count("synced rows found on the server", Int(fields[0]) ?? 0)
            count("synced check")
        case "HELD":
            count("held at quiescence", Int(fields[0]) ?? 0)
        case "SERVER":
            // The PostgreSQL server restarting, then restarted (PostgresStressTests).
            count("server \(fields[0])")
        default:
            violations.append("unexpected \(line)")
        }
    }

    /// No object claimed by two live jobs: a row a claim holds is free again only once its
    /// job logged ENDING (before ending it), once a stale-claim recovery may have released
    /// it (one logged before this BEGIN, with the claim older than its interval by then), or
    /// once its job was killed (a garage that opens the store releases a dead process's claims).
    private mutating func begin(who: String, time: Double, _ fields: [String], line: String) {
        let claimID = fields[0], date = Double(fields[1]) ?? 0
        let versions = Self.versions(fields[2])
        let deletions = Self.list(fields[3])
        claims[claimID] = ClaimRecord(job: who, versions: versions, deletions: Set(deletions))
        count("claim")
        count("claimed object", versions.count)
        count("claimed deletion", deletions.count)
        for id in Array(versions.keys) + deletions {
            if let holding = holders[id] {
                // The recovery's cutoff is its start minus its interval, and it committed
                // before this claim, whose line is written after its commit.
                let recovered = recoveries.contains { $0.time < time && holding.date < time - $0.interval }
                let freedByKill = killTimes[holding.job].map { $0 < time } ?? false
                if freedByKill && !recovered { count("claim freed by a kill") }
                let purge = purgedWhileHeld[id].flatMap { $0.claim == holding.claim ? $0.line : nil }
                check("no object claimed by two live jobs", recovered || freedByKill,
                      "\(id) claimed by \(who) (claim \(claimID)) while \(holding.job)'s claim \(holding.claim) held it: \(line)"
                      + (purge.map { " (deleteDownloaded had purged its row under that claim, \($0))" } ?? ""))
            } else {
                check("no object claimed by two live jobs", true, "")
            }
            holders[id] = Holding(job: who, claim: claimID, date: date)
        }
    }

    /// No edit marked synced before it was uploaded: a completed claim reports as synced only
    /// objects its job uploaded, at the version it claimed, and as deleted on the server only
    /// deletions it uploaded; a released claim reports neither.
    private mutating func end(who: String, _ fields: [String], line: String) {
        guard let claim = claims[fields[0]], claim.job == who else {
            violations.append("end of a claim this job did not take: \(line)")
            return
        }
        let synced = Self.list(fields[2]), deletionsUploaded = Self.list(fields[4])
        count("end \(fields[1])")
        count("synced by a claim", synced.count)
        count("edited during a claim", fields[1] == "complete" ? Self.list(fields[3]).count : 0)
        count("deletion uploaded", deletionsUploaded.count)
        count("lost from a claim", Self.list(fields[6]).count)
        count("gone from a claim", Self.list(fields[7]).count)
        if fields[1] != "complete" {
            check("a release syncs nothing", synced.isEmpty && deletionsUploaded.isEmpty, line)
            return
        }
        for id in synced {
            let version = claim.versions[id]
            check("no edit marked synced before it was uploaded",
                  version != nil && claim.uploaded?[id] == version,
                  "\(id) synced by claim \(fields[0]) at version \(version.map(String.init) ?? "?"), "
                  + "uploaded \(claim.uploaded.map { $0[id].map(String.init) ?? "not" } ?? "nothing"): \(line)")
        }
        for id in deletionsUploaded {
            check("no deletion marked uploaded before it was",
                  claim.deletions.contains(id) && claim.uploadedDeletions.contains(id), "\(id): \(line)")
        }
    }

    /// Local edits win: a download applies a version no older than an edit parked before it
    /// began, and never brings back a version deleted before it began (such an object is a
    /// tombstone, which is a conflict, or gone from the server too). A newer version is fine:
    /// the editor may have parked it again, and a job synced it, before the park's line.
    private mutating func download(who: String, _ fields: [String], line: String) {
        let snapshot = downloadSnapshot[who]?.events ?? [:]
        count("download batch")
        count("download conflict kept local", Self.list(fields[1]).count)
        for (id, version) in Self.versions(fields[0]) {
            count("download applied")
            if id.hasPrefix("s-") {
                lastDownloadDeleted[id] = false
                continue
            }
            guard let local = snapshot[id] else { continue }
            if local.deleted {
                check("a download never resurrects a deleted object", local.version < version,
                      "\(id) downloaded at version \(version) after its deletion at \(local.version): \(line)")
            } else {
                check("a download never overwrites a local edit", local.version <= version,
                      "\(id) downloaded at version \(version) over the local edit \(local.version): \(line)")
            }
        }
    }

    /// The figures of a run, for the summary.
    func figure(_ event: String) -> Int { counts[event, default: 0] }
    var checksPerformed: Int { checks.values.reduce(0, +) }
}

extension SyncCycleReplay {
    /// The editors' last events, from the lines they print at their end
    /// (`LAST <identifier> <version> present|deleted`).
    static func lastEvents(_ lines: [String]) -> [String: EditorEvent] {
        var events: [String: EditorEvent] = [:]
        for line in lines {
            let fields = line.split(separator: " ").map(String.init)
            guard fields.count == 4, let version = Int(fields[2]) else {
                Issue.record("an editor printed \(line)")
                continue
            }
            events[fields[1]] = EditorEvent(version: version, deleted: fields[3] == "deleted")
        }
        return events
    }

    /// The store equals the server, object for object, everything synced, no tombstone nor claim
    /// left; each editor's document is where its last event left it on both sides (no edit, no
    /// deletion lost), and each server document present was downloaded after its last deletion.
    /// Returns how many checks it made.
    func checkFinalState(_ garage: Garage, server: Garage) throws -> Int {
        var checks = 0
        let local = try garage.retrieveAll(SyncStressDocument.self)
        let localCopies = Dictionary(uniqueKeysWithValues: local.map {
            ($0.id, SyncStressServerDocument(id: $0.id, version: $0.version, body: $0.body, serverEdit: $0.serverEdit))
        })
        let serverCopies = Dictionary(uniqueKeysWithValues: try server.retrieveAll(SyncStressServerDocument.self).map { ($0.id, $0) })
        for id in Set(localCopies.keys).union(serverCopies.keys).sorted() {
            checks += 1
            #expect(localCopies[id] == serverCopies[id],
                    "\(id): the store has \(localCopies[id].map { "\($0)" } ?? "nothing"), the server \(serverCopies[id].map { "\($0)" } ?? "nothing")")
        }
        #expect(local.filter { $0.syncStatus != .synced }.map(\.id) == [], "every object is synced")
        let rows = try garage.store.allStoredRows()
        #expect(rows.filter(\.isDeleted).map(\.key.identifier) == [], "no tombstone is left: every deletion reached the server")
        #expect(rows.filter { $0.claim != nil }.map(\.key.identifier) == [], "no claim is left")
        #expect(try server.count(SyncStressServerChange.self) == 0, "every server change was downloaded")
        checks += 4
        for (id, last) in lastEditorEvent.sorted(by: { $0.key < $1.key }) {
            checks += 1
            if last.deleted {
                #expect(localCopies[id] == nil && serverCopies[id] == nil, "\(id) was deleted last, at version \(last.version)")
            } else {
                #expect(localCopies[id]?.version == last.version && serverCopies[id]?.version == last.version,
                        "\(id) was parked last at version \(last.version)")
            }
        }
        for id in localCopies.keys.sorted() {
            checks += 1
            if id.hasPrefix("s-") {
                #expect(lastDownloadDeleted[id] == false, "\(id) is present, but was not downloaded since its deletion")
            } else {
                #expect(lastEditorEvent[id] != nil, "\(id) is present, but no editor parked it")
            }
        }
        return checks
    }
}
