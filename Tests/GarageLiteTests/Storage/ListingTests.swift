import Foundation
@testable import GarageLite
import Testing

/// A node of a graph whose rows reference each other.
final class PFNode: Codable, Identifiable {
    let id: String
    var next: PFNode?

    init(id: String, next: PFNode? = nil) {
        self.id = id
        self.next = next
    }
}

struct PFNote: Codable, Identifiable, Sendable, Equatable {
    var id: String
    var text: String
}

/// `retrieveAll` lets each row go once decoded and keeps only class instances for later
/// references (issue 15: its peak memory).
@Suite("Listings")
struct ListingTests {
    @Test func retrieveAllReadsEveryRowInIdentifierOrder() throws {
        let garage = try TestEngine.garage()
        let notes = (0..<2_345).map { PFNote(id: String(format: "n%05d", $0), text: "note \($0)") }
        try garage.parkAll(notes.shuffled())
        // Deleted rows (tombstones of synced objects) and rows of another type are left out.
        try garage.delete(PFNote.self, identifier: "n01000")
        try garage.park(PFNode(id: "n01500"))
        let expected = notes.filter { $0.id != "n01000" }
        #expect(try garage.retrieveAll(PFNote.self) == expected)
        // With unsaved changes to the type, the merged rows.
        garage.isAutosaveEnabled = false
        try garage.park(PFNote(id: "n99999", text: "pending"))
        try garage.delete(PFNote.self, identifier: "n00000")
        #expect(try garage.retrieveAll(PFNote.self) == Array(expected.dropFirst()) + [PFNote(id: "n99999", text: "pending")])
    }

    @Test(arguments: [("a", "b"), ("b", "a")])
    func aClassInstanceListedAndReferencedIsOneInstance(referrer: String, referenced: String) throws {
        let garage = try TestEngine.garage()
        try garage.park(PFNode(id: referrer, next: PFNode(id: referenced)))
        let nodes = try garage.retrieveAll(PFNode.self)
        let listed = try #require(nodes.first { $0.id == referenced })
        let viaReference = try #require(nodes.first { $0.id == referrer }?.next)
        #expect(listed === viaReference)
    }
}
