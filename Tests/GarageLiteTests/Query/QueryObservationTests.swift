import Foundation
import GarageLite
import Testing

/// Issue 28: `changes(matching:)` yields a query's objects again after each commit that changed
/// them, and nothing for a commit that leaves them as they were.
@Suite("Observing a query")
struct QueryObservationTests {
    @Test func aQuerysObjectsComeAgainWhenTheyChange() async throws {
        let garage = try TestEngine.garage()
        let ursula = Author(id: UUID(), name: "Ursula")
        try await garage.parkAll([Book(id: 1, title: "Earthsea", author: ursula), Book(id: 2, title: "Lathe", author: ursula)])
        let query = Query(Book.self).filter(Field("title").hasPrefix("E")).sorted(by: Field("title"))
        var changes = try garage.changes(matching: query).makeAsyncIterator()

        // A commit that matches nothing, then one that adds an object: one element, with both.
        try await garage.park(Book(id: 3, title: "Zeta", author: ursula))
        try await garage.park(Book(id: 4, title: "Eye of the Heron", author: ursula))
        #expect(try await changes.next()?.map(\.title) == ["Earthsea", "Eye of the Heron"])

        // An edit that moves an object in the order, a status, a deletion.
        try await garage.park(Book(id: 1, title: "Eye", author: ursula))
        #expect(try await changes.next()?.map(\.id) == [1, 4])
        try await garage.setSyncStatus(.synced, for: Book(id: 4, title: "Eye of the Heron", author: ursula))
        #expect(try await changes.next()?.map(\.syncStatus) == [.notSynced, .synced])
        try await garage.delete(Book.self, identifier: 1)
        #expect(try await changes.next()?.map(\.id) == [4])
    }

    @Test func aMistakenQueryIsRefusedWhenObserved() throws {
        let garage = try TestEngine.garage()
        #expect(throws: GarageError.self) { _ = try garage.changes(matching: Query(Book.self).filter(Field("titel") == "x")) }
    }
}
