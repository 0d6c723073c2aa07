import Foundation
import GarageLitePostgres
import GarageStressModels
import Testing
@testable import GarageLite

// Issue 27's proof: the sync cycle of SyncStressTests (editors, jobs killed with SIGKILL, a
// downloader, a fake server, a shared log replayed by SyncCycleReplay) on PostgreSQL, with a
// restart of the server in the middle. The processes are garage-stress-worker's sync roles
// (Sources/garage-stress-worker/SyncCycle.swift), given two schemas' URLs: the local store and
// the server are schemas of the test's server; the run's log and marker files are in a folder.
//
// GARAGE_STRESS_SEED repeats a run's choices (not their timing); GARAGE_POSTGRES_STRESS_OPERATIONS
// sets each editor's operations (1000 by default: about 20 s on two cores) and
// GARAGE_POSTGRES_STRESS_RESTARTS the restarts (1), spread evenly over the editors' run: a long
// run is `GARAGE_POSTGRES_STRESS_OPERATIONS=10000 GARAGE_POSTGRES_STRESS_RESTARTS=8
// .ci/with-postgres swift test --skip-build --filter PostgresStress`. GARAGE_STRESS_KEEP=<folder>
// keeps the log and the processes' outputs.
//
// At the end: the two engine problems this test found, each reduced to a small test, disabled
// until the engine is fixed.

extension PostgresEngineTests {
    /// Four job processes claim, upload, complete, fail and give back from one garage while two
    /// editors edit, delete and re-create, and a downloader plays the server's side; the test kills
    /// a job with SIGKILL every few hundred milliseconds (and starts another), and restarts the
    /// PostgreSQL server once the editors are half done. The workers carry on through the restart
    /// (SyncCycleStores.swift). At quiescence: no object claimed by two live claims, no edit or
    /// deletion lost, the store equal to the server.
    @Test(.enabled(if: server != nil && !TestEngine.isPostgres,
                   "it restarts the server: the throwaway one of .ci/with-postgres, and not while the behaviour suite runs on it"))
    func processesSyncThroughKillsAndAServerRestart() throws {
        let worker = try #require(stressWorkerExecutable(), "garage-stress-worker was not built: swift build --build-tests")
        let environment = ProcessInfo.processInfo.environment
        let seed = environment["GARAGE_STRESS_SEED"].flatMap { UInt64($0) } ?? 20_270_127
        let operations = environment["GARAGE_POSTGRES_STRESS_OPERATIONS"].flatMap { Int($0) } ?? 1_000
        let restarts = environment["GARAGE_POSTGRES_STRESS_RESTARTS"].flatMap { Int($0) } ?? 1
        print("PostgresStress: seed \(seed), \(operations) operations per editor, \(restarts) restarts "
              + "(GARAGE_STRESS_SEED, GARAGE_POSTGRES_STRESS_OPERATIONS, GARAGE_POSTGRES_STRESS_RESTARTS)")
        let directory = try TemporaryDirectory()
        defer {
            if let keep = environment["GARAGE_STRESS_KEEP"] {
                try? FileManager.default.removeItem(atPath: keep)
                try? FileManager.default.copyItem(at: directory.url, to: URL(fileURLWithPath: keep))
                print("PostgresStress: the run's files are in \(keep)")
            }
        }
        var cycle = PostgresSyncCycle(directory: directory, worker: worker, seed: seed, operations: operations, restarts: restarts)
        try cycle.run()
    }
}

/// One run of the sync cycle on PostgreSQL: its processes, the server's restarts, and the checks.
private struct PostgresSyncCycle {
    let directory: TemporaryDirectory
    let worker: URL
    let seed: UInt64
    let operations: Int
    let restarts: Int
    let editors = 2, objectsPerEditor = 10, serverObjects = 6, jobSlots = 4
    let staleInterval = 1.0
    let started = Date()
    /// The base of the run's files: `.log`, `.stop`, `.restart`, `.server.lock`.
    let storePath: String
    let storeURL: String, serverURL: String
    var launched: [WorkerProcess] = []

    init(directory: TemporaryDirectory, worker: URL, seed: UInt64, operations: Int, restarts: Int) {
        self.directory = directory
        self.worker = worker
        self.seed = seed
        self.operations = operations
        self.restarts = restarts
        storePath = directory.path("local")
        let base = TestEngine.postgresURL!
        storeURL = TestEngine.schemaURL(base, schema: TestEngine.newSchemaName())
        serverURL = TestEngine.schemaURL(base, schema: TestEngine.newSchemaName())
    }

    /// The test's garage on `url`, opened after the restarts (a garage held through a restart
    /// would fail its next call on a connection the restart closed).
    static func open(_ url: String) throws -> Garage {
        var options = PostgresGarageOptions()
        options.busyTimeout = 30
        options.maximumConnections = 2
        let garage = try Garage(postgresURL: url, options: options)
        garage.maximumUploadAttempts = 3        // as in the jobs: a few objects get held
        return garage
    }

    private mutating func launch(_ name: String, _ role: String, _ argument: String) throws -> WorkerProcess {
        let process = try WorkerProcess(name: name, executable: worker,
                                        arguments: [storePath, role, name, "\(seed)-\(name)", argument, storeURL, serverURL],
                                        directory: directory.url)
        launched.append(process)
        return process
    }

    mutating func run() throws {
        // Both schemas exist before the workers open them.
        _ = try Self.open(storeURL)
        _ = try Self.open(serverURL)
        let log = try #require(SharedLogAppender(path: storePath + ".log"))
        defer {
            for process in launched { process.kill() }
            for process in launched { _ = process.wait(timeout: 10) }
        }
        let editorProcesses = try (0..<editors).map { try launch("e\($0)", "sync-editor", "\(objectsPerEditor)x\(operations)") }
        let downloader = try launch("dl", "sync-downloader", "\(serverObjects)")
        var jobs = try (0..<jobSlots).map { try launch("job\($0).0", "sync-job", "\(staleInterval)") }

        // While the editors run, a job dies of SIGKILL every 100 to 400 ms, and another starts;
        // the server restarts when the editors have made their share of operations (read in the
        // log: the restart comes at a point of their work, not at a time).
        var random = SplitMix64(state: seed)
        var kills = 0, restarted = 0
        var incarnations = [Int](repeating: 0, count: jobSlots)
        let restartPoints = (0..<restarts).map { editors * operations * ($0 + 1) / (restarts + 1) }
        // Far more than they need (about 20 s for 1000 operations): a call that never returns fails the test.
        let deadline = Date().addingTimeInterval(60 + Double(operations) / 20)
        while !editorProcesses.allSatisfy({ $0.wait(timeout: 0) }) {
            if Date() > deadline {
                Issue.record("the editors did not end in time")
                break
            }
            Thread.sleep(forTimeInterval: Double(Int.random(in: 100...400, using: &random)) / 1000)
            if restarted < restartPoints.count, editorEvents() >= restartPoints[restarted] {
                try restartServer(log: log, marker: storePath + ".restart")
                restarted += 1
            }
            let slot = Int.random(in: 0..<jobSlots, using: &random)
            jobs[slot].kill()
            try #require(jobs[slot].wait(timeout: 30), "\(jobs[slot].name) did not die of SIGKILL")
            #expect(jobs[slot].wasKilled, "\(jobs[slot].name) ended before it was killed:\n\(jobs[slot].outputText)")
            log.write("KILL", jobs[slot].name)
            kills += 1
            incarnations[slot] += 1
            jobs[slot] = try launch("job\(slot).\(incarnations[slot])", "sync-job", "\(staleInterval)")
        }
        #expect(restarted == restarts, "the server restarted \(restarted) times while the editors ran, not \(restarts)")

        // Quiescence: the jobs and the downloader stop.
        FileManager.default.createFile(atPath: storePath + ".stop", contents: nil)
        for process in jobs + [downloader] where !process.wait(timeout: 60) {
            Issue.record("\(process.name) did not stop within a minute")
        }
        for process in launched {
            let text = process.outputText
            #expect(process.outputLines(startingWith: "ERROR") == [], "\(process.name):\n\(text)")
            #expect(process.wait(timeout: 0) && (process.exitedCleanly || process.wasKilled), "\(process.name) did not end well:\n\(text)")
        }
        let interrupted = launched.flatMap { $0.outputLines(startingWith: "RESTART ") }
        let outcomes = launched.flatMap { $0.outputLines(startingWith: "INTERRUPTED ") }
        let editorsLast = SyncCycleReplay.lastEvents(editorProcesses.flatMap { $0.outputLines(startingWith: "LAST ") })
        #expect(editorsLast.count == editors * objectsPerEditor)

        let garage = try Self.open(storeURL), server = try Self.open(serverURL)
        // Every claim left is a killed job's, or one a restart interrupted.
        let final = try SyncStressTests.syncAtQuiescence(garage, server: server, log: log)
        let replay = SyncCycleReplay(log: try String(contentsOfFile: storePath + ".log", encoding: .utf8))
        #expect(replay.violations == [], "the log replay")
        #expect(replay.lastEditorEvent == editorsLast, "the log holds every editor's last event")
        let finalChecks = try replay.checkFinalState(garage, server: server)

        // The run did what it is meant to.
        #expect(kills > 0 && replay.figure("recovery that released rows") + replay.figure("claim freed by a kill") > 0,
                "no killed job's claim was recovered")
        #expect(!interrupted.isEmpty, "the restart interrupted no call")
        #expect(replay.figure("delete") > 0 && replay.figure("park recreate") > 0)
        #expect(replay.figure("download applied") > 0 && replay.figure("end complete") > 0)

        let f = replay.figure
        print("""
            PostgresStress summary (seed \(seed), \(String(format: "%.1f", Date().timeIntervalSince(started))) s): \
            \(launched.count) processes (\(editors) editors, 1 downloader, \(launched.count - editors - 1) job processes in \(jobSlots) slots), \
            \(kills) SIGKILLs, \(restarted) server restarts
            PostgresStress restarts: \(interrupted.count) calls failed by a restart (\(Self.tally(interrupted, field: 1))); \
            interrupted editor writes: \(outcomes.filter { $0.hasSuffix(" landed") }.count) had landed, \
            \(outcomes.filter { $0.hasSuffix(" again") }.count) had not and were made again
            PostgresStress editors: \(f("park create") + f("park edit") + f("park recreate")) parks (\(f("park create")) creates, \
            \(f("park edit")) edits, \(f("park recreate")) re-creates), \(f("delete")) deletes; server side: \(f("server SEDIT")) edits, \
            \(f("server SCREATE") + f("server SUPDATE") + f("server SDELETE")) changes of its own documents; downloads: \
            \(f("download applied")) applied, \(f("download deleted")) deleted, \(f("download conflict kept local")) conflicts
            PostgresStress jobs: \(f("claim")) claims (\(f("claimed object")) objects, \(f("claimed deletion")) deletions), \
            \(f("end complete")) completes (\(f("synced by a claim")) synced, \(f("deletion uploaded")) deletions uploaded), \
            \(f("end release")) releases (\(f("ending fail")) failed uploads, \(f("ending expired")) expired leases), \
            \(f("lost from a claim")) rows lost from a claim, \(f("recovered rows")) rows recovered, \(f("claim freed by a kill")) claims freed by a kill; \
            \(f("held at quiescence")) held at quiescence; final sync: \(final.batches) claims, \(final.downloaded) server changes
            PostgresStress checks: \(replay.checksPerformed + finalChecks) (\(replay.checks.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: ", ")), \
            final state: \(finalChecks)); \(replay.violations.count) violations
            """)
    }

    /// How many PARK and DELETE lines the editors have logged.
    private func editorEvents() -> Int {
        let log = (try? String(contentsOfFile: storePath + ".log", encoding: .utf8)) ?? ""
        return log.split(separator: "\n").filter { $0.hasPrefix("PARK ") || $0.hasPrefix("DELETE ") }.count
    }

    /// Restarts the server, having told the workers first (`marker`), and says so in the log.
    private func restartServer(log: SharedLogAppender, marker: String) throws {
        FileManager.default.createFile(atPath: marker, contents: nil)
        log.write("SERVER", "test", "restarting")
        try PostgresEngineTests.restartServer()
        log.write("SERVER", "test", "restarted")
    }

    /// `<kind> <who> …` lines counted by their `field`th field.
    private static func tally(_ lines: [String], field: Int) -> String {
        var counts: [String: Int] = [:]
        for line in lines {
            let fields = line.split(separator: " ")
            if fields.count > field { counts[String(fields[field]).split(separator: ".").first.map(String.init) ?? "", default: 0] += 1 }
        }
        return counts.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: ", ")
    }
}

// MARK: - The server's restart, and what the stress test found

extension PostgresEngineTests {
    /// Restarts the tests' server (`pg_ctl restart`, fast: its sessions are ended), its log
    /// going on in the file `.ci/with-postgres` started it with; checks that it did restart.
    static func restartServer() throws {
        let server = try #require(Self.server)
        let startTime = "SELECT pg_postmaster_start_time()"
        let before = try psql(startTime)
        let serverLog = URL(fileURLWithPath: server.data).deletingLastPathComponent().appendingPathComponent("server.log").path
        var command = ["\(server.bin)/pg_ctl", "-D", server.data, "-l", serverLog, "-m", "fast", "-w", "restart"]
        if getuid() == 0 { command = ["/usr/sbin/runuser", "-u", "postgres", "--"] + command }
        let restart = try ToolProcess.run(executable: URL(fileURLWithPath: command[0]), Array(command.dropFirst()))
        try #require(restart.exitCode == 0, "pg_ctl restart failed: \(restart)")
        #expect(try psql(startTime) != before, "the server did not restart")
    }

    /// Found by the stress test: a claim's end (which takes its rows' locks, in the claim's
    /// order, without the schema's lock) and a write of the same rows (`parkAll`,
    /// `parkDownloaded`: the schema's lock, then the rows' in the order given) can wait for each
    /// other; PostgreSQL ends one after `deadlock_timeout` (1 s) with 40P01, which the garage
    /// reports as `storeBusy`, "kept it locked for longer than the busy timeout". Either order of
    /// the park deadlocks: the claim's order of rows changed at one instant is the index's.
    @Test(.enabled(if: server != nil && !TestEngine.isPostgres, "needs the test server alone"))
    func aClaimsEndAndAParkOfItsRowsDoNotDeadlock() throws {
        let (url, _) = Self.newSchema()
        let jobs = try Garage(postgresURL: url), app = try Garage(postgresURL: url)
        try app.parkAll([Memo(id: "a", text: "a"), Memo(id: "b", text: "b")])
        let failures = Protected<[String]>([])
        let rounds = 300
        DispatchQueue.concurrentPerform(iterations: 2) { side in
            for round in 0..<rounds {
                do {
                    if side == 0 {
                        try jobs.complete(try jobs.claim(Memo.self, limit: 2))
                    } else {
                        try app.parkAll([Memo(id: "b", text: "b\(round)"), Memo(id: "a", text: "a\(round)")])
                    }
                } catch {
                    failures.write { $0.append("\(side == 0 ? "claim" : "park") round \(round): \(error)") }
                }
            }
        }
        #expect(failures.read { $0 } == [])
    }

    /// Found by the stress test: a call made while the server restarts can wait forever. Its
    /// statement waits (`EventLoopFuture.wait()` in `PostgresStatements.run`) for an answer that
    /// never comes: postgres-nio 1.33.2 writes a query to its channel without a promise, so a query
    /// written to a channel that closed is never failed (its "query hangs if connection is
    /// closed" fix, #487, was reverted by #501); seen waiting for a COMMIT with the socket gone,
    /// and for a transaction's statement with the socket in CLOSE-WAIT, the server's FATAL 57P01
    /// unread. One garage parks while the server restarts 20 times; about one restart in 10–30
    /// leaves the parks stuck.
    @Test(.enabled(if: server != nil && !TestEngine.isPostgres, "it restarts the server: .ci/with-postgres's only"))
    func callsMadeWhileTheServerRestartsDoNotHang() throws {
        let (url, _) = Self.newSchema()
        let garage = try Garage(postgresURL: url)
        let parks = Protected(0), stop = Protected(false)
        Thread {
            var index = 0
            while !stop.read({ $0 }) {
                index += 1
                _ = try? garage.park(Memo(id: "m\(index % 10)", text: "\(index)"))
                parks.write { $0 += 1 }
            }
        }.start()
        defer { stop.write { $0 = true } }
        for restart in 0..<20 {
            Thread.sleep(forTimeInterval: 0.1)
            try Self.restartServer()
            // Parks go on (or fail, and the next connects again): 20 more are made at once.
            let before = parks.read { $0 }
            // Longer than the engine's deadline for an answer (120 s at this busy timeout): a call may fail, none waits forever.
            let deadline = Date().addingTimeInterval(150)
            while parks.read({ $0 }) < before + 20, Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
            try #require(parks.read { $0 } >= before + 20, "a park made during restart \(restart) never returned")
        }
    }
}
