import Foundation
import Testing
@testable import GarageLite

/// Issue 25, found by `RowRulesTests`: a park over a tombstone brings the object back, even
/// when it parks the very content the tombstone kept (a parent parked again with a child the
/// app had deleted).
@Suite("Parking over a tombstone")
struct ParkOverTombstoneTests {
    struct RevivedLeaf: Codable, Identifiable, Syncable, Sendable, Equatable {
        var id: String
        var text: String
        var syncStatus: SyncStatus = .notSynced
    }

    struct RevivedHolder: Codable, Identifiable, Sendable {
        var id: String
        var leaves: [RevivedLeaf]
    }

    @Test func aChildDeletedThenParkedAgainWithItsParentComesBack() throws {
        let garage = try TestEngine.garage()
        let leaf = RevivedLeaf(id: "l", text: "kept")
        try garage.park(RevivedHolder(id: "h", leaves: [leaf]))
        // Uploaded: a copy is on the server, so deleting the child leaves a tombstone.
        let claim = try garage.claim(RevivedLeaf.self, limit: 10)
        #expect(claim.identifiers == ["l"])
        _ = try garage.complete(claim)
        #expect(try garage.delete(RevivedLeaf.self, identifier: "l", rule: .nullify(in: RevivedHolder.self)))
        #expect(try garage.retrieve(RevivedLeaf.self, identifier: "l") == nil)

        try garage.park(RevivedHolder(id: "h", leaves: [leaf]))
        #expect(try garage.retrieve(RevivedLeaf.self, identifier: "l")?.text == "kept")
        #expect(try garage.retrieve(RevivedHolder.self, identifier: "h")?.leaves.map(\.id) == ["l"])
        // Back as an edit to upload: the server was told of no deletion yet, or will be told
        // of it, then of the object again.
        #expect(try garage.syncStatus(for: leaf) == .notSynced)
    }
}
