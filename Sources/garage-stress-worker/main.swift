// garage-stress-worker: one side of the cross-process stress test (SyncStressTests).
//
//     garage-stress-worker <store-path> editor <seed> <count> [<edits>]
//     garage-stress-worker <store-path> job <seed> <count>
//     garage-stress-worker <store-path> crash <seed> <log-path>    (see CrashParker.swift)
//     garage-stress-worker <store-path> sync-editor <name> <seed> <objects>x<operations>
//     garage-stress-worker <store-path> sync-job <name> <seed> <stale-interval-seconds>
//     garage-stress-worker <store-path> sync-downloader <name> <seed> <server-objects>
//         (each sync- role takes two more arguments, <store-url> <server-url>, to run on the
//         PostgreSQL schemas they name: see SyncCycleStores.swift)
//     garage-stress-worker <store-path> setting <value>|-     (sets or removes StressSettings.greeting)
//     garage-stress-worker <store-path> park-and-exit <count>   (see ParkAndExit.swift)
//     garage-stress-worker <store-path> index-and-park <identifier>   (see IndexAndPark.swift)
//     garage-stress-worker <store-path> late-editor|late-downloader <name> <seed> <rounds>
//     garage-stress-worker <store-path> note append|rename|file …  (see LateSaves.swift)
//     garage-stress-worker <store-path> server-device <name> <seed> <teams> <token> <urls> <stop-path>
//         (a device of the sync server's chaos test: see ServerDevice.swift)
//
// The `sync-` roles are the processes of the sync-cycle test, with deletions, downloads,
// failed uploads and SIGKILLs; they are described in SyncCycle.swift. The rest of this
// comment is about the editors and jobs of the simpler test, processesEditClaimAndReadOneFile.
//
// An editor edits its own objects, `<seed>-0` ..< `<seed>-<count>`, `<edits>` times each
// (default 10), round after round: it retrieves each one (or creates it), bumps its version,
// marks it `.notSynced` and parks it. At the end it prints `LAST <id> <version>` per object.
//
// A job claims batches of 10 documents until it has seen `<count>` empty claims in a row
// (10 times as many before its first batch), sleeping 10 ms after each empty one.
// It "uploads" a batch by parking a `StressUpload` per document into a second store,
// `<store-path>.server`, when the version is newer than the one there, then completes the
// claim; every 4th batch (counted from the seed) it releases the claim instead, as if the
// upload had failed. Before ending a claim it appends `END <seed> <ids>` to
// `<store-path>.claims`, and after taking one `BEGIN <seed> <ids>`, so that the test can
// check that no row was claimed twice at the same time.
//
// A job ends with a `STATS ...` line. Anything unexpected prints an `ERROR ...` line; the
// exit status is then 1, 0 otherwise.
import Foundation
import GarageLite
import GarageStressModels

/// Counts the unexpected events; printed as they happen.
final class Errors {
    private(set) var count = 0

    func report(_ message: String) {
        count += 1
        print("ERROR \(message)")
        // Now: a job may be killed with SIGKILL a moment later, which loses what stdio buffers.
        fflush(nil)
    }
}

/// Appends whole lines to a file shared by several processes: each line is one `write` to a
/// descriptor opened with `O_APPEND`, so lines of different processes do not interleave.
final class AppendLog {
    private let descriptor: Int32

    init?(path: String) {
        descriptor = open(path, O_WRONLY | O_APPEND | O_CREAT, 0o644)
        if descriptor < 0 { return nil }
    }

    deinit {
        close(descriptor)
    }

    func append(_ line: String) -> Bool {
        let bytes = Array((line + "\n").utf8)
        return bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) } == bytes.count
    }
}

/// A small seeded generator, so that a run's choices can be replayed.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64

    init(seed: String) {
        // FNV-1a: the same in every process, unlike `hashValue`.
        state = seed.utf8.reduce(0xCBF2_9CE4_8422_2325) { ($0 ^ UInt64($1)) &* 0x100_0000_01B3 }
    }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

func runEditor(garage: Garage, seed: String, count: Int, edits: Int, errors: Errors) throws {
    var last: [String: Int] = [:]
    // Each round edits every object once, in an order of its own, so that an object is
    // sometimes edited again while a job holds it.
    var random = SplitMix64(seed: seed)
    for round in 0..<edits {
        for index in (0..<count).shuffled(using: &random) {
            let id = "\(seed)-\(index)"
            var document = try garage.retrieve(StressDocument.self, identifier: id)
                ?? StressDocument(id: id, version: 0, body: "", syncStatus: .notSynced)
            // Nobody else writes this editor's documents' content: it reads back its last edit.
            if document.version != last[id, default: 0] {
                errors.report("editor \(seed): \(id) reads version \(document.version), last parked \(last[id, default: 0])")
            }
            document.version = last[id, default: 0] + 1
            document.body = "\(id) edit \(document.version) round \(round)"
            document.syncStatus = .notSynced
            try garage.park(document)
            last[id] = document.version
        }
    }
    for index in 0..<count {
        let id = "\(seed)-\(index)"
        print("LAST \(id) \(last[id, default: 0])")
    }
}

/// Parks into `server` the documents newer than what it has; reports an older one.
func upload(_ documents: [StressDocument], to server: Garage, who: String, errors: Errors) throws {
    var newer: [StressUpload] = []
    for document in documents {
        let uploaded = try server.retrieve(StressUpload.self, identifier: document.id)?.version ?? 0
        if document.version < uploaded {
            errors.report("\(who): stale upload of \(document.id): version \(document.version) after \(uploaded)")
        } else if document.version > uploaded {
            newer.append(StressUpload(id: document.id, version: document.version))
        }
    }
    if !newer.isEmpty {
        try server.parkAll(newer)
    }
}

func runJob(garage: Garage, server: Garage, log: AppendLog, seed: Int, emptyLimit: Int, errors: Errors) throws {
    let who = "job \(seed)"
    let maxBatches = 100_000
    var emptyStreak = 0
    var batch = 0
    var released = 0
    var editedMeanwhile = 0
    while batch < maxBatches {
        let claim = try garage.claim(StressDocument.self, limit: 10)
        if claim.isEmpty {
            emptyStreak += 1
            // Before its first batch a job waits longer: the editors may still be starting.
            if emptyStreak >= (batch == 0 ? 10 * emptyLimit : emptyLimit) { break }
            Thread.sleep(forTimeInterval: 0.01)
            continue
        }
        emptyStreak = 0
        batch += 1
        let ids = claim.identifiers.joined(separator: ",")
        if !log.append("BEGIN \(seed) \(ids)") {
            errors.report("\(who): cannot write the claim log")
        }
        if Set(claim.identifiers).count != claim.identifiers.count || claim.objects.count > 10 {
            errors.report("\(who): claim \(claim.id) holds \(claim.identifiers)")
        }
        for (document, id) in zip(claim.objects, claim.identifiers) {
            if document.id != id {
                errors.report("\(who): claimed object \(document.id) under identifier \(id)")
            }
            if document.syncStatus != .syncing {
                errors.report("\(who): claimed \(id) with status \(document.syncStatus)")
            }
        }
        let releasing = (batch + seed) % 4 == 0
        // The upload takes a moment, in which editors may park claimed rows again.
        Thread.sleep(forTimeInterval: 0.005)
        if !releasing {
            try upload(claim.objects, to: server, who: who, errors: errors)
        }
        if !log.append("END \(seed) \(ids)") {
            errors.report("\(who): cannot write the claim log")
        }
        let report = releasing ? try garage.release(claim) : try garage.complete(claim)
        if !report.lost.isEmpty || !report.deleted.isEmpty {
            errors.report("\(who): claim \(claim.id) lost \(report.lost), deleted \(report.deleted)")
        }
        let ended = report.synced.count + report.notSynced.count + report.keptByApp.count
        if ended != claim.identifiers.count {
            errors.report("\(who): ending claim \(claim.id) of \(claim.identifiers.count) rows reported \(report)")
        }
        if !releasing, !report.keptByApp.isEmpty {
            errors.report("\(who): completing claim \(claim.id) kept \(report.keptByApp)")
        }
        released += releasing ? 1 : 0
        editedMeanwhile += releasing ? report.keptByApp.count : report.notSynced.count
    }
    print("STATS \(who): \(batch) batches, \(released) released, \(editedMeanwhile) rows parked again while claimed")
    if batch == maxBatches {
        errors.report("\(who): still claiming after \(maxBatches) batches")
    }
}

let arguments = CommandLine.arguments
if arguments.count == 5, arguments[2] == "crash" {
    runCrashParker(storePath: arguments[1], seed: arguments[3], logPath: arguments[4])
}
if arguments.count == 5, arguments[2] == "reencrypt" {
    runReencrypt(storePath: arguments[1], oldKeyByte: arguments[3], newKeyByte: arguments[4])
}
if arguments.count == 5, arguments[2] == "rekey" {
    runRekey(storePath: arguments[1], oldPassphrase: arguments[3], newPassphrase: arguments[4])
}
if arguments.count == 4, arguments[2] == "park-and-exit" {
    runParkAndExit(storePath: arguments[1], count: arguments[3])
}
if arguments.count == 4, arguments[2] == "index-and-park" {
    runIndexAndPark(storePath: arguments[1], identifier: arguments[3])
}
if arguments.count == 4, arguments[2] == "claim-and-exit" {
    runClaimAndExit(storePath: arguments[1], count: arguments[3])
}
if arguments.count == 4, arguments[2] == "setting" {
    // Sets `StressSettings.greeting` to the argument, or removes it for "-".
    do {
        let garage = try TestStores.open(path: arguments[1])
        if arguments[3] == "-" {
            try garage.removeValue(for: StressSettings.greeting)
        } else {
            try garage.set(arguments[3], for: StressSettings.greeting)
        }
        exit(0)
    } catch {
        print("ERROR setting threw: \(error)")
        exit(1)
    }
}
if arguments.count >= 3, arguments[2].hasPrefix("late-") || arguments[2] == "note" {
    runLateRole(storePath: arguments[1], role: arguments[2], arguments: Array(arguments.dropFirst(3)))
}
if arguments.count >= 3, arguments[2] == "server-device" {
    runServerDevice(storePath: arguments[1], arguments: Array(arguments.dropFirst(3)))
}
if arguments.count >= 3, arguments[2].hasPrefix("sync-") {
    runSyncRole(storePath: arguments[1], role: arguments[2], arguments: Array(arguments.dropFirst(3)))
}
guard arguments.count >= 5, let count = Int(arguments[4]), count >= 0,
      arguments[2] == "editor" || arguments[2] == "job" else {
    print("ERROR usage: garage-stress-worker <store-path> editor|job <seed> <count> [<edits>]")
    print("             garage-stress-worker <store-path> crash <seed> <log-path>")
    print("             garage-stress-worker <store-path> reencrypt <old-key-byte> <new-key-byte>")
    print("             garage-stress-worker <store-path> rekey <old-passphrase> <new-passphrase>")
    print("             garage-stress-worker <store-path> setting <value>|-")
    print("             garage-stress-worker <store-path> park-and-exit <count>")
    print("             garage-stress-worker <store-path> claim-and-exit <count>")
    print("             garage-stress-worker <store-path> index-and-park <identifier>")
    print("             garage-stress-worker <store-path> late-editor|late-downloader <name> <seed> <rounds>")
    print("             garage-stress-worker <store-path> note append|rename|file <id> <argument>")
    print("             garage-stress-worker <store-path> sync-editor|sync-job|sync-downloader <name> <seed> <argument> [<store-url> <server-url>]")
    exit(2)
}
let storePath = arguments[1]
let role = arguments[2]
let seed = arguments[3]
let errors = Errors()

/// Runs the editor or the job; its garages are closed when it returns, as an app's are when it
/// quits (SQLite then checkpoints the WAL and removes it, if no other connection has the file).
@MainActor func runRole() {
    do {
    let garage = try TestStores.open(path: storePath)
    if role == "editor" {
        let edits = arguments.count > 5 ? Int(arguments[5]) ?? 10 : 10
        try runEditor(garage: garage, seed: seed, count: count, edits: edits, errors: errors)
    } else {
        guard let jobSeed = Int(seed) else {
            print("ERROR a job's seed must be an integer, not \(seed)")
            exit(2)
        }
        guard let log = AppendLog(path: storePath + ".claims") else {
            print("ERROR cannot open \(storePath).claims")
            exit(1)
        }
        let server = try TestStores.open(path: storePath + ".server")
        try runJob(garage: garage, server: server, log: log, seed: jobSeed, emptyLimit: max(1, count), errors: errors)
    }
    } catch {
        errors.report("\(role) \(seed) threw: \(error)")
    }
}
runRole()
exit(errors.count == 0 ? 0 : 1)
