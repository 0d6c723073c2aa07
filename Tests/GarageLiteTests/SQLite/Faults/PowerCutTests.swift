@testable import GarageLite
import Foundation
import Testing

// Power cuts, simulated on the fault-injecting file system: the workload of FaultScenario.swift
// runs once on a store whose every write and sync is logged; then, for many points of that log,
// the files are rebuilt as a power cut there would have left them (each file as of its last
// sync, and in half the images a random part of the writes after it, some torn at a sector
// boundary; the `-shm` gone or garbage), and the store is opened from them. Each must open,
// pass `check()`, equal the state the live garage had after one of its steps (so no step is
// half there, and no graph torn), hold every step the durability promised (with `.full`, every
// acknowledged step; with `.normal`, every step acknowledged before the log's last sync), and
// take a park afterwards.
//
// GARAGE_POWER_CUTS sets the images per durability (40 by default; `all` cuts at every point
// of the log, torn and not); GARAGE_POWER_CUT_SEED the seed (random by default, and named by
// every failure). The full run: GARAGE_POWER_CUTS=all swift test --filter PowerCut
extension FaultTests {
    @Suite struct PowerCutTests {
        /// A run of the workload: the log position and the store's state after each step that
        /// returned (the first is the store before any step: none, or empty).
        struct RecordedRun {
            var states: [(name: String, position: Int, state: String)]
            var endPosition: Int
        }

        static func record(durability: GarageEngine.Durability, in directory: TemporaryDirectory,
                           ignoringSyncs: Bool = false) throws -> RecordedRun {
            try FaultFileSystem.arm(directory)
            defer { FaultFileSystem.disarm() }
            FaultFileSystem.ignoreSyncs(ignoringSyncs)
            var states: [(name: String, position: Int, state: String)] = [("no store", 0, "")]
            do {
                let garage = try Garage(engine: .sqlite(path: directory.path("store.sqlite"), durability: durability),
                                        encryptionKey: FaultWorkload.firstKey)
                for step in FaultWorkload.steps() {
                    try step.run(garage)
                    states.append((step.name, FaultFileSystem.position, try FaultWorkload.state(of: garage)))
                }
            } // The garage closes here, with its checkpoint: logged too.
            return RecordedRun(states: states, endPosition: FaultFileSystem.position)
        }

        /// What is wrong with the store a power cut at `position` leaves (empty when nothing).
        static func problems(run: RecordedRun, durability: GarageEngine.Durability, position: Int,
                             seed: UInt32, torn: Bool) throws -> [String] {
            let image = try TemporaryDirectory()
            try FaultFileSystem.crashImage(at: position, seed: seed, torn: torn, into: image)
            var random = SplitMix64(state: UInt64(seed))
            if random.next() % 2 == 0 {
                // A `-shm` of garbage, as a crash may leave it: SQLite must rebuild it from the log.
                let garbage = Data((0..<32_768).map { _ in UInt8.random(in: 0...255, using: &random) })
                try garbage.write(to: image.url.appendingPathComponent("store.sqlite-shm"))
            }
            let lastSync = FaultFileSystem.lastSync(atOrBefore: position)
            // The steps the durability promised: acknowledged before the cut (.full), or before
            // the last sync the cut left (.normal).
            let required = run.states.lastIndex {
                durability == .full ? $0.position <= position : $0.position < lastSync || $0.position == 0
            } ?? 0
            // No step that started after the cut can be there.
            let possible = run.states.firstIndex { $0.position >= position } ?? run.states.count - 1
            let at = "a power cut at \(position) of \(run.endPosition)\(torn ? ", torn" : ""), seed \(seed)"

            let garage: Garage
            do {
                garage = try FaultWorkload.open(image.path("store.sqlite"))
            } catch {
                return ["\(at): the store doesn't open: \(error)"]
            }
            var problems: [String] = []
            let report = try garage.check()
            if !report.isOK { problems.append("\(at): check() found \(report)") }
            let state: String
            do {
                state = try FaultWorkload.state(of: garage)
            } catch {
                return problems + ["\(at): the objects can't be read: \(error)"]
            }
            if let found = run.states.indices.first(where: { run.states[$0].state == state }) {
                if !(required...max(required, possible)).contains(where: { run.states[$0].state == state }) {
                    problems.append("\(at): the store is as after step \(found) (\(run.states[found].name)), "
                        + "but \(durability) promised step \(required) (\(run.states[required].name))")
                }
            } else {
                problems.append("\(at): the store is in no state the garage acknowledged; against step "
                    + "\(required) (\(run.states[required].name)):\n" + FaultWorkload.difference(state, from: run.states[required].state))
            }
            // The garage carries on.
            do {
                try garage.park(FaultTeam.make("after", generation: 1))
                if try garage.retrieve(FaultTeam.self, identifier: "after") != FaultTeam.make("after", generation: 1) {
                    problems.append("\(at): a park after the cut reads back wrong")
                }
            } catch {
                problems.append("\(at): a park after the cut fails: \(error)")
            }
            return problems
        }

        /// The cut points: GARAGE_POWER_CUTS of them spread over the log (and ends), or all.
        static func cuts(in run: RecordedRun, random: inout SplitMix64) -> [(position: Int, torn: Bool)] {
            let setting = ProcessInfo.processInfo.environment["GARAGE_POWER_CUTS"]
            if setting == "all" {
                return (0...run.endPosition).flatMap { [($0, false), ($0, true)] }
            }
            let count = Int(setting ?? "") ?? 40
            var cuts = run.states.map { ($0.position, false) } + [(run.endPosition, true)]
            while cuts.count < count {
                cuts.append((Int(random.next() % UInt64(run.endPosition + 1)), random.next() % 2 == 0))
            }
            return cuts
        }

        static var seed: UInt64 {
            ProcessInfo.processInfo.environment["GARAGE_POWER_CUT_SEED"].flatMap(UInt64.init) ?? UInt64.random(in: 1...UInt64(UInt32.max))
        }

        @Test(arguments: [GarageEngine.Durability.normal, .full])
        func everyCutLeavesASoundStoreWithWhatWasPromised(durability: GarageEngine.Durability) throws {
            let directory = try TemporaryDirectory()
            let run = try Self.record(durability: durability, in: directory)
            var random = SplitMix64(state: Self.seed)
            var failures: [String] = []
            let cuts = Self.cuts(in: run, random: &random)
            for cut in cuts {
                failures += try Self.problems(run: run, durability: durability, position: cut.position,
                                              seed: UInt32(truncatingIfNeeded: random.next()), torn: cut.torn)
                if failures.count >= 5 { break }
            }
            #expect(failures.isEmpty, "\(failures.count) of \(cuts.count) power cuts went wrong:\n\(failures.joined(separator: "\n"))")
            // The count the README's reliability section reports.
            print("power cuts, \(durability): \(cuts.count) images (\(cuts.filter(\.torn).count) torn) over a log of "
                + "\(run.endPosition) events, \(failures.count) problems")
        }

        /// `.full` syncs every commit: a cut right after a step keeps it. `.normal` syncs at
        /// checkpoints: a cut right after a step that synced nothing loses it. The difference
        /// the setting makes, on the same workload.
        @Test func onlyFullKeepsAStepThatSyncedNothing() throws {
            func stateAfterCut(_ run: RecordedRun, step: Int) throws -> String {
                let image = try TemporaryDirectory()
                try FaultFileSystem.crashImage(at: run.states[step].position, seed: 1, torn: false, into: image)
                return try FaultWorkload.state(of: try FaultWorkload.open(image.path("store.sqlite")))
            }
            let normal = try Self.record(durability: .normal, in: try TemporaryDirectory())
            // A step during which nothing was synced (no checkpoint ran).
            let step = try #require(normal.states.indices.dropFirst(2).first {
                FaultFileSystem.lastSync(atOrBefore: normal.states[$0].position) <= normal.states[$0 - 1].position
            })
            #expect(try stateAfterCut(normal, step: step) != normal.states[step].state)
            let full = try Self.record(durability: .full, in: try TemporaryDirectory())
            #expect(try stateAfterCut(full, step: step) == full.states[step].state)
        }

        /// Proof that the check can fail: on a file system whose syncs are no-ops, a cut after
        /// `.full` acknowledged its steps loses them, and the test says so.
        @Test func aFileSystemThatDoesNotSyncIsCaught() throws {
            let directory = try TemporaryDirectory()
            let run = try Self.record(durability: .full, in: directory, ignoringSyncs: true)
            let last = try #require(run.states.last)
            let problems = try Self.problems(run: run, durability: .full, position: last.position, seed: 1, torn: false)
            #expect(problems.contains { $0.contains("promised") || $0.contains("no state") }, "\(problems)")
        }
    }
}

/// The fault tests share the fault-injecting file system's state: one at a time. They test
/// SQLite's files, so the pass of the suite on PostgreSQL leaves them out.
@Suite(.serialized, .disabled(if: TestEngine.isPostgres, "SQLite's files: tested in the SQLite pass"))
struct FaultTests {}
