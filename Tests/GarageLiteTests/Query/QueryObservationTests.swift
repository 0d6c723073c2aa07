import Foundation
import GarageLite
import Testing

/// Issue 28: `changes(matching:)` yields a query's objects again after each commit that changed
/// them, and nothing for a commit that leaves them as they were; `objects(matching:)` streams
/// an answer a page at a time.
@Suite("Observing and streaming a query")
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

    @Test func aLargeAnswerStreamsAPageAtATime() async throws {
        let garage = try TestEngine.garage()
        let author = Author(id: UUID(), name: "Ursula")
        try await garage.parkAll((0..<250).map { Book(id: $0, title: "Book \($0 % 17)", author: author) })
        let query = Query(Book.self).filter(Field("id") >= 10).sorted(by: Field("title"), .descending)
        var streamed: [Int] = []
        for try await book in garage.objects(matching: query, pageSize: 7) { streamed.append(book.id) }
        #expect(streamed.map(String.init) == (try await garage.identifiers(query)))
        #expect(streamed.count == 240)

        var limited: [Int] = []
        for try await book in garage.objects(matching: query.limit(10), pageSize: 4) { limited.append(book.id) }
        #expect(limited == Array(streamed.prefix(10)))
    }
}

