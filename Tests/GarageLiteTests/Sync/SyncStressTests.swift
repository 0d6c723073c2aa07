import Foundation
import GarageStressModels
import Testing
@testable import GarageLite

// Stress tests of sync jobs: editors park, jobs claim, upload and complete or release, readers
// retrieve, all at once; first as threads of this process, then as processes sharing a store
// (a file, or a schema on PostgreSQL: TestStores).
// The documents are GarageStressModels' types, which the worker (Sources/garage-stress-worker)
// parks too.

/// Threads started by a test, waited for together.
private final class Threads: Sendable {
    private let group = DispatchGroup()

    func start(_ name: String, _ body: @escaping @Sendable () -> Void) {
        group.enter()
        let thread = Thread { [group] in
            body()
            group.leave()
        }
        thread.name = name
        thread.start()
    }

    /// Whether every thread ended within `timeout` seconds.
    func wait(timeout: TimeInterval) -> Bool {
        group.wait(timeout: .now() + timeout) == .success
    }
}

@Suite("Sync stress", .serialized, .ownThreads)
struct SyncStressTests {
    // MARK: - Threads of one process

    @Test func threadsEditClaimAndReadAtOnce() throws {
        let directory = try TemporaryDirectory()
        let garage = try TestEngine.garage(path: directory.path("stress.sqlite"), busyTimeout: 30)
        let editors = 3, objectsPerEditor = 40, edits = 15, jobs = 2, readers = 2

        let failures = Protected<[String]>([])
        let activeClaims = Protected<Set<String>>([])
        let uploaded = Protected<[String: Int]>([:])
        let lastParked = Protected<[String: Int]>([:])
        let editorsRunning = Protected(editors)
        let claimsTaken = Protected(0)
        @Sendable func fail(_ message: String) {
            failures.write { $0.append(message) }
        }
        let threads = Threads()

        for editor in 0..<editors {
            threads.start("editor \(editor)") {
                defer { editorsRunning.write { $0 -= 1 } }
                do {
                    var last: [String: Int] = [:]
                    // Each round edits every object once, in an order of its own, so that an
                    // object is sometimes edited again right after a job claimed it.
                    var random = SplitMix64(state: UInt64(100 + editor))
                    for round in 0..<edits {
                        for index in (0..<objectsPerEditor).shuffled(using: &random) {
                            let id = "e\(editor)-\(index)"
                            var document = try garage.retrieve(StressDocument.self, identifier: id)
                                ?? StressDocument(id: id, version: 0, body: "", syncStatus: .notSynced)
                            if document.version != last[id, default: 0] {
                                fail("editor \(editor): \(id) reads version \(document.version), last parked \(last[id, default: 0])")
                            }
                            document.version = last[id, default: 0] + 1
                            document.body = "\(id) edit \(document.version) round \(round)"
                            document.syncStatus = .notSynced
                            try garage.park(document)
                            last[id] = document.version
                            lastParked.write { $0[id] = document.version }
                        }
                    }
                } catch {
                    fail("editor \(editor) threw: \(error)")
                }
            }
        }

        for job in 0..<jobs {
            threads.start("job \(job)") {
                do {
                    var batch = 0
                    var attempts = 0
                    while attempts < 100_000 {
                        attempts += 1
                        let editorsDone = editorsRunning.read { $0 == 0 }
                        let claim = try garage.claim(StressDocument.self, limit: 10)
                        if claim.isEmpty {
                            if editorsDone { break }
                            Thread.sleep(forTimeInterval: 0.001)
                            continue
                        }
                        batch += 1
                        claimsTaken.write { $0 += 1 }
                        let twice = activeClaims.write { active in
                            claim.identifiers.filter { !active.insert($0).inserted }
                        }
                        if !twice.isEmpty {
                            fail("job \(job): claimed \(twice) while another claim held them")
                        }
                        if claim.objects.count > 10 || claim.objects.map(\.id) != claim.identifiers {
                            fail("job \(job): claim of \(claim.objects.map(\.id)) under \(claim.identifiers)")
                        }
                        for document in claim.objects where document.syncStatus != .syncing {
                            fail("job \(job): claimed \(document.id) with status \(document.syncStatus)")
                        }
                        // Every 4th batch the upload "fails" and the claim is released.
                        let releasing = (batch + job) % 4 == 0
                        // The upload takes a moment, in which editors may park claimed rows again.
                        Thread.sleep(forTimeInterval: 0.005)
                        if !releasing {
                            uploaded.write { uploaded in
                                for document in claim.objects {
                                    let previous = uploaded[document.id, default: 0]
                                    if document.version < previous {
                                        fail("job \(job): stale upload of \(document.id): version \(document.version) after \(previous)")
                                    }
                                    uploaded[document.id] = max(previous, document.version)
                                }
                            }
                        }
                        activeClaims.write { $0.subtract(claim.identifiers) }
                        let report = releasing ? try garage.release(claim) : try garage.complete(claim)
                        if !report.lost.isEmpty || !report.deleted.isEmpty {
                            fail("job \(job): claim lost \(report.lost), deleted \(report.deleted)")
                        }
                        let ended = report.synced.count + report.notSynced.count + report.keptByApp.count
                        if ended != claim.identifiers.count || (!releasing && !report.keptByApp.isEmpty) {
                            fail("job \(job): ending a claim of \(claim.identifiers) (releasing: \(releasing)) reported \(report)")
                        }
                    }
                    if attempts == 100_000 {
                        fail("job \(job): still claiming after \(attempts) attempts")
                    }
                } catch {
                    fail("job \(job) threw: \(error)")
                }
            }
        }

        for reader in 0..<readers {
            threads.start("reader \(reader)") {
                var random = SplitMix64(state: UInt64(reader + 1))
                var seen: [String: Int] = [:]
                do {
                    var reads = 0
                    while reads < 50_000, editorsRunning.read({ $0 > 0 }) {
                        reads += 1
                        let id = "e\(Int.random(in: 0..<editors, using: &random))-\(Int.random(in: 0..<objectsPerEditor, using: &random))"
                        if let document = try garage.retrieve(StressDocument.self, identifier: id) {
                            if document.id != id {
                                fail("reader \(reader): retrieved \(document.id) for \(id)")
                            }
                            if document.version < seen[id, default: 0] {
                                fail("reader \(reader): \(id) went back from version \(seen[id, default: 0]) to \(document.version)")
                            }
                            seen[id] = document.version
                        }
                        if reads % 64 == 0 {
                            _ = try garage.count(StressDocument.self, withStatus: .syncing)
                            _ = try garage.identifiers(of: StressDocument.self, withStatus: .notSynced)
                        }
                    }
                } catch {
                    fail("reader \(reader) threw: \(error)")
                }
            }
        }

        try #require(threads.wait(timeout: 120), "the stress threads did not end within 2 minutes")

        // Every thread has ended: no claim is held. Upload what is left.
        var drainBatches = 0
        while drainBatches < 1_000 {
            let claim = try garage.claim(StressDocument.self, limit: 10)
            if claim.isEmpty { break }
            drainBatches += 1
            uploaded.write { uploaded in
                for document in claim.objects {
                    let previous = uploaded[document.id, default: 0]
                    if document.version < previous {
                        fail("drain: stale upload of \(document.id): version \(document.version) after \(previous)")
                    }
                    uploaded[document.id] = max(previous, document.version)
                }
            }
            let report = try garage.complete(claim)
            #expect(report.synced == claim.identifiers, "nothing edits during the drain")
        }

        #expect(failures.read { $0 } == [])
        #expect(claimsTaken.read { $0 } > 0, "the jobs claimed nothing while the editors ran")
        let last = lastParked.read { $0 }
        #expect(last.count == editors * objectsPerEditor)
        #expect(Set(last.values) == [edits])
        try expectSynced(garage, lastVersions: last)
        #expect(uploaded.read { $0 } == last, "the server has every last edit")
    }

    // MARK: - Processes sharing a store

    @Test(.acrossProcesses) func processesEditClaimAndReadOneFile() throws {
        let worker = try #require(stressWorkerExecutable(), """
            garage-stress-worker was not found next to the test binary (\(CommandLine.arguments.first ?? "?")) \
            or in its parent folders: build it with `swift build --build-tests`
            """)
        let directory = try TemporaryDirectory()
        let storePath = directory.path("shared.sqlite")
        let serverPath = storePath + ".server"
        let objects = 50, edits = 30

        // This process opens the stores too: it reads while the workers run, then drains.
        // (Several processes creating one new file at once is tested in ConcurrentOpeningTests.)
        let garage = try TestEngine.garage(path: storePath, busyTimeout: 30)
        let server = try TestEngine.garage(path: serverPath, busyTimeout: 30)

        // Editors first, so that the jobs find work; the jobs stop after 100 empty claims
        // in a row (about a second with nothing to claim).
        var launched: [(name: String, process: ChildProcess, output: URL)] = []
        for (role, seed, count) in [("editor", "p1", objects), ("editor", "p2", objects), ("job", "1", 100), ("job", "2", 100)] {
            var arguments = [storePath, role, seed, String(count)]
            if role == "editor" { arguments.append(String(edits)) }
            let output = directory.url.appendingPathComponent("\(role)-\(seed).out")
            _ = FileManager.default.createFile(atPath: output.path, contents: nil)
            do {
                launched.append(("\(role) \(seed)", try ChildProcess(executable: worker, arguments: arguments, output: output), output))
            } catch {
                for entry in launched { entry.process.kill(SIGTERM) }
                throw error
            }
        }

        // This process reads while the workers run: a document's version never goes back.
        let workersRunning = Protected(true)
        let readerFailures = Protected<[String]>([])
        let reader = Threads()
        reader.start("reader") {
            var random = SplitMix64(state: 7)
            var seen: [String: Int] = [:]
            var reads = 0
            do {
                while reads < 100_000, workersRunning.read({ $0 }) {
                    reads += 1
                    let id = "p\(Int.random(in: 1...2, using: &random))-\(Int.random(in: 0..<objects, using: &random))"
                    if let document = try garage.retrieve(StressDocument.self, identifier: id) {
                        if document.version < seen[id, default: 0] {
                            readerFailures.write { $0.append("\(id) went back from version \(seen[id, default: 0]) to \(document.version)") }
                        }
                        seen[id] = document.version
                    }
                    Thread.sleep(forTimeInterval: 0.001)
                }
            } catch {
                readerFailures.write { $0.append("the reader threw: \(error)") }
            }
        }

        let deadline = Date().addingTimeInterval(120)
        if !launched.allSatisfy({ $0.process.wait(timeout: max(0, deadline.timeIntervalSinceNow)) }) {
            for entry in launched { entry.process.kill(SIGTERM) }
            for entry in launched { _ = entry.process.wait(timeout: 10) }
            Issue.record("the workers did not end within 2 minutes")
        }
        workersRunning.write { $0 = false }
        try #require(reader.wait(timeout: 60), "the reader did not end")
        #expect(readerFailures.read { $0 } == [])

        var lastVersions: [String: Int] = [:]
        for entry in launched {
            let text = try String(contentsOf: entry.output, encoding: .utf8)
            let lines = text.split(separator: "\n").map(String.init)
            #expect(entry.process.exitedCleanly,
                    "\(entry.name) ended with \(String(describing: entry.process.ended)):\n\(text)")
            #expect(lines.filter { $0.hasPrefix("ERROR") } == [], "\(entry.name)")
            for line in lines where line.hasPrefix("LAST ") {
                let fields = line.split(separator: " ")
                guard fields.count == 3, let version = Int(fields[2]) else {
                    Issue.record("\(entry.name) printed \(line)")
                    continue
                }
                lastVersions[String(fields[1])] = version
            }
        }
        #expect(lastVersions.count == 2 * objects)
        #expect(Set(lastVersions.values) == [edits])

        // The jobs' claims, in the order they were taken and ended: none overlaps another.
        let claimLog = (try? String(contentsOfFile: storePath + ".claims", encoding: .utf8)) ?? ""
        var holders: [String: String] = [:]
        var claimsTaken = 0
        for line in claimLog.split(separator: "\n") {
            let fields = line.split(separator: " ").map(String.init)
            guard fields.count == 3, fields[0] == "BEGIN" || fields[0] == "END" else {
                Issue.record("unexpected line in the claim log: \(line)")
                continue
            }
            let job = fields[1]
            for id in fields[2].split(separator: ",").map(String.init) {
                if fields[0] == "BEGIN" {
                    if let holder = holders[id] {
                        Issue.record("job \(job) claimed \(id) while job \(holder) held it")
                    }
                    holders[id] = job
                } else {
                    if holders[id] != job {
                        Issue.record("job \(job) ended a claim of \(id) held by \(holders[id] ?? "nobody")")
                    }
                    holders[id] = nil
                }
            }
            if fields[0] == "BEGIN" { claimsTaken += 1 }
        }
        #expect(holders.isEmpty, "claims never ended: \(holders)")
        #expect(claimsTaken > 0, "the jobs claimed nothing")

        // Drain what the jobs left, uploading to the same server file.
        var drainBatches = 0
        while drainBatches < 1_000 {
            let claim = try garage.claim(StressDocument.self, limit: 10)
            if claim.isEmpty { break }
            drainBatches += 1
            var newer: [StressUpload] = []
            for document in claim.objects {
                let previous = try server.retrieve(StressUpload.self, identifier: document.id)?.version ?? 0
                #expect(document.version >= previous, "stale upload of \(document.id): \(document.version) after \(previous)")
                if document.version > previous {
                    newer.append(StressUpload(id: document.id, version: document.version))
                }
            }
            try server.parkAll(newer)
            let report = try garage.complete(claim)
            #expect(report.synced == claim.identifiers, "nothing edits during the drain")
        }

        try expectSynced(garage, lastVersions: lastVersions)
        let serverVersions = Dictionary(uniqueKeysWithValues: try server.retrieveAll(StressUpload.self).map { ($0.id, $0.version) })
        #expect(serverVersions == lastVersions, "the server has every last edit")
    }

    // MARK: - The sync cycle: deletions, downloads, failed uploads, SIGKILLs

    /// Issue 10's proof. Three editor processes edit, delete and re-create their documents on
    /// one store; a downloader process plays the server's side (edits on the server, documents
    /// of its own, downloads with `parkDownloaded` / `deleteDownloaded`); two job processes
    /// claim, upload, complete, fail (release with a retry delay), give back, and recover stale
    /// claims, while the test kills one of them with SIGKILL every few hundred milliseconds and
    /// starts another. At quiescence the test syncs once more, then checks the server against
    /// the store, and replays the shared log (see SyncCycleReplay and the worker's SyncCycle.swift).
    @Test(.acrossProcesses, .disabled(if: TestEngine.isPostgres, "PostgresStressTests runs the sync cycle on PostgreSQL, with a server restart"))
    func processesSyncWithDeletionsDownloadsFailuresAndKills() throws {
        let worker = try #require(stressWorkerExecutable(), """
            garage-stress-worker was not found next to the test binary (\(CommandLine.arguments.first ?? "?")) \
            or in its parent folders: build it with `swift build --build-tests`
            """)
        let seed = ProcessInfo.processInfo.environment["GARAGE_STRESS_SEED"].flatMap { UInt64($0) } ?? 20_261_124
        print("SyncStress sync cycle: seed \(seed) (GARAGE_STRESS_SEED=\(seed) repeats the processes' choices)")
        let started = Date()
        let directory = try TemporaryDirectory()
        // GARAGE_STRESS_KEEP=<folder> keeps the run's stores, log and outputs there.
        defer {
            if let keep = ProcessInfo.processInfo.environment["GARAGE_STRESS_KEEP"] {
                try? FileManager.default.removeItem(atPath: keep)
                try? FileManager.default.copyItem(at: directory.url, to: URL(fileURLWithPath: keep))
                print("SyncStress sync cycle: the run's files are in \(keep)")
            }
        }
        // The stores and processes are the helper's: all closed or ended when it returns,
        // before the directory is removed.
        try syncCycle(in: directory, worker: worker, seed: seed, started: started)
    }

    private func syncCycle(in directory: TemporaryDirectory, worker: URL, seed: UInt64, started: Date) throws {
        let storePath = directory.path("local.sqlite")
        let logPath = storePath + ".log"
        let editors = 3, objectsPerEditor = 12, operations = 1_500, serverObjects = 10, jobSlots = 2
        let staleInterval = 1.0

        // Both stores exist before the workers open them, and the test holds them for the end.
        let garage = try TestEngine.garage(path: storePath, busyTimeout: 30)
        garage.maximumUploadAttempts = 3        // as in the jobs: a few objects get held
        let server = try TestEngine.garage(path: storePath + ".server", busyTimeout: 30)
        let log = try #require(SharedLogAppender(path: logPath))
        var random = SplitMix64(state: seed)

        var launched: [WorkerProcess] = []
        defer {
            for process in launched { process.kill() }
            for process in launched { _ = process.wait(timeout: 10) }
        }
        func launch(_ name: String, _ role: String, _ argument: String) throws -> WorkerProcess {
            let process = try WorkerProcess(name: name, executable: worker,
                                            arguments: [storePath, role, name, "\(seed)-\(name)", argument],
                                            directory: directory.url)
            launched.append(process)
            return process
        }

        let editorProcesses = try (0..<editors).map { try launch("e\($0)", "sync-editor", "\(objectsPerEditor)x\(operations)") }
        let downloader = try launch("dl", "sync-downloader", "\(serverObjects)")
        var jobs = try (0..<jobSlots).map { try launch("job\($0).0", "sync-job", "\(staleInterval)") }
        var incarnations = [Int](repeating: 0, count: jobSlots)

        // While the editors run, a job dies of SIGKILL every 100 to 400 ms, and another starts.
        var kills = 0
        let deadline = Date().addingTimeInterval(120)
        while !editorProcesses.allSatisfy({ $0.wait(timeout: 0) }) {
            if Date() > deadline {
                Issue.record("the editors did not end within 2 minutes")
                break
            }
            Thread.sleep(forTimeInterval: Double(Int.random(in: 100...400, using: &random)) / 1000)
            let slot = Int.random(in: 0..<jobSlots, using: &random)
            jobs[slot].kill()
            try #require(jobs[slot].wait(timeout: 30), "\(jobs[slot].name) did not die of SIGKILL")
            #expect(jobs[slot].wasKilled, "\(jobs[slot].name) ended before it was killed:\n\(jobs[slot].outputText)")
            log.write("KILL", jobs[slot].name)
            kills += 1
            incarnations[slot] += 1
            jobs[slot] = try launch("job\(slot).\(incarnations[slot])", "sync-job", "\(staleInterval)")
        }

        // Quiescence: the jobs and the downloader stop.
        FileManager.default.createFile(atPath: storePath + ".stop", contents: nil)
        for process in jobs + [downloader] where !process.wait(timeout: 60) {
            Issue.record("\(process.name) did not stop within a minute")
        }
        for process in launched {
            let text = process.outputText
            #expect(process.outputLines(startingWith: "ERROR") == [], "\(process.name):\n\(text)")
            let ended = process.wait(timeout: 0)
            #expect(ended && (process.exitedCleanly || process.wasKilled),
                    "\(process.name) did not end well:\n\(text)")
        }
        let editorsLast = SyncCycleReplay.lastEvents(editorProcesses.flatMap { $0.outputLines(startingWith: "LAST ") })
        #expect(editorsLast.count == editors * objectsPerEditor)

        let final = try Self.syncAtQuiescence(garage, server: server, log: log)
        let replay = SyncCycleReplay(log: try String(contentsOfFile: logPath, encoding: .utf8))
        #expect(replay.violations == [], "the log replay")
        #expect(replay.lastEditorEvent == editorsLast, "the log holds every editor's last event")

        // The server's copy equals the store, object for object, everything synced; no edit nor
        // deletion lost, no object resurrected.
        let finalChecks = try replay.checkFinalState(garage, server: server)

        // The run did what it is meant to.
        #expect(kills > 0 && replay.figure("recovery that released rows") + replay.figure("claim freed by a kill") > 0,
                "no killed job's claim was recovered")
        #expect(replay.figure("delete") > 0 && replay.figure("park recreate") > 0)
        #expect(replay.figure("download applied") > 0 && replay.figure("download conflict kept local") > 0)
        #expect(replay.figure("end complete") > 0 && replay.figure("ending fail") > 0)

        let f = replay.figure
        let elapsed = Date().timeIntervalSince(started)
        print("""
            SyncStress sync cycle summary (seed \(seed), \(String(format: "%.1f", elapsed)) s): \
            \(launched.count) processes (\(editors) editors, 1 downloader, \(launched.count - editors - 1) job processes in \(jobSlots) slots), \(kills) SIGKILLs
            SyncStress editors: \(f("park create") + f("park edit") + f("park recreate")) parks (\(f("park create")) creates, \
            \(f("park edit")) edits, \(f("park recreate")) re-creates), \(f("delete")) deletes; \
            server side: \(f("server SEDIT")) edits of editors' documents, \(f("server SCREATE")) creates, \(f("server SUPDATE")) updates, \(f("server SDELETE")) deletes of its own; \
            downloads: \(f("download batch")) parkDownloaded + \(f("download deletion batch")) deleteDownloaded calls, \(f("download applied")) objects applied, \
            \(f("download deleted")) deleted, \(f("download conflict kept local")) conflicts (local edit kept, download retried later)
            SyncStress jobs: \(f("claim")) claims (\(f("claimed object")) objects, \(f("claimed deletion")) deletions), \
            \(f("end complete")) completes (\(f("synced by a claim")) synced, \(f("deletion uploaded")) deletions uploaded, \(f("edited during a claim")) edited meanwhile), \
            \(f("end release")) releases (\(f("ending fail")) failed uploads, \(f("ending giveback")) given back, \(f("ending expired")) expired leases), \
            \(f("lost from a claim")) rows lost to recovery, \(f("gone from a claim")) purged during their claim; \(f("recovery")) releaseStaleClaims calls, \(f("recovery that released rows")) released \
            \(f("recovered rows")) rows; \(f("held at quiescence")) objects held at quiescence; final sync: \(final.batches) claims, \
            \(final.downloaded) server changes downloaded
            SyncStress checks: \(replay.checksPerformed + finalChecks) invariant checks (\(replay.checks.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: ", ")), \
            final state: \(finalChecks)) plus \(f("synced check")) live checks of \(f("synced rows found on the server")) synced rows; \
            \(replay.violations.count) violations
            """)
    }

    /// The sync at quiescence, as a job would run it: recover the killed jobs' claims, retry
    /// the held objects, claim, upload and complete until nothing is left, then download what
    /// the server changed. Its lines go to the log, as a job's and the downloader's.
    /// (PostgresStressTests ends its run with it too.)
    static func syncAtQuiescence(_ garage: Garage, server: Garage, log: SharedLogAppender,
                                  sourceLocation: SourceLocation = #_sourceLocation) throws -> (batches: Int, downloaded: Int) {
        let who = "final"
        // No job runs any more: every claim left is a killed job's.
        log.write("RECOVERING", who, "0")
        log.write("RECOVERED", who, "\(try garage.releaseStaleClaims(olderThan: 0))")
        log.write("HELD", who, "\(try garage.heldObjects(SyncStressDocument.self).count)")
        try garage.retryHeld(SyncStressDocument.self)
        var batches = 0
        while batches < 1_000 {
            let claim = try garage.claim(SyncStressDocument.self, limit: 25)
            if claim.isEmpty { break }
            batches += 1
            log.write("BEGIN", who, claim.id, "\(claim.date.timeIntervalSince1970)",
                      Self.logList(claim.objects.map { "\($0.id):\($0.version)" }), Self.logList(claim.deletions))
            var newer: [SyncStressServerDocument] = []
            var uploaded: [String] = []
            for document in claim.objects {
                let current = try server.retrieve(SyncStressServerDocument.self, identifier: document.id)
                #expect((current?.version ?? 0) <= document.version, "\(document.id): the server has a newer version",
                        sourceLocation: sourceLocation)
                if current?.version != document.version {
                    newer.append(SyncStressServerDocument(id: document.id, version: document.version,
                                                          body: document.body, serverEdit: document.serverEdit))
                }
                uploaded.append("\(document.id):\(document.version)")
            }
            try server.transaction {
                try server.parkAll(newer)
                for id in claim.deletions { try server.delete(SyncStressServerDocument.self, identifier: id) }
            }
            log.write("UPLOADED", who, claim.id, Self.logList(uploaded), Self.logList(claim.deletions), "-")
            log.write("ENDING", who, claim.id, "complete")
            let report = try garage.complete(claim)
            log.write("END", who, claim.id, "complete", Self.logList(report.synced), Self.logList(report.notSynced),
                      Self.logList(report.deletionsUploaded), Self.logList(report.keptByApp), Self.logList(report.lost),
                      Self.logList(report.deleted))
            #expect(report.synced == claim.identifiers && report.deletionsUploaded == claim.deletions,
                    "nothing edits during the final sync: \(report)", sourceLocation: sourceLocation)
        }
        let changes = try server.retrieveAll(SyncStressServerChange.self).map(\.id)
        var present: [SyncStressDocument] = []
        var absent: [String] = []
        for id in changes {
            if let copy = try server.retrieve(SyncStressServerDocument.self, identifier: id) {
                present.append(SyncStressDocument(id: id, version: copy.version, body: copy.body,
                                                  serverEdit: copy.serverEdit, syncStatus: .synced))
            } else {
                absent.append(id)
            }
        }
        log.write("DLBEGIN", who, Self.logList(present.map { "\($0.id):\($0.version)" }))
        let downloaded = try garage.parkDownloaded(present)
        log.write("DOWNLOAD", who, Self.logList(downloaded.applied.map { id in "\(id):\(present.first { $0.id == id }?.version ?? -1)" }),
                  Self.logList(downloaded.conflicts.map(\.object.identifier)))
        log.write("DLDELBEGIN", who, Self.logList(absent))
        let deleted = try garage.deleteDownloaded(SyncStressDocument.self, identifiers: absent)
        log.write("DLDELETE", who, Self.logList(deleted.deleted), Self.logList(deleted.conflicts.map(\.object.identifier)))
        #expect(downloaded.conflicts == [] && deleted.conflicts == [], "everything is synced: no conflict",
                sourceLocation: sourceLocation)
        #expect(downloaded.applied.count == present.count, sourceLocation: sourceLocation)
        try server.transaction {
            for id in changes { try server.delete(SyncStressServerChange.self, identifier: id) }
        }
        return (batches, changes.count)
    }

    private static func logList(_ items: [String]) -> String {
        items.isEmpty ? "-" : items.joined(separator: ",")
    }

    // MARK: - Helpers

    /// Checks that every document holds its last edit, synced, and that nothing else is there.
    private func expectSynced(_ garage: Garage, lastVersions: [String: Int],
                              sourceLocation: SourceLocation = #_sourceLocation) throws {
        #expect(try garage.count(StressDocument.self) == lastVersions.count, sourceLocation: sourceLocation)
        #expect(try garage.count(StressDocument.self, withStatus: .synced) == lastVersions.count,
                sourceLocation: sourceLocation)
        #expect(try garage.identifiers(of: StressDocument.self, withStatus: .notSynced) == [],
                sourceLocation: sourceLocation)
        #expect(try garage.identifiers(of: StressDocument.self, withStatus: .syncing) == [],
                sourceLocation: sourceLocation)
        var wrong: [String] = []
        for (id, version) in lastVersions.sorted(by: { $0.key < $1.key }) {
            let document = try garage.retrieve(StressDocument.self, identifier: id)
            let metadata = try garage.metadata(StressDocument.self, identifier: id)
            if document?.version != version || document?.syncStatus != .synced || metadata?.claimDate != nil {
                wrong.append("\(id): \(document.map { "version \($0.version), \($0.syncStatus)" } ?? "missing"), "
                             + "claimed \(metadata?.claimDate.map { "\($0)" } ?? "no"); last edit \(version)")
            }
        }
        #expect(wrong == [], sourceLocation: sourceLocation)
    }
}
