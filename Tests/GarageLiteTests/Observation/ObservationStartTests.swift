import Foundation
import Testing
@testable import GarageLite

/// Issue 24, item 8: `changes(to:)` starts from the object as stored at subscription, and
/// yields only values that differ from it, the first one included.
///
/// The commits of a garage reach its observers before the call that made them returns, so a
/// test makes every commit first, then reads the sequence in a task cancelled from the start:
/// the sequence yields for the commits buffered, then ends, with no waiting on the clock.
@Suite("Observing from the value at subscription")
struct ObservationStartTests {
    /// A claim then a release of a struct that is not `Syncable` (its value doesn't hold its
    /// status) leaves its value as it was at subscription: nothing is yielded.
    @Test(arguments: [false, true])
    func aClaimAndAReleaseOfAStructYieldNothing(async: Bool) async throws {
        let garage = try TestEngine.garage()
        try await garage.park(Counter(id: 1, value: 1))
        let values = try garage.changes(to: Counter.self, identifier: 1)
        try await claimAndRelease(Counter.self, in: garage, async: async)
        #expect(try await yielded(by: values).map { $0?.value } == [])
    }

    /// The same with a class.
    @Test(arguments: [false, true])
    func aClaimAndAReleaseOfAClassYieldNothing(async: Bool) async throws {
        let garage = try TestEngine.garage()
        let friend = Friend(id: "f")
        friend.friend = Friend(id: "g")
        try await garage.park(friend)
        let values = try garage.changes(to: Friend.self, identifier: "f")
        try await claimAndRelease(Friend.self, in: garage, async: async)
        #expect(try await yielded(by: values).map { $0?.id } == [])
    }

    /// The sequence still yields real changes, once: the claim and the release, then a park
    /// that changes the value, yield the new value (which the first commit's element already
    /// reads), and nothing for the other elements.
    @Test(arguments: [false, true])
    func aChangeAfterTheClaimIsYieldedOnce(async: Bool) async throws {
        let garage = try TestEngine.garage()
        try await garage.park(Counter(id: 1, value: 1))
        let counters = try garage.changes(to: Counter.self, identifier: 1)
        try await claimAndRelease(Counter.self, in: garage, async: async)
        try await garage.park(Counter(id: 1, value: 2))
        #expect(try await yielded(by: counters).map { $0?.value } == [2])

        let friend = Friend(id: "f")
        try await garage.park(friend)
        let friends = try garage.changes(to: Friend.self, identifier: "f")
        try await claimAndRelease(Friend.self, in: garage, async: async)
        friend.friend = Friend(id: "g")
        try await garage.park(friend)
        #expect(try await yielded(by: friends).map { $0?.friend?.id } == ["g"])
    }

    /// An object that doesn't exist at subscription starts as deleted: commits to other
    /// objects of its type (a `deleteAll`, told for the whole type) yield nothing, and parking
    /// it yields it.
    @Test func anObjectAbsentAtSubscriptionYieldsOnlyWhenParked() async throws {
        let garage = try TestEngine.garage()
        try await garage.park(Counter(id: 2, value: 2))
        let absent = try garage.changes(to: Counter.self, identifier: 1)
        try await garage.deleteAll(Counter.self)
        #expect(try await yielded(by: absent).map { $0?.value } == [])

        let parked = try garage.changes(to: Counter.self, identifier: 1)
        try await garage.deleteAll(Counter.self)
        try await garage.park(Counter(id: 1, value: 1))
        #expect(try await yielded(by: parked).map { $0?.value } == [1])
    }

    /// A `Syncable` object's value holds its status: its claim and its release are changes.
    @Test func aSyncableObjectsClaimIsAChange() async throws {
        let garage = try TestEngine.garage()
        try await garage.park(Memo(id: "m", text: ""))
        let values = try garage.changes(to: Memo.self, identifier: "m")
        let claim = try await garage.claim(Memo.self, limit: 10)
        #expect(try await yielded(by: values).map { $0?.syncStatus } == [.syncing])
        let released = try garage.changes(to: Memo.self, identifier: "m")
        try await garage.release(claim)
        #expect(try await yielded(by: released).map { $0?.syncStatus } == [.notSynced])
    }

    /// Claims every object of type `T` (parked with no sync status) and releases them, with the
    /// synchronous or the `async` entry points.
    private func claimAndRelease<T: Decodable & SendableMetatype>(_ type: T.Type, in garage: Garage, async: Bool) async throws {
        if async {
            let claim = try await garage.claim(T.self, limit: 10, status: .undetermined)
            #expect(!claim.isEmpty)
            try await garage.release(claim)
        } else {
            try claimAndRelease(T.self, in: garage)
        }
    }

    /// The same with the synchronous entry points (a synchronous function calls them).
    private func claimAndRelease<T: Decodable & SendableMetatype>(_ type: T.Type, in garage: Garage) throws {
        let claim = try garage.claim(T.self, limit: 10, status: .undetermined)
        #expect(!claim.isEmpty)
        try garage.release(claim)
    }

    /// What `values` yields for the commits made so far: read in a task cancelled before it
    /// starts, whose sequence reads the elements already buffered, then ends.
    private func yielded<T: Sendable>(by values: ObjectChanges<T>) async throws -> [T?] {
        try await Task {
            withUnsafeCurrentTask { $0?.cancel() }
            var yielded: [T?] = []
            for try await value in values {
                yielded.append(value)
            }
            return yielded
        }.value
    }
}
