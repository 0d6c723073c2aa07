import Foundation
import Testing
import GarageLite

// Crash safety: a child process parks graphs (Sources/garage-stress-worker/CrashParker.swift)
// and is killed with SIGKILL at a random moment, again and again. After each kill the store
// must open, pass `PRAGMA integrity_check`, hold every batch the child logged as committed,
// and hold only complete batches: no parent without its children, no partial batch, no batch
// half of one generation and half of the next. The workers share one store, which grows from
// kill to kill; every 10th worker starts a new store instead, and is killed early, often while
// it creates the store (see HotJournalTests for what that found).
//
// GARAGE_CRASH_KILLS sets the number of kills (100 by default), GARAGE_CRASH_SEED the seed
// (random by default; every failure message names it, so that a run can be replayed).
//
// The types have the names and shapes of the worker's, since a row is keyed by its type name.

private struct CrashGrandchild: Codable, Identifiable, Sendable {
    var id: String
    var parent: String
    var generation: Int
}

private struct CrashChild: Codable, Identifiable, Sendable {
    var id: String
    var parent: String
    var generation: Int
    var note: String
    var grandchild: CrashGrandchild?
}

private struct CrashParent: Codable, Identifiable, Sendable {
    var id: String
    var batch: String
    var batchSize: Int
    var generation: Int
    var childIDs: [String]
    var grandchildIDs: [String]
    var children: [CrashChild]
}

/// One line of a crash parker's log: `BEGIN` or `DONE`, then `<kind> <batch> <size> <generation>`.
private struct LoggedOperation {
    var event: String
    var kind: String
    var batch: String
    var size: Int
    var generation: Int

    init?(_ line: Substring) {
        let fields = line.split(separator: " ").map(String.init)
        guard fields.count == 5, fields[0] == "BEGIN" || fields[0] == "DONE",
              let size = Int(fields[3]), let generation = Int(fields[4]) else { return nil }
        (event, kind, batch, self.size, self.generation) = (fields[0], fields[1], fields[2], size, generation)
    }
}

/// What the kills hit, counted over a run of the test.
private struct KillCounts: CustomStringConvertible {
    var kills = 0
    var beforeOpening = 0
    var betweenOperations = 0
    var midOperation = 0
    var midOperationRolledBack = 0
    var committedNotLogged = 0
    var midStream = 0
    var walNotEmpty = 0
    var walWithUncommittedFrames = 0
    var journalLeft = 0
    var batchesLogged = 0
    var largestStoreRows = 0

    var description: String {
        """
        \(kills) kills: \(beforeOpening) before the worker had opened the store, \
        \(betweenOperations) between operations, \(midOperation) during a park/save call \
        (\(midOperationRolledBack) rolled back, \(committedNotLogged) committed but not logged yet; \
        \(midStream) during a streaming parkAll); the WAL was not empty after \(walNotEmpty) kills, \
        and held frames of an uncommitted transaction after \(walWithUncommittedFrames); \
        \(journalLeft) kills left a rollback journal (while the store was being created); \
        \(batchesLogged) batches logged as committed; the shared store grew to \(largestStoreRows) rows
        """
    }
}

@Suite("Crash safety", .serialized, .ownThreads, .firstPassOnly)
struct CrashSafetyTests {
    @Test func killedParkersLeaveOnlyCompleteCommittedGraphs() throws {
        let worker = try #require(stressWorkerExecutable(), """
            garage-stress-worker was not found next to the test binary (\(CommandLine.arguments.first ?? "?")) \
            or in its parent folders: build it with `swift build --build-tests`
            """)
        let environment = ProcessInfo.processInfo.environment
        let kills = environment["GARAGE_CRASH_KILLS"].flatMap { Int($0) } ?? 100
        let seed = environment["GARAGE_CRASH_SEED"].flatMap { UInt64($0) } ?? UInt64.random(in: 0...UInt64(UInt32.max))
        var random = SplitMix64(state: seed)
        let directory = try TemporaryDirectory()
        let sharedPath = directory.path("shared.sqlite")
        let started = Date()

        var counts = KillCounts()
        // Rows of the shared store, all verified, and the batches logged there as committed.
        var sharedRows = 0
        var sharedLogged: [String: Int] = [:]
        // Sometimes the garage that checked a kill stays open while the next worker runs, as
        // another process of the app would: the worker then starts on a live WAL, and the
        // next check opens the store while another connection has it open.
        var lingering: Garage?

        for number in 0..<kills {
            let context = "seed \(seed), kill \(number) (replay with GARAGE_CRASH_SEED=\(seed))"
            // Every 10th kill hits a new store early, often while it is being created.
            let isFresh = number % 10 == 9
            let storePath = isFresh ? directory.path("fresh-\(number).sqlite") : sharedPath
            let runSeed = "k\(number)-\(seed)"
            let logPath = directory.path("log-\(number)")
            let outputPath = directory.path("out-\(number)")
            _ = FileManager.default.createFile(atPath: logPath, contents: nil)
            _ = FileManager.default.createFile(atPath: outputPath, contents: nil)

            let process = try ChildProcess(executable: worker, arguments: [storePath, "crash", runSeed, logPath],
                                           output: URL(fileURLWithPath: outputPath))

            // Most kills wait until the worker has opened the store, so that they land among
            // its writes; the others may land while it starts or opens the store.
            if !isFresh, Int.random(in: 0..<5, using: &random) != 0 {
                let deadline = Date().addingTimeInterval(60)
                while process.isRunning, Date() < deadline, !Self.contents(of: logPath).hasPrefix("OPEN") {
                    Thread.sleep(forTimeInterval: 0.001)
                }
            }
            Thread.sleep(forTimeInterval: Double.random(in: 0...(isFresh ? 0.08 : 0.25), using: &random))
            let wasRunning = process.isRunning
            if wasRunning {
                process.kill()
            }
            process.waitUntilExit()
            guard wasRunning, process.wasKilled else {
                Issue.record("""
                    \(context): the worker ended by itself (\(String(describing: process.ended))):
                    \(Self.contents(of: outputPath))
                    """)
                break
            }
            counts.kills += 1

            // What the kill hit: the log, and the WAL as the killed process left it.
            let log = Self.contents(of: logPath)
            let operations = log.split(separator: "\n").dropFirst().compactMap(LoggedOperation.init)
            if let wal = Self.walFrames(path: storePath + "-wal") {
                counts.walNotEmpty += wal.committed + wal.uncommitted > 0 ? 1 : 0
                counts.walWithUncommittedFrames += wal.uncommitted > 0 ? 1 : 0
            }
            if FileManager.default.fileExists(atPath: storePath + "-journal") {
                counts.journalLeft += 1
            }
            if !log.hasPrefix("OPEN") {
                counts.beforeOpening += 1
            } else if let last = operations.last, last.event == "BEGIN" {
                counts.midOperation += 1
                counts.midStream += last.kind == "stream" || (last.kind == "repark" && last.size >= 1_000) ? 1 : 0
            } else {
                counts.betweenOperations += 1
            }

            // The store opens, and SQLite finds it sound.
            let garage: Garage
            do {
                garage = try Garage(path: storePath)
            } catch {
                Issue.record("\(context): the store does not open after the kill: \(error)")
                break
            }
            lingering = nil
            let file = try SQLiteFile(storePath, readOnly: true)
            let integrity = try file.integrityCheck()
            #expect(integrity == ["ok"], "\(context): integrity_check")

            // The rows of this worker, and of the workers before it.
            // (Nothing writes meanwhile: the worker is gone, and the garages here are idle.)
            let rows = try file.rows("""
                SELECT type, identifier FROM garage_object WHERE identifier > ? AND identifier < ?
                """, [runSeed + ".", runSeed + "/"]).map { ($0[0] ?? "", $0[1] ?? "") }
            let total = try file.int("SELECT COUNT(*) FROM garage_object") ?? 0
            if !isFresh {
                #expect(total - rows.count == sharedRows, "\(context): rows of earlier workers are missing or new")
                sharedRows = total
                counts.largestStoreRows = total
            }
            let (present, problems) = try Self.verifyBatches(rows: rows, in: garage, context: context)
            for problem in problems + Self.verifyLog(operations, against: present, context: context) {
                Issue.record(Comment(rawValue: problem))
            }

            for operation in operations where operation.event == "DONE" {
                counts.batchesLogged += 1
                if !isFresh { sharedLogged[operation.batch] = operation.generation }
            }
            if let last = operations.last, last.event == "BEGIN" {
                if let found = present[last.batch], found.generation == last.generation {
                    counts.committedNotLogged += 1
                } else {
                    counts.midOperationRolledBack += 1
                }
            }

            if !isFresh, Int.random(in: 0..<2, using: &random) == 0 {
                lingering = garage
            }
        }
        lingering = nil

        // At the end, the whole shared store: every batch complete, every logged one there.
        let garage = try Garage(path: sharedPath)
        let rows = try SQLiteFile(sharedPath).rows("SELECT type, identifier FROM garage_object").map { ($0[0] ?? "", $0[1] ?? "") }
        #expect(rows.count == sharedRows, "seed \(seed): the shared store at the end")
        let (present, problems) = try Self.verifyBatches(rows: rows, in: garage, context: "seed \(seed), at the end")
        #expect(problems == [])
        let missing = sharedLogged.filter { batch, generation in (present[batch]?.generation ?? 0) < generation }
        #expect(missing.isEmpty, "seed \(seed): logged batches missing at the end: \(missing)")
        #expect(counts.kills == kills, "seed \(seed)")

        print("""
            Crash safety (seed \(seed)): \(counts) \
            (\(String(format: "%.1f", Date().timeIntervalSince(started))) s)
            """)
    }

    /// The checks above would see a lost or partial write: each damage below is reported.
    @Test func theChecksFindMissingAndPartialBatches() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("damaged.sqlite")
        let garage = try Garage(path: path)
        func batch(_ id: String, size: Int, generation: Int = 1) -> [CrashParent] {
            (0..<size).map { index in
                let parentID = "\(id).\(index)"
                let children = (0..<3).map { childIndex in
                    let childID = "\(parentID).c\(childIndex)"
                    return CrashChild(id: childID, parent: parentID, generation: generation, note: "",
                                      grandchild: CrashGrandchild(id: "\(childID).g", parent: childID, generation: generation))
                }
                return CrashParent(id: parentID, batch: id, batchSize: size, generation: generation,
                                   childIDs: children.map(\.id), grandchildIDs: children.compactMap(\.grandchild?.id),
                                   children: children)
            }
        }
        try garage.parkAll(batch("t.0", size: 2) + batch("t.1", size: 1) + batch("t.2", size: 2)
                           + batch("t.3", size: 2) + batch("t.4", size: 3))
        try garage.park(batch("t.3", size: 2, generation: 2)[0])
        let file = try SQLiteFile(path)
        try file.execute("DELETE FROM garage_object WHERE identifier IN ('t.0.1.c2', 't.1.0.c0.g', 't.2.1')")
        let rows = try file.rows("SELECT type, identifier FROM garage_object").map { ($0[0] ?? "", $0[1] ?? "") }

        // A missing child, a missing grandchild, a missing parent (its children left behind),
        // and a batch of two generations.
        let (present, problems) = try Self.verifyBatches(rows: rows, in: garage, context: "damaged")
        for expected in [
            "damaged: parent t.0.1 cannot be retrieved",
            "damaged: parent t.1.0 of generation 1 is inconsistent",
            "damaged: children without their parent: [\"t.0.1.c0\", \"t.0.1.c1\", \"t.2.1.c0\", \"t.2.1.c1\", \"t.2.1.c2\"]; missing: []",
            "missing: [\"t.1.0.c0.g\"]",
            "damaged: batch t.0 of 2 parents is partial: 1 parents",
            "damaged: batch t.2 of 2 parents is partial: 1 parents",
            "damaged: batch t.3 of 2 parents is partial: 2 parents, generations [1, 2]",
        ] {
            #expect(problems.contains { $0.contains(expected) }, "not reported: \(expected); reported: \(problems)")
        }
        #expect(problems.count == 7)
        #expect(present["t.3"]?.generation == 2 && present["t.4"]?.size == 3)
        // What is whole passes.
        let whole = try Self.verifyBatches(rows: rows.filter { $0.1.hasPrefix("t.4.") }, in: garage, context: "whole")
        #expect(whole.problems == [])
        #expect(whole.found.count == 1 && whole.found["t.4"]?.size == 3 && whole.found["t.4"]?.generation == 1)

        // A logged batch that is missing, or older than logged; a batch never begun.
        let log = [
            "BEGIN park t.2 2 1", "DONE park t.2 2 1", "BEGIN park t.5 1 1", "DONE park t.5 1 1",
            "BEGIN stream t.3 2 1", "DONE stream t.3 2 1", "BEGIN repark t.3 2 2", "DONE repark t.3 2 2",
            "BEGIN repark t.3 2 3", "DONE repark t.3 2 3",
        ].compactMap { LoggedOperation($0[...]) }
        #expect(log.count == 10)
        #expect(Self.verifyLog(log, against: ["t.2": (2, 1), "t.3": (2, 2), "t.6": (1, 1)], context: "log") == [
            "log: batch t.5 was logged committed (1 parents, generation 1) but the store has none of it",
            "log: batch t.3 was logged committed (2 parents, generation 3) but the store has 2 parents of generation 2",
            "log: the store has batch t.6 at generation 1, never begun",
        ])
        // A batch found at a generation begun but not logged yet passes.
        let begun = Array(log.prefix(8)) + [LoggedOperation("BEGIN repark t.3 2 3")].compactMap { $0 }
        #expect(begun.count == 9)
        #expect(Self.verifyLog(begun, against: ["t.2": (2, 1), "t.3": (2, 3), "t.5": (1, 1)], context: "log") == [])
    }

    // MARK: - Helpers

    /// Checks that `rows` (type, identifier) form complete batches, retrieving each parent, and
    /// returns the batches found, by identifier. Records an issue for anything else.
    private static func verifyBatches(
        rows: [(type: String, identifier: String)], in garage: Garage, context: String
    ) throws -> (found: [String: (size: Int, generation: Int)], problems: [String]) {
        var problems: [String] = []
        var children = Set<String>(), grandchildren = Set<String>()
        var parentIDs: [String] = []
        for (type, identifier) in rows {
            switch type {
            case "CrashParent": parentIDs.append(identifier)
            case "CrashChild": children.insert(identifier)
            case "CrashGrandchild": grandchildren.insert(identifier)
            default: problems.append("\(context): unexpected row \(type) \(identifier)")
            }
        }

        var batches: [String: [CrashParent]] = [:]
        var expectedChildren = Set<String>(), expectedGrandchildren = Set<String>()
        for identifier in parentIDs {
            let parent: CrashParent
            do {
                guard let retrieved = try garage.retrieve(CrashParent.self, identifier: identifier) else {
                    problems.append("\(context): parent \(identifier) is listed but not retrieved")
                    continue
                }
                parent = retrieved
            } catch {
                problems.append("\(context): parent \(identifier) cannot be retrieved: \(error)")
                continue
            }
            let generations = Set(parent.children.map(\.generation) + parent.children.compactMap(\.grandchild?.generation))
            if parent.id != identifier || parent.children.map(\.id) != parent.childIDs
                || parent.children.compactMap(\.grandchild?.id) != parent.grandchildIDs
                || parent.children.contains(where: { child in
                    child.parent != identifier || (child.grandchild.map { $0.parent != child.id } ?? false)
                })
                || !generations.isSubset(of: [parent.generation]) {
                problems.append("""
                    \(context): parent \(identifier) of generation \(parent.generation) is inconsistent: \
                    children \(parent.children.map { "\($0.id)@\($0.generation) of \($0.parent)" }), \
                    grandchildren \(parent.children.compactMap { $0.grandchild.map { "\($0.id)@\($0.generation)" } }), \
                    listed \(parent.childIDs) and \(parent.grandchildIDs)
                    """)
            }
            expectedChildren.formUnion(parent.childIDs)
            expectedGrandchildren.formUnion(parent.grandchildIDs)
            batches[parent.batch, default: []].append(parent)
        }
        if children != expectedChildren {
            problems.append("""
                \(context): children without their parent: \(children.subtracting(expectedChildren).sorted()); \
                missing: \(expectedChildren.subtracting(children).sorted())
                """)
        }
        if grandchildren != expectedGrandchildren {
            problems.append("""
                \(context): grandchildren without their parent: \(grandchildren.subtracting(expectedGrandchildren).sorted()); \
                missing: \(expectedGrandchildren.subtracting(grandchildren).sorted())
                """)
        }

        var found: [String: (size: Int, generation: Int)] = [:]
        for (batch, parents) in batches.sorted(by: { $0.key < $1.key }) {
            let size = parents[0].batchSize
            let ids = Set(parents.map(\.id))
            let generations = Set(parents.map(\.generation))
            if parents.count != size || ids != Set((0..<size).map { "\(batch).\($0)" })
                || Set(parents.map(\.batchSize)) != [size] || generations.count != 1 {
                problems.append("""
                    \(context): batch \(batch) of \(size) parents is partial: \(parents.count) parents, \
                    generations \(generations.sorted()), sizes \(Set(parents.map(\.batchSize)).sorted())
                    """)
            }
            found[batch] = (parents.count, generations.max() ?? 0)
        }
        return (found, problems)
    }

    /// Checks that everything `operations` logged as committed is in `present`, at the
    /// generation logged or a later one the worker had begun, and that every batch of
    /// `present` was begun by the worker. Returns what is wrong.
    private static func verifyLog(
        _ operations: [LoggedOperation], against present: [String: (size: Int, generation: Int)], context: String
    ) -> [String] {
        var problems: [String] = []
        var begun: [String: Int] = [:]
        for operation in operations {
            if operation.event == "BEGIN" {
                begun[operation.batch] = operation.generation
                continue
            }
            let found = present[operation.batch]
            if found?.size != operation.size || found.map({ $0.generation < operation.generation }) ?? true {
                problems.append("""
                    \(context): batch \(operation.batch) was logged committed (\(operation.size) parents, \
                    generation \(operation.generation)) but the store has \
                    \(found.map { "\($0.size) parents of generation \($0.generation)" } ?? "none of it")
                    """)
            }
        }
        for (batch, found) in present.sorted(by: { $0.key < $1.key }) where found.generation > begun[batch] ?? 0 {
            problems.append("\(context): the store has batch \(batch) at generation \(found.generation), never begun")
        }
        return problems
    }

    /// Counts the frames of a WAL file that SQLite would read: those of committed transactions,
    /// and those after the last commit (a transaction that was being written). `nil` when
    /// there is no WAL file or it has no header.
    private static func walFrames(path: String) -> (committed: Int, uncommitted: Int)? {
        guard let data = FileManager.default.contents(atPath: path), data.count >= 32 else { return nil }
        let bytes = [UInt8](data)
        func word(_ offset: Int) -> UInt32 {
            bytes[offset..<offset + 4].reduce(0) { $0 << 8 | UInt32($1) }
        }
        guard word(0) & 0xFFFF_FFFE == 0x377F_0682 else { return nil }
        let pageSize = word(8) == 1 ? 65_536 : Int(word(8))
        guard pageSize >= 512 else { return nil }
        let salts = (word(16), word(20))
        var committed = 0, sinceCommit = 0
        var offset = 32
        // Frames of an earlier use of the file carry other salts: the current ones end there.
        while offset + 24 <= bytes.count, (word(offset + 8), word(offset + 12)) == salts {
            sinceCommit += 1
            if word(offset + 4) != 0 {
                committed += sinceCommit
                sinceCommit = 0
            }
            offset += 24 + pageSize
        }
        return (committed, sinceCommit)
    }

    private static func contents(of path: String) -> String {
        (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
    }
}
