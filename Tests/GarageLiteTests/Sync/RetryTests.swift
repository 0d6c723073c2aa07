import Foundation
@testable import GarageLite
import Testing

/// Retries, failures, poison objects: a failed upload holds its batch back for a while, and an
/// object the server keeps rejecting is held, listed and released by the app, never dropped.
@Suite("Retries and held objects")
struct RetryTests {
    struct Rejected: Error, CustomStringConvertible {
        var description: String { "HTTP 422: the server rejects it" }
    }

    static func garage(_ memos: Int) throws -> Garage {
        let garage = try TestEngine.garage()
        try garage.parkAll((0..<memos).map { Memo(id: "m\($0)", text: "memo \($0)") })
        return garage
    }

    @Test func aFailedBatchIsHeldBackUntilItsRetryTime() throws {
        let garage = try Self.garage(2)
        let claim = try garage.claim(Memo.self, limit: 10)
        let report = try garage.release(claim, retryAfter: 3_600, error: Rejected())
        #expect(report.notSynced.sorted() == ["m0", "m1"] && report.failedUploads.sorted() == ["m0", "m1"])
        #expect(try garage.count(Memo.self, withStatus: .notSynced) == 2)
        #expect(try garage.claim(Memo.self, limit: 10).isEmpty)        // not before an hour
        let metadata = try #require(try garage.metadata(Memo.self, identifier: "m0"))
        #expect(metadata.attempts == 1 && metadata.lastError == "HTTP 422: the server rejects it")
        #expect(metadata.retryDate.map { $0 > Date().addingTimeInterval(3_000) } == true)
        #expect(try garage.heldObjects(Memo.self).isEmpty)              // one failure holds nothing
        // A new edit is a new chance, at once; unsaved, it already reads so.
        try garage.withAutosaveDisabled {
            try garage.park(Memo(id: "m1", text: "fixed"))
            let unsaved = try #require(try garage.metadata(Memo.self, identifier: "m1"))
            #expect(unsaved.attempts == 0 && unsaved.lastError == nil && unsaved.retryDate == nil)
            try garage.save()
        }
        let saved = try #require(try garage.metadata(Memo.self, identifier: "m1"))
        #expect(saved.attempts == 0 && saved.lastError == nil && saved.retryDate == nil)
        #expect(try garage.claim(Memo.self, limit: 10).identifiers == ["m1"])
    }

    /// An upload error must not block the queue: the oldest change, which the server always
    /// rejects, is claimed first by every job, until it is held.
    @Test func anObjectThatKeepsFailingIsHeldAndTheOthersGoOn() throws {
        let garage = try TestEngine.garage()
        garage.maximumUploadAttempts = 3
        try garage.park(Memo(id: "poison", text: "rejected"))
        try garage.parkAll([Memo(id: "m0", text: "memo 0"), Memo(id: "m1", text: "memo 1")])
        for attempt in 1...3 {
            let claim = try garage.claim(Memo.self, limit: 1)
            #expect(claim.identifiers == ["poison"], "attempt \(attempt)")
            try garage.release(claim, retryAfter: 0, error: Rejected())
        }
        #expect(try garage.heldObjects(Memo.self)
            == [HeldObject(identifier: "poison", attempts: 3, lastError: "HTTP 422: the server rejects it")])
        // The held object is skipped; the others are claimed.
        let next = try garage.claim(Memo.self, limit: 10)
        #expect(next.identifiers.sorted() == ["m0", "m1"])
        try garage.complete(next)
        // Nothing was dropped: it is still there, unsynced, until the app decides.
        #expect(try garage.syncStatus(for: Memo(id: "poison", text: "")) == .notSynced)
        #expect(try garage.retrieve(Memo.self, identifier: "poison")?.text == "rejected")
        #expect(try garage.retryHeld(Memo.self) == 1)
        #expect(try garage.heldObjects(Memo.self).isEmpty)
        #expect(try garage.claim(Memo.self, limit: 10).identifiers == ["poison"])
    }

    /// When the server says which objects it rejected, the others of the batch sync, and only
    /// the rejected one counts failures until it is held.
    @Test func rejectedObjectsAloneCountFailures() async throws {
        let garage = try TestEngine.garage()
        garage.maximumUploadAttempts = 2
        try await garage.parkAll([Memo(id: "a", text: "a"), Memo(id: "poison", text: "p"), Memo(id: "b", text: "b")])
        var uploaded: Set<String> = []
        for round in 1...3 {
            let claim = try await garage.claim(Memo.self, limit: 10)
            uploaded.formUnion(claim.identifiers.filter { $0 != "poison" })
            let report = try await garage.complete(claim, rejected: ["poison": Rejected()], retryAfter: 0)
            #expect(report.notSynced == (claim.identifiers.contains("poison") ? ["poison"] : []), "round \(round)")
            try await garage.park(Memo(id: "a", text: "a \(round)"))          // the app keeps editing
        }
        #expect(uploaded == ["a", "b"])
        #expect(try await garage.heldObjects(Memo.self).map(\.description) == ["poison: 2 failed uploads, last: HTTP 422: the server rejects it"])
        #expect(try await garage.syncStatus(for: Memo(id: "b", text: "")) == .synced)
        #expect(try await garage.claim(Memo.self, limit: 10).identifiers == ["a"])
    }

    /// By default a rejected object waits a minute: a job claiming until nothing is left does
    /// not burn its attempts in one run. A new edit lets claims take it at once.
    @Test func aRejectedObjectWaitsUntilItIsEditedAgain() throws {
        let garage = try TestEngine.garage()
        try garage.parkAll([Memo(id: "a", text: "a"), Memo(id: "poison", text: "p")])
        let report = try garage.complete(try garage.claim(Memo.self, limit: 10), rejected: ["poison": Rejected()])
        #expect(report.synced == ["a"] && report.notSynced == ["poison"] && report.failedUploads == ["poison"])
        #expect(try garage.claim(Memo.self, limit: 10).isEmpty)
        #expect(try garage.syncStatus(for: Memo(id: "poison", text: "")) == .notSynced)
        try garage.park(Memo(id: "poison", text: "fixed"))
        #expect(try garage.claim(Memo.self, limit: 10).identifiers == ["poison"])
    }

    @Test func aCompletedClaimForgetsTheFailures() throws {
        let garage = try Self.garage(1)
        garage.maximumUploadAttempts = 2
        try garage.release(try garage.claim(Memo.self, limit: 10), retryAfter: 0, error: Rejected())
        try garage.complete(try garage.claim(Memo.self, limit: 10))
        try garage.park(Memo(id: "m0", text: "edited"))
        try garage.release(try garage.claim(Memo.self, limit: 10), retryAfter: 0, error: Rejected())
        // One failure since it synced: not held.
        #expect(try garage.heldObjects(Memo.self).isEmpty)
        #expect(try garage.claim(Memo.self, limit: 10).identifiers == ["m0"])
    }

    @Test func aPlainReleaseCountsNoFailure() throws {
        let garage = try Self.garage(1)
        garage.maximumUploadAttempts = 1
        try garage.release(try garage.claim(Memo.self, limit: 10))
        #expect(try garage.claim(Memo.self, limit: 10).identifiers == ["m0"])
    }

    @Test func aDeletionTheServerRejectsIsHeldToo() async throws {
        let garage = try Self.garage(1)
        garage.maximumUploadAttempts = 1
        try await garage.complete(try await garage.claim(Memo.self, limit: 10))
        try await garage.delete(Memo.self, identifier: "m0")
        let claim = try await garage.claim(Memo.self, limit: 10)
        #expect(claim.deletions == ["m0"])
        try await garage.release(claim, retryAfter: 0, error: Rejected())
        #expect(try await garage.heldObjects(Memo.self).map(\.identifier) == ["m0"])
        #expect(try await garage.claim(Memo.self, limit: 10).isEmpty)
        #expect(try await garage.retryHeld(Memo.self, identifiers: ["m0"]) == 1)
        #expect(try await garage.claim(Memo.self, limit: 10).deletions == ["m0"])
    }
}
