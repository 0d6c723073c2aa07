import Foundation
import GarageStressModels
import Testing
@testable import GarageLite

/// Issue 26, "claims know their owner": a claim records the process that took it, so that the
/// claim of a job that died with its process is released at once (by a garage that opens the
/// store, or `releaseStaleClaims()`), and a live process's claim never is.
@Suite("Claims know their owner", .firstPassOnly)
struct ClaimOwnerTests {
    static func documents(_ count: Int) -> [StressDocument] {
        (0..<count).map { StressDocument(id: "d\($0)", version: $0, body: "body \($0)", syncStatus: .notSynced) }
    }

    @Test func thisProcessIsItsOwnAndHasNotEnded() {
        let owner = ClaimOwner.current
        #expect(owner.processID == getpid())
        #expect(owner.startTime != 0)
        #expect(!owner.hasEnded)
        #expect(ClaimOwner(claimText: owner.claimText()) == owner)
        // A claim of an older version names no owner: never released by this rule.
        #expect(ClaimOwner(claimText: UUID().uuidString) == nil)
        // Another host's process can't be seen from here; a process id with another start time
        // is another process, and this one has ended.
        #expect(!ClaimOwner(processID: owner.processID, startTime: owner.startTime, host: owner.host + ".elsewhere").hasEnded)
        #expect(ClaimOwner(processID: owner.processID, startTime: owner.startTime + 1, host: owner.host).hasEnded)
    }

    @Test func aLiveProcesssClaimIsNotReleased() throws {
        let directory = try TemporaryDirectory()
        let garage = try Garage(path: directory.path("live.garage"))
        try garage.parkAll(Self.documents(3))
        let claim = try garage.claim(StressDocument.self, limit: 2)
        #expect(try garage.releaseStaleClaims() == 0)
        _ = try Garage(path: directory.path("live.garage"))           // opening releases none either
        #expect(try garage.complete(claim).synced.count == 2)
    }

    /// A job that exits during its upload (as a `kill -9` would leave it): the next garage that
    /// opens the store releases its claim, and the next claim takes the objects again.
    @Test(.timeLimit(.minutes(2)))
    func theClaimOfAProcessThatEndedIsReleasedWhenTheStoreOpens() throws {
        let worker = try #require(stressWorkerExecutable(), "garage-stress-worker is built next to the tests")
        let directory = try TemporaryDirectory()
        let path = directory.path("jobs.garage")
        try Garage(path: path).parkAll(Self.documents(5))
        let process = try WorkerProcess(name: "claim-and-exit", executable: worker,
                                        arguments: [path, "claim-and-exit", "3"], directory: directory.url)
        #expect(process.wait(timeout: 60))
        #expect(process.exitedCleanly, "\(process.outputText)")
        #expect(process.outputLines(startingWith: "CLAIMED").count == 1)

        let garage = try Garage(path: path)
        #expect(try garage.count(StressDocument.self, withStatus: .syncing) == 0)
        #expect(try garage.count(StressDocument.self, withStatus: .notSynced) == 5)
        let claim = try garage.claim(StressDocument.self, limit: 10)
        #expect(claim.identifiers.count == 5)
        #expect(try garage.complete(claim).synced.count == 5)
    }

    /// The same through `releaseStaleClaims()`, on a garage that was open all along.
    @Test(.timeLimit(.minutes(2)))
    func releaseStaleClaimsReleasesTheClaimOfAProcessThatEnded() throws {
        let worker = try #require(stressWorkerExecutable(), "garage-stress-worker is built next to the tests")
        let directory = try TemporaryDirectory()
        let path = directory.path("jobs.garage")
        let garage = try Garage(path: path)
        try garage.parkAll(Self.documents(4))
        let process = try WorkerProcess(name: "claim-and-exit", executable: worker,
                                        arguments: [path, "claim-and-exit", "4"], directory: directory.url)
        #expect(process.wait(timeout: 60))
        #expect(process.exitedCleanly, "\(process.outputText)")
        #expect(try garage.count(StressDocument.self, withStatus: .syncing) == 4)
        #expect(try garage.releaseStaleClaims() == 4)
        #expect(try garage.count(StressDocument.self, withStatus: .notSynced) == 4)
        #expect(try garage.releaseStaleClaims() == 0)
    }
}
