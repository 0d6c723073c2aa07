import Foundation
import GarageLite
import GarageStressModels
import Testing

/// Opening a garage must not touch the locks SQLite holds on a file this process already has
/// open: on Linux (and in POSIX), closing any descriptor of a file drops every lock the process
/// holds on it, and another process then takes the store for unused (a newcomer's trial lost
/// writes and damaged a store that way).
@Suite("Shared file locks", .firstPassOnly)
struct SharedFileLockTests {
    @Test(.timeLimit(.minutes(3)))
    func openingASecondGarageOnAnOpenFileKeepsTheFirstOnesLocks() throws {
        let worker = try #require(stressWorkerExecutable(), "garage-stress-worker is built next to the tests")
        let directory = try TemporaryDirectory()
        let path = directory.path("store.garage")
        let first = try Garage(path: path, busyTimeout: 30)
        try first.park(StressDocument(id: "mine-1", version: 1, body: "", syncStatus: .notSynced))
        for round in 0..<3 {
            // Another garage on the same file, in this process, then another process.
            let second = try Garage(path: path, busyTimeout: 30)
            // It only opens the store and closes it: the last connection to close a file in WAL
            // mode checkpoints it and removes the -wal file, when it can lock the file alone.
            let process = try ChildProcess(executable: worker, arguments: [path, "editor", "other\(round)", "0", "0"])
            process.waitUntilExit()
            #expect(process.exitedCleanly)
            try first.park(StressDocument(id: "mine-\(round + 2)", version: 1, body: "", syncStatus: .notSynced))
            withExtendedLifetime(second) {}
        }
        // What the first garage wrote is in the file, for every other connection.
        let third = try Garage(path: path, busyTimeout: 30)
        #expect(try third.identifiers(of: StressDocument.self).filter { $0.hasPrefix("mine") }
                == ["mine-1", "mine-2", "mine-3", "mine-4"])
        #expect(try third.count(StressDocument.self) == 4)
        #expect(try first.check().isOK)
    }
}
