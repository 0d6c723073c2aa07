import Foundation
import Testing
@testable import GarageLite

// Stress tests of sync jobs: editors park, jobs claim, upload and complete or release, readers
// retrieve, all at once; first as threads of this process, then as processes sharing a file.
//
// The types have the names and shapes of the worker's (Sources/garage-stress-worker), since
// a row is keyed by its type name.

/// A document editors change and jobs upload; `version` grows with every edit.
private struct StressDocument: Codable, Identifiable, Syncable, Sendable {
    var id: String
    var version: Int
    var body: String
    var syncStatus: SyncStatus
}

/// What the "server" has of a document.
private struct StressUpload: Codable, Identifiable, Sendable {
    var id: String
    var version: Int
}

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

@Suite("Sync stress", .serialized)
struct SyncStressTests {
    // MARK: - Threads of one process

    @Test func threadsEditClaimAndReadAtOnce() throws {
        let directory = try TemporaryDirectory()
        let garage = try Garage(path: directory.path("stress.sqlite"), busyTimeout: 30)
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

    // MARK: - Processes sharing a file

    @Test func processesEditClaimAndReadOneFile() throws {
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
        let garage = try Garage(path: storePath, busyTimeout: 30)
        let server = try Garage(path: serverPath, busyTimeout: 30)

        // Editors first, so that the jobs find work; the jobs stop after 100 empty claims
        // in a row (about a second with nothing to claim).
        var launched: [(name: String, process: Process, output: URL)] = []
        let ended = DispatchGroup()
        for (role, seed, count) in [("editor", "p1", objects), ("editor", "p2", objects), ("job", "1", 100), ("job", "2", 100)] {
            var arguments = [storePath, role, seed, String(count)]
            if role == "editor" { arguments.append(String(edits)) }
            let output = directory.url.appendingPathComponent("\(role)-\(seed).out")
            _ = FileManager.default.createFile(atPath: output.path, contents: nil)
            let process = Process()
            process.executableURL = worker
            process.arguments = arguments
            process.standardOutput = try FileHandle(forWritingTo: output)
            process.standardError = process.standardOutput
            ended.enter()
            process.terminationHandler = { _ in ended.leave() }
            do {
                try process.run()
            } catch {
                ended.leave()
                for entry in launched { entry.process.terminate() }
                throw error
            }
            launched.append(("\(role) \(seed)", process, output))
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

        if ended.wait(timeout: .now() + 120) != .success {
            for entry in launched where entry.process.isRunning { entry.process.terminate() }
            _ = ended.wait(timeout: .now() + 10)
            Issue.record("the workers did not end within 2 minutes")
        }
        workersRunning.write { $0 = false }
        try #require(reader.wait(timeout: 60), "the reader did not end")
        #expect(readerFailures.read { $0 } == [])

        var lastVersions: [String: Int] = [:]
        for entry in launched {
            let text = try String(contentsOf: entry.output, encoding: .utf8)
            let lines = text.split(separator: "\n").map(String.init)
            #expect(entry.process.terminationReason == .exit && entry.process.terminationStatus == 0,
                    "\(entry.name) ended with status \(entry.process.terminationStatus):\n\(text)")
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
