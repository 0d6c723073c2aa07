@testable import GarageLite
import GarageLiteSQLite
import Foundation
import Testing

// I/O errors, injected by the fault-injecting file system at every point of the workload of
// FaultScenario.swift, as SQLite's own ioerr tests do: the Nth write, sync, truncation or read
// of the store's files fails, once or from then on. The opening, or the step that hit it,
// must throw a `GarageError` (no other error, no trap, no hang); once the fault clears, the
// same garage retries that step and goes on, and at the end the store passes `check()` and
// holds exactly what a run without faults leaves.
//
// GARAGE_IO_FAULTS sets the fault points per kind and mode (10 by default, spread over the
// calls the workload makes; `all` tries every call). The full run:
// GARAGE_IO_FAULTS=all swift test --filter IOError
extension FaultTests {
    @Suite(.firstPassOnly) struct IOErrorTests {
        /// A run without faults: the calls of each kind it makes, and the state it leaves.
        struct CleanRun {
            var calls: [FaultFileSystem.Kind: Int]
            var state: String
        }

        static func cleanRun() throws -> CleanRun {
            let directory = try TemporaryDirectory()
            try FaultFileSystem.arm(directory)
            defer { FaultFileSystem.disarm() }
            let garage = try Garage(path: directory.path("store.sqlite"), encryptionKey: FaultWorkload.firstKey)
            for step in FaultWorkload.steps() { try step.run(garage) }
            let state = try FaultWorkload.state(of: garage)
            // The calls up to here: a faulty run clears its faults before its garage closes.
            var calls: [FaultFileSystem.Kind: Int] = [:]
            for kind in FaultFileSystem.Kind.allCases { calls[kind] = FaultFileSystem.calls(kind) }
            return CleanRun(calls: calls, state: state)
        }

        /// What went wrong with a fault of `kind` at its `nth` call (empty when nothing).
        static func problems(_ kind: FaultFileSystem.Kind, nth: Int, code: Int32, sticky: Bool, fullVolume: Bool = false,
                             expected clean: CleanRun, accept: (GarageError) -> Bool) throws -> (problems: [String], faults: Int) {
            let directory = try TemporaryDirectory()
            try FaultFileSystem.arm(directory)
            defer { FaultFileSystem.disarm() }
            if fullVolume {
                StoreFile.availableSpaceOverrides.write { $0[directory.url.path] = 0 }
            }
            defer { StoreFile.availableSpaceOverrides.write { $0[directory.url.path] = nil } }
            FaultFileSystem.fail(kind, nth: nth, code: code, sticky: sticky)
            let at = "a \(sticky ? "sticky" : "one-time") \(kind) fault (SQLite error \(code)) at call \(nth)"
            var problems: [String] = []
            func judge(_ error: any Error, _ what: String) {
                if let error = error as? GarageError, accept(error) { return }
                problems.append("\(at): \(what) threw \(String(reflecting: error))")
            }
            let path = directory.path("store.sqlite")
            var opened: Garage?
            do {
                opened = try Garage(path: path, encryptionKey: FaultWorkload.firstKey)
            } catch {
                judge(error, "the opening")
                FaultFileSystem.clearFaults()
                StoreFile.availableSpaceOverrides.write { $0[directory.url.path] = nil }
                opened = try Garage(path: path, encryptionKey: FaultWorkload.firstKey)
            }
            let garage = try #require(opened)
            for step in FaultWorkload.steps() {
                do {
                    try step.run(garage)
                } catch {
                    judge(error, step.name)
                    // The fault clears; the same garage tries again and carries on.
                    FaultFileSystem.clearFaults()
                    StoreFile.availableSpaceOverrides.write { $0[directory.url.path] = nil }
                    do {
                        try step.run(garage)
                    } catch {
                        problems.append("\(at): \(step.name) fails again once the fault is gone: \(error)")
                    }
                }
            }
            FaultFileSystem.clearFaults()
            let faults = FaultFileSystem.faults
            let report = try garage.check()
            if !report.isOK { problems.append("\(at): check() found \(report)") }
            let state = try FaultWorkload.state(of: garage)
            if state != clean.state {
                problems.append("\(at): the store ends otherwise than without faults:\n"
                    + FaultWorkload.difference(state, from: clean.state))
            }
            return (problems, faults)
        }

        /// The fault points for `calls` calls: GARAGE_IO_FAULTS of them, spread, or all.
        static func points(calls: Int) -> [Int] {
            guard calls > 0 else { return [] }
            let setting = ProcessInfo.processInfo.environment["GARAGE_IO_FAULTS"]
            let count = setting == "all" ? calls : min(calls, Int(setting ?? "") ?? 10)
            return Array(Set((0..<count).map { 1 + $0 * calls / count } + [calls])).sorted()
        }

        /// An I/O error is a storage failure; at the opening, a store that can't be opened; in
        /// a key change, one to finish.
        static func isIOFailure(_ error: GarageError) -> Bool {
            switch error {
            case .storageFailure, .cannotOpenStore, .keyChangeUnfinished: true
            default: false
            }
        }

        @Test(arguments: FaultFileSystem.Kind.allCases, [false, true])
        func everyIOErrorIsReportedAndTheGarageCarriesOn(kind: FaultFileSystem.Kind, sticky: Bool) throws {
            let clean = try Self.cleanRun()
            let calls = try #require(clean.calls[kind])
            try #require(calls > 0, "the workload makes no \(kind) call")
            var failures: [String] = []
            var faults = 0
            let points = Self.points(calls: calls)
            for nth in points {
                let outcome = try Self.problems(kind, nth: nth, code: kind.ioError, sticky: sticky, expected: clean,
                                                accept: Self.isIOFailure)
                failures += outcome.problems
                faults += outcome.faults
                if failures.count >= 5 { break }
            }
            // A fault changes the calls that follow (a read retried, a page cached, a checkpoint
            // moved), so a point near the end may not be reached: half must be.
            #expect(faults * 2 >= points.count, "only \(faults) faults were injected at \(points.count) points")
            #expect(failures.isEmpty, "\(failures.count) of \(points.count) \(kind) faults went wrong:\n\(failures.joined(separator: "\n"))")
            // The count the README's reliability section reports.
            print("I/O errors, \(sticky ? "sticky" : "one-time") \(kind): \(faults) injected at \(points.count) of "
                + "\(calls) calls, \(failures.count) problems")
        }

        /// A full disk is reported as one (SQLite's own `SQLITE_FULL` on a write; a truncation
        /// SQLite reports as a plain I/O error, on a volume with no space left), at the opening
        /// as at every step, and the garage carries on once there is room.
        @Test(arguments: [FaultFileSystem.Kind.write, .truncate])
        func aFullDiskIsReportedAsOne(kind: FaultFileSystem.Kind) throws {
            let clean = try Self.cleanRun()
            let calls = try #require(clean.calls[kind])
            var failures: [String] = []
            var faults = 0
            for nth in Self.points(calls: calls) {
                let code: Int32 = kind == .write ? 13 /* SQLITE_FULL */ : kind.ioError
                let outcome = try Self.problems(kind, nth: nth, code: code, sticky: true, fullVolume: true, expected: clean) {
                    switch $0 {
                    case .storeFull: true
                    case let .keyChangeUnfinished(_, _, _, reason): reason.contains("disk holding it is full")
                    default: false
                    }
                }
                failures += outcome.problems
                faults += outcome.faults
                if failures.count >= 5 { break }
            }
            #expect(faults > 0)
            #expect(failures.isEmpty, "\(failures.joined(separator: "\n"))")
            print("full disk, \(kind): \(faults) injected, \(failures.count) problems")
        }

        /// A GarageStorage import (into a plain store: it refuses one locked with a key, as the
        /// workload's is) under a fault at every write point, once and for good: it throws a
        /// `GarageError`, imports nothing ("when it throws, nothing was imported"), and once the
        /// fault clears the same garage imports the store whole, as without faults.
        @Test(arguments: [false, true])
        func aGarageStorageImportIsWholeOrNothing(sticky: Bool) throws {
            let source = FixtureFile.fixturesFolder.appendingPathComponent("garagestorage/store.garagestorage")
            func records(_ garage: Garage) throws -> String {
                try garage.records().map { "\($0.typeName) \($0.identifier) r\($0.revision) \($0.syncStatus) \($0.json)" }
                    .sorted().joined(separator: "\n")
            }
            func run(faultAt nth: Int?) throws -> (records: String, calls: Int, problems: [String]) {
                let directory = try TemporaryDirectory()
                try FaultFileSystem.arm(directory)
                defer { FaultFileSystem.disarm() }
                let garage = try Garage(path: directory.path("store.sqlite"))
                let before = FaultFileSystem.calls(.write)
                if let nth { FaultFileSystem.fail(.write, nth: nth, code: FaultFileSystem.Kind.write.ioError, sticky: sticky) }
                var problems: [String] = []
                do {
                    try garage.importGarageStorageStore(at: source)
                } catch {
                    let at = "a \(sticky ? "sticky" : "one-time") write fault at call \(nth ?? 0)"
                    if !(error is GarageError) { problems.append("\(at): the import threw \(String(reflecting: error))") }
                    FaultFileSystem.clearFaults()
                    if try !garage.records().isEmpty { problems.append("\(at): a failed import left records") }
                    do {
                        try garage.importGarageStorageStore(at: source)
                    } catch {
                        problems.append("\(at): the import fails again once the fault is gone: \(error)")
                    }
                }
                FaultFileSystem.clearFaults()
                if !(try garage.check()).isOK { problems.append("check() found problems after a fault at \(nth ?? 0)") }
                injected += FaultFileSystem.faults
                return (try records(garage), FaultFileSystem.calls(.write) - before, problems)
            }
            var injected = 0
            let clean = try run(faultAt: nil)
            try #require(!clean.records.isEmpty && clean.calls > 0)
            var failures: [String] = []
            let points = Self.points(calls: clean.calls)
            for nth in points {
                let outcome = try run(faultAt: nth)
                failures += outcome.problems
                if outcome.records != clean.records {
                    failures.append("a fault at \(nth): the store ends otherwise than without faults:\n"
                        + FaultWorkload.difference(outcome.records, from: clean.records))
                }
                if failures.count >= 5 { break }
            }
            #expect(failures.isEmpty, "\(failures.joined(separator: "\n"))")
            #expect(injected * 2 >= points.count, "only \(injected) faults were injected at \(points.count) points")
            print("I/O errors, \(sticky ? "sticky" : "one-time") write in a GarageStorage import: \(injected) injected at "
                + "\(points.count) of \(clean.calls) calls, \(failures.count) problems")
        }

        /// Proof that the check can fail: a garage that forgot a step's error (as if a write
        /// swallowed it) ends with a store other than the clean run's, and the test says so.
        @Test func aSwallowedErrorIsCaught() throws {
            let clean = try Self.cleanRun()
            let directory = try TemporaryDirectory()
            try FaultFileSystem.arm(directory)
            defer { FaultFileSystem.disarm() }
            let garage = try Garage(path: directory.path("store.sqlite"), encryptionKey: FaultWorkload.firstKey)
            let steps = FaultWorkload.steps()
            for step in steps {
                // The download fails, and the error is swallowed: nothing retried.
                if step.name.hasPrefix("parkDownloaded") {
                    FaultFileSystem.fail(.write, nth: 1, code: FaultFileSystem.Kind.write.ioError, sticky: true)
                    try? step.run(garage)
                    FaultFileSystem.clearFaults()
                } else {
                    try step.run(garage)
                }
            }
            #expect(FaultFileSystem.faults > 0)
            let difference = FaultWorkload.difference(try FaultWorkload.state(of: garage), from: clean.state)
            #expect(difference.contains("- team t8@1"), "\(difference)")
        }
    }
}
