import Foundation
import GarageStressModels
import Testing
@testable import GarageLite

/// Collects what an observation delivers, on a task of its own, so that a test can wait for
/// a condition without hanging when it never holds.
private final class Collected<Element: Sendable>: Sendable {
    let elements = Protected<[Element]>([])
    private let task = Protected<Task<Void, Never>?>(nil)

    init<S: AsyncSequence & Sendable>(_ sequence: S) where S.Element == Element {
        let elements = elements
        task.write {
            $0 = Task {
                do {
                    for try await element in sequence { elements.write { $0.append(element) } }
                } catch {}
            }
        }
    }

    deinit {
        task.read { $0 }?.cancel()
    }

    /// Waits until `condition` holds for what was collected, up to `timeout` seconds (far
    /// more than the watch needs: this is no measure of its delay); returns whether it held.
    func wait(timeout: TimeInterval = 60, until condition: ([Element]) -> Bool) async -> Bool {
        await eventually(timeout: timeout) { elements.read { condition($0) } }
    }
}

/// Waits until `condition` holds, up to `timeout` seconds; returns whether it held.
private func eventually(timeout: TimeInterval = 60, _ condition: () -> Bool) async -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while Date() < deadline {
        if condition() { return true }
        try? await Task.sleep(nanoseconds: 5_000_000)
    }
    return condition()
}

private func change(_ identifier: String?, _ kind: GarageChange.Kind, _ type: String = "Memo") -> GarageChange {
    GarageChange(typeName: type, identifier: identifier, kind: kind)
}

/// Two garages on one store, in one process or in two: each is told of the other's commits
/// (a read-only file's observation is SQLite's: ReadOnlyObservationTests).
@Suite("Observing commits made by other garages and other processes")
struct SharedStoreObservationTests {
    @Test(.timeLimit(.minutes(2)))
    func anotherGaragesCommitsAreToldWithTheirKinds() async throws {
        let directory = try TemporaryDirectory()
        let writer = try TestEngine.garage(path: directory.path("store.garage"))
        let observer = try TestEngine.garage(path: directory.path("store.garage"))
        let changes = Collected(observer.changes(of: Memo.self))

        try await writer.park(Memo(id: "a", text: "1"))
        #expect(await changes.wait { $0.joined().contains(change("a", .parked)) })
        try await writer.park(Counter(id: 1, value: 1))                    // another type: not told
        try await writer.setSyncStatus(.synced, for: Memo(id: "a", text: ""))
        #expect(await changes.wait { $0.joined().contains(change("a", .syncStatusChanged)) })
        try await writer.park(Memo(id: "a", text: "2", syncStatus: .synced))
        #expect(await changes.wait { $0.joined().filter { $0 == change("a", .parked) }.count == 2 })
        // A synced object leaves a tombstone: for observers, it is deleted all the same.
        try await writer.delete(Memo.self, identifier: "a")
        #expect(await changes.wait { $0.joined().contains(change("a", .deleted)) })
        try await writer.parkAll([Memo(id: "b", text: ""), Memo(id: "c", text: "")])
        #expect(await changes.wait { Set($0.joined()).isSuperset(of: [change("b", .parked), change("c", .parked)]) })
        try await writer.deleteAll(Memo.self)
        #expect(await changes.wait { Set($0.joined()).isSuperset(of: [change("b", .deleted), change("c", .deleted)]) })

        #expect(changes.elements.read { $0.joined().allSatisfy { $0.typeName == "Memo" } })
        #expect(changes.elements.read { $0.joined().count } == 8, "\(changes.elements.read { $0 })")
    }

    @Test(.timeLimit(.minutes(2)))
    func theGaragesOwnCommitsAreToldOnceOnASharedStore() async throws {
        let directory = try TemporaryDirectory()
        let other = try TestEngine.garage(path: directory.path("store.garage"))
        let garage = try TestEngine.garage(path: directory.path("store.garage"))
        let changes = Collected(garage.changes(of: Memo.self))

        try await garage.park(Memo(id: "mine", text: ""))
        try await garage.setSyncStatus(.synced, for: Memo(id: "mine", text: ""))
        try await other.park(Memo(id: "theirs", text: ""))
        // The watch tells commits in order: once the other garage's park is told, a second
        // telling of this garage's own would have come before it.
        #expect(await changes.wait { $0.joined().contains(change("theirs", .parked)) })
        try await garage.delete(Memo.self, identifier: "mine")
        try await other.park(Memo(id: "theirs", text: "again"))
        #expect(await changes.wait { $0.joined().filter { $0.identifier == "theirs" }.count == 2 })
        #expect(changes.elements.read { Array($0.joined()) } == [
            change("mine", .parked), change("mine", .syncStatusChanged), change("theirs", .parked),
            change("mine", .deleted), change("theirs", .parked),
        ])
    }

    /// A look that reads a type's stamps for the garage's own commit compares them all, even
    /// though the counter of others' commits has not moved yet: another garage's commit in
    /// them is told (PostgreSQL's notification may arrive after it; taking the stamps without
    /// comparing lost that park for good, as the PostgreSQL pass of the test above found).
    @Test(.timeLimit(.minutes(2)))
    func anotherGaragesCommitReadBeforeItsNewsIsTold() async throws {
        let store = ReferenceEngine.Store()
        let engine = ReferenceEngine(sharing: store)
        engine.othersCommitCounterHeld.write { $0 = 0 }
        let garage = try Garage(engine: GarageEngine(engine))
        let other = try Garage(engine: GarageEngine(ReferenceEngine(sharing: store)))
        let changes = Collected(garage.changes(of: Memo.self))
        // The watch's first look (which compares whatever the counter says) is over before
        // the other garage parks: waiting for one of its own commits to be told.
        try await garage.park(Memo(id: "first", text: ""))
        #expect(await changes.wait { $0.joined().contains(change("first", .parked)) })
        try await Task.sleep(nanoseconds: 2 * CommitWatch.interval)
        try await other.park(Memo(id: "theirs", text: ""))
        try await garage.park(Memo(id: "mine", text: ""))
        #expect(await changes.wait { $0.joined().contains(change("theirs", .parked)) })
        #expect(changes.elements.read { $0.joined().filter { $0.identifier == "theirs" }.count } == 1)
    }

    @Test(.timeLimit(.minutes(2)))
    func oneObjectsValuesArriveFromAnotherGarage() async throws {
        let directory = try TemporaryDirectory()
        let writer = try TestEngine.garage(path: directory.path("store.garage"))
        let observer = try TestEngine.garage(path: directory.path("store.garage"))
        // Subscribed, then changed at once: the subscription read the object's stamp, so the
        // park is told even though it lands before the watch first looks.
        let values = Collected(try observer.changes(to: Memo.self, identifier: "n"))
        try await writer.park(Memo(id: "n", text: "first"))
        #expect(await values.wait { $0.last??.text == "first" })
        try await writer.park(Memo(id: "other", text: ""))                  // another object: not told
        try await writer.park(Memo(id: "n", text: "second"))
        #expect(await values.wait { $0.last??.text == "second" })
        try await writer.delete(Memo.self, identifier: "n")
        #expect(await values.wait { $0.count >= 3 && $0.last! == nil })
        #expect(values.elements.read { $0.map { $0?.text } } == ["first", "second", nil])
    }

    @Test(.timeLimit(.minutes(2)))
    func aSyncJobInAnotherGarageIsToldAsStatusChanges() async throws {
        let directory = try TemporaryDirectory()
        let job = try TestEngine.garage(path: directory.path("store.garage"))
        let app = try TestEngine.garage(path: directory.path("store.garage"))
        try await app.parkAll([Memo(id: "a", text: ""), Memo(id: "b", text: "")])
        let changes = Collected(app.changes(of: Memo.self))
        let claim = try await job.claim(Memo.self, limit: 10)
        #expect(await changes.wait { Set($0.joined()) == [change("a", .syncStatusChanged), change("b", .syncStatusChanged)] })
        try await job.complete(claim)
        #expect(await changes.wait { $0.joined().count == 4 })
        #expect(try await app.retrieve(Memo.self, identifier: "a")?.syncStatus == .synced)
    }

    @Test(.timeLimit(.minutes(2)))
    func aSubscriptionThatEndsStopsTheWatch() async throws {
        let directory = try TemporaryDirectory()
        let writer = try TestEngine.garage(path: directory.path("store.garage"))
        let observer = try TestEngine.garage(path: directory.path("store.garage"))
        do {
            let changes = Collected(observer.changes(of: Memo.self))
            try await writer.park(Memo(id: "a", text: ""))
            #expect(await changes.wait { !$0.isEmpty })
        }
        // The collecting task was cancelled with its collector: the subscription ends.
        #expect(await eventually { !observer.observers.isListening })
        // Observing again starts a new watch, from the store as it is now.
        let again = Collected(observer.changes(of: Memo.self))
        try await writer.park(Memo(id: "b", text: ""))
        #expect(await again.wait { $0.joined().contains(change("b", .parked)) })
        #expect(!again.elements.read { $0.joined().contains(change("a", .parked)) })
    }

    @Test(.timeLimit(.minutes(3)), .acrossProcesses)
    func anotherProcesssParksAreObserved() async throws {
        let worker = try #require(stressWorkerExecutable(), "garage-stress-worker is built next to the tests")
        let directory = try TemporaryDirectory()
        let storePath = directory.path("store.garage")
        let garage = try TestEngine.garage(path: storePath, busyTimeout: 30)
        let changes = Collected(garage.changes(of: StressDocument.self))
        let values = Collected(try garage.changes(to: StressDocument.self, identifier: "other-0"))

        // An editor process parks other-0 ..< other-4, three rounds each: versions 1, 2, 3.
        let process = try ChildProcess(executable: worker, arguments: [storePath, "editor", "other", "4", "3"])
        process.waitUntilExit()
        #expect(process.exitedCleanly)

        let expected = Set((0..<4).map { GarageChange(typeName: "StressDocument", identifier: "other-\($0)", kind: .parked) })
        #expect(await changes.wait { Set($0.joined()) == expected })
        #expect(await values.wait { $0.last??.version == 3 })
        // Versions only go up, and each element is the object as committed then.
        let versions = values.elements.read { $0.compactMap { $0?.version } }
        #expect(versions == versions.sorted() && !versions.isEmpty)
    }
}
