import Foundation
import Testing
@testable import GarageLite

/// The counts (`count(_:)`, `count(_:withStatus:)`, `count()`) agree with the objects after
/// every kind of write: random sequences of parks, status changes, deletions, claims, downloads,
/// purges, unsaved changes and rolled-back transactions, each followed by a comparison of every
/// count with the objects themselves (`retrieveAll`). It guards any store of counts kept beside
/// the rows (issue 46 tried one, kept by triggers: see Benchmarks/README.md).
@Suite("Counts kept by the store")
struct CountsTests {
    struct CountedCard: Codable, Identifiable, Syncable, Sendable, Equatable {
        var id: String
        var text: String
        var syncStatus: SyncStatus = .notSynced
    }

    /// Every count the garage answers, against the objects it retrieves (its unsaved changes
    /// included): per type and status, per type, in all.
    private func expectCountsMatchRows(_ garage: Garage, after step: String) throws {
        let memos = try garage.retrieveAll(Memo.self).map(\.syncStatus)
        let cards = try garage.retrieveAll(CountedCard.self).map(\.syncStatus)
        #expect(try garage.count(Memo.self) == memos.count, "Memo after \(step)")
        #expect(try garage.count(CountedCard.self) == cards.count, "CountedCard after \(step)")
        for status in SyncStatus.allCases {
            #expect(try garage.count(Memo.self, withStatus: status) == memos.filter { $0 == status }.count,
                    "Memo, \(status) after \(step)")
            #expect(try garage.count(CountedCard.self, withStatus: status) == cards.filter { $0 == status }.count,
                    "CountedCard, \(status) after \(step)")
        }
        #expect(try garage.count() == memos.count + cards.count, "all after \(step)")
    }

    @Test(arguments: TestEngine.onReference, [1, 2, 3])
    func everyWriteKeepsTheCounts(onReference: Bool, seed: UInt64) throws {
        let garage = try TestEngine.garage(onReference: onReference)
        var random = SplitMix64(state: seed)
        var claims: [Claim<Memo>] = []
        for step in 0..<60 {
            let id = "m\(Int.random(in: 0..<12, using: &random))"
            let status = SyncStatus.allCases[Int.random(in: 0..<SyncStatus.allCases.count, using: &random)]
            let operation = Int.random(in: 0..<14, using: &random)
            let name: String
            switch operation {
            case 0, 1:
                name = "park \(id) \(status)"
                try garage.park(Memo(id: id, text: "t\(step)", syncStatus: status))
            case 2:
                name = "parkAll"
                try garage.parkAll((0..<4).map { CountedCard(id: "c\(Int.random(in: 0..<6, using: &random))", text: "t\(step)-\($0)",
                                                      syncStatus: status) })
            case 3:
                name = "setSyncStatus \(id) \(status)"
                if let memo = try garage.retrieve(Memo.self, identifier: id) { try garage.setSyncStatus(status, for: memo) }
            case 4:
                name = "delete \(id)"
                try? garage.delete(Memo.self, identifier: id)
            case 5:
                name = "claim"
                claims.append(try garage.claim(Memo.self, limit: 3))
            case 6:
                name = "complete"
                if !claims.isEmpty { _ = try garage.complete(claims.removeFirst()) }
            case 7:
                name = "release"
                if !claims.isEmpty { _ = try garage.release(claims.removeFirst(), retryAfter: 0) }
            case 8:
                name = "parkDownloaded"
                try garage.parkDownloaded([Memo(id: id, text: "server \(step)", syncStatus: .synced)],
                                          onConflict: .takeDownloaded)
            case 9:
                name = "deleteDownloaded \(id)"
                try garage.deleteDownloaded(Memo.self, identifiers: [id], onConflict: .takeDownloaded)
            case 10:
                name = "purgeSyncedTombstones"
                _ = try garage.purgeSyncedTombstones()
            case 11:
                name = "deleteAll(CountedCard)"
                if Int.random(in: 0..<3, using: &random) == 0 { _ = try garage.deleteAll(CountedCard.self) }
            case 12:
                name = "unsaved parks, counted, then saved"
                try garage.withAutosaveDisabled {
                    try garage.park(Memo(id: id, text: "unsaved \(step)", syncStatus: status))
                    try garage.park(CountedCard(id: "c-unsaved", text: "unsaved", syncStatus: status))
                    try expectCountsMatchRows(garage, after: name + " (before the save)")
                    try garage.save()
                }
            default:
                name = "a transaction rolled back"
                struct Rollback: Error {}
                _ = try? garage.transaction {
                    try garage.park(Memo(id: "m-rolled-back", text: "x", syncStatus: status))
                    try garage.delete(Memo.self, identifier: id)
                    throw Rollback()
                }
            }
            try expectCountsMatchRows(garage, after: "step \(step): \(name)")
        }
        for claim in claims { _ = try garage.complete(claim) }
        _ = try garage.deleteAllObjects()
        try expectCountsMatchRows(garage, after: "deleteAllObjects")
    }
}
