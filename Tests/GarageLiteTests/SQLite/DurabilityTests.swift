import Foundation
import GarageLite
import GarageStressModels
import Testing

/// Issue 24, item 6: the store runs WAL with `synchronous = NORMAL`, where a commit waits in the
/// `-wal` file, unsynced, until a checkpoint. Once the garages on a file are closed (or the
/// process that used them exits), the store file alone must hold every commit: a power cut
/// then takes back nothing. Each test checks the `-wal` file's size, and reads a copy of the
/// store file made without its `-wal` and `-shm` files.
@Suite("Durability at close", .firstPassOnly)
struct DurabilityTests {
    /// The case: an app parks 61 objects over three opens and closes.
    @Test func aClosedGarageLeavesItsCommitsInTheStoreFile() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("store.garage")
        var parked = 0
        for (round, count) in [20, 20, 21].enumerated() {
            do {
                let garage = try Garage(path: path)
                // Reads open the garage's read-only connections, which must close before its writer.
                #expect(try garage.retrieveAll(Memo.self).count == parked)
                for index in 0..<count {
                    try garage.park(Memo(id: "m\(parked + index)", text: "round \(round)"))
                    #expect(try garage.retrieve(Memo.self, identifier: "m\(parked + index)") != nil)
                }
                let friend = Friend(id: "f\(round)")
                friend.friend = Friend(id: "g\(round)")
                try garage.park(friend)
                #expect(try garage.retrieve(Friend.self, identifier: "f\(round)")?.friend?.id == "g\(round)")
                parked += count
            }
            #expect(logSize(path) == 0, "round \(round): the -wal file holds commits after the garage closed")
            let copy = try copyOfStoreFileAlone(path)
            let garage = try Garage(path: copy.path("store.garage"))
            #expect(try garage.retrieveAll(Memo.self).count == parked)
            #expect(try garage.retrieve(Memo.self, identifier: "m\(parked - 1)")?.text == "round \(round)")
            #expect(try garage.retrieveAll(Friend.self).count == 2 * (round + 1))
        }
    }

    /// Two garages on one file: the one that closes first leaves its commits in the store file
    /// although the other keeps the file open, and the one that closes last empties the log.
    @Test func theGarageThatClosesLastCheckpointsEveryCommit() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("store.garage")
        var second: Garage? = try Garage(path: path)
        do {
            let first = try Garage(path: path)
            try first.parkAll((0..<30).map { Memo(id: "first-\($0)", text: "first") })
            try second?.parkAll((0..<30).map { Memo(id: "second-\($0)", text: "second") })
            #expect(try first.retrieveAll(Memo.self).count == 60)
            #expect(try second?.retrieveAll(Memo.self).count == 60)
        }
        do {
            let copy = try copyOfStoreFileAlone(path)
            #expect(try Garage(path: copy.path("store.garage")).retrieveAll(Memo.self).count == 60,
                    "a garage closed while another keeps the file open left commits in the log only")
        }
        for index in 0..<10 {
            try second?.park(Memo(id: "late-\(index)", text: "after the first closed"))
        }
        #expect(try second?.count(Memo.self) == 70)
        second = nil
        #expect(logSize(path) == 0, "the -wal file holds commits after the last garage closed")
        let copy = try copyOfStoreFileAlone(path)
        let garage = try Garage(path: copy.path("store.garage"))
        #expect(try garage.retrieveAll(Memo.self).count == 70)
        #expect(try garage.retrieve(Memo.self, identifier: "late-9")?.text == "after the first closed")
    }

    /// A process that parks and exits without its garage being deinitialized (`exit(0)` with
    /// the garage still held, as a global would be) leaves every commit in the store file.
    @Test(.timeLimit(.minutes(2)))
    func aProcessThatExitsLeavesItsCommitsInTheStoreFile() throws {
        let worker = try #require(stressWorkerExecutable(), "garage-stress-worker is built next to the tests")
        let directory = try TemporaryDirectory()
        let path = directory.path("store.garage")
        let process = try WorkerProcess(name: "park-and-exit", executable: worker,
                                        arguments: [path, "park-and-exit", "61"], directory: directory.url)
        #expect(process.wait(timeout: 60))
        #expect(process.exitedCleanly, "\(process.outputText)")
        #expect(process.outputLines(startingWith: "DONE") == ["DONE 61"])
        #expect(logSize(path) == 0, "the -wal file holds commits after the process exited")
        let copy = try copyOfStoreFileAlone(path)
        let documents = try Garage(path: copy.path("store.garage")).retrieveAll(StressDocument.self)
        #expect(documents.count == 61)
        #expect(Set(documents.map(\.id)) == Set((0..<61).map { "p\($0)" }))
    }

    /// The size of the store's `-wal` file, 0 when there is none.
    private func logSize(_ path: String) -> Int {
        (try? FileManager.default.attributesOfItem(atPath: path + "-wal"))?[.size] as? Int ?? 0
    }

    /// A new folder holding a copy of the store file at `path` alone, as `store.garage`: what
    /// the disk holds of the store once the unsynced log is lost.
    private func copyOfStoreFileAlone(_ path: String) throws -> TemporaryDirectory {
        let copy = try TemporaryDirectory()
        try FileManager.default.copyItem(atPath: path, toPath: copy.path("store.garage"))
        return copy
    }
}
