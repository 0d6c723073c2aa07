import Foundation
import Testing
@testable import GarageLite

// Bad input, from issue 5: rows damaged through SQLite below the library (JSON cut short, a
// type name changed, a row's data replaced). Moved from Reliability/BadInputTests.swift
// (issue 25): each is an extension of the suite it belongs to.

extension BadRowTests {
    @Test func aRowWithCorruptJSONNamesItselfAndTheOthersStayReadable() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("garage.sqlite")
        let garage = try Garage(path: path)
        try garage.parkAll((1...3).map { Counter(id: $0, value: $0 * 10) })
        try rawWrite(path, "UPDATE garage_object SET data = '{\"id\":2,\"value\":' WHERE type = 'Counter' AND identifier = '2'")

        let error = try #require(throws: GarageError.self) { try garage.retrieve(Counter.self, identifier: 2) }
        guard case let .corruptData(type, identifier, reason) = error else {
            Issue.record("expected corruptData, got \(error)")
            return
        }
        #expect(type == "Counter" && identifier == "2")
        #expect(reason.hasPrefix("its JSON is invalid: unexpected end of data"))
        expect(error, says: ["type Counter", "identifier 2", "Park the object again, or delete it"])
        #expect(try garage.retrieve(Counter.self, identifier: 1)?.value == 10)
        #expect(try garage.retrieve(Counter.self, identifier: 3)?.value == 30)

        // retrieveAll names the bad row; the lossy variant returns the others beside it.
        #expect(throws: error) { try garage.retrieveAll(Counter.self) }
        let lossy = try garage.retrieveAllLossy(Counter.self)
        #expect(lossy.objects.map(\.id) == [1, 3])
        #expect(lossy.failures.map(\.identifier) == ["2"])
        #expect(lossy.failures.first?.typeName == "Counter")
        #expect(lossy.failures.first?.error as? GarageError == error)
        #expect(lossy.failures.first?.description.contains("type Counter with identifier 2") == true)
        #expect(!lossy.isComplete)

        // Replacing the row mends it.
        try garage.park(Counter(id: 2, value: 21))
        #expect(try garage.retrieveAllLossy(Counter.self).isComplete)
        #expect(try garage.retrieveAll(Counter.self).map(\.value) == [10, 21, 30])
    }

    @Test func aReferenceToARowOfTheWrongTypeNamesBothRows() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("garage.sqlite")
        let garage = try Garage(path: path)
        let author = Author(id: UUID(), name: "Calvino")
        let guarantor = Author(id: UUID(), name: "Guarantor")
        try garage.parkAll([
            Loan(id: "a", book: Book(id: 1, title: "Invisible Cities", author: author), guarantor: guarantor),
            Loan(id: "b", book: Book(id: 2, title: "Mr Palomar", author: author), guarantor: guarantor),
        ])
        // Book 1's row now holds another type.
        try rawWrite(path, "UPDATE garage_object SET type = 'Volume' WHERE type = 'Book' AND identifier = '1'")

        let error = try #require(throws: DecodingError.self) { try garage.retrieve(Loan.self, identifier: "a") }
        let description = describe(error)
        #expect(description.hasPrefix("Loan(a): Missing Identifiable reference: no object of type Book with identifier 1"))
        #expect(description.contains("Park it again, or make the property optional"))
        #expect(try garage.retrieve(Loan.self, identifier: "b")?.book.title == "Mr Palomar")
        let lossy = try garage.retrieveAllLossy(Loan.self)
        #expect(lossy.objects.map(\.id) == ["b"])
        #expect(lossy.failures.map(\.identifier) == ["a"])

        // An optional reference to a row that moved decodes as nil, as documented.
        try rawWrite(path, "UPDATE garage_object SET type = 'Writer' WHERE identifier = '\(guarantor.id.uuidString)'")
        #expect(try garage.retrieve(Loan.self, identifier: "b")?.guarantor == nil)
    }

    @Test func aReferencedRowWithTheWrongShapeNamesTheParentAndTheChild() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("garage.sqlite")
        let garage = try Garage(path: path)
        let author = Author(id: UUID(), name: "Calvino")
        try garage.parkAll([
            Loan(id: "a", book: Book(id: 1, title: "Invisible Cities", author: author), guarantor: nil),
            Loan(id: "b", book: Book(id: 2, title: "Mr Palomar", author: author), guarantor: nil),
        ])
        try rawWrite(path, "UPDATE garage_object SET data = '{\"id\":1,\"name\":\"not a book\"}' WHERE type = 'Book' AND identifier = '1'")
        let error = try #require(throws: DecodingError.self) { try garage.retrieve(Loan.self, identifier: "a") }
        let description = describe(error)
        #expect(description.hasPrefix("Loan(a): Book(1): "))
        #expect(description.hasSuffix(DecodingError.whatToDo))
        #expect(description.components(separatedBy: DecodingError.whatToDo).count == 2, "said once")
        #expect(try garage.retrieve(Loan.self, identifier: "b")?.book.id == 2)
        #expect(try garage.retrieveAllLossy(Book.self).objects.map(\.id) == [2])
    }

    @Test func aClaimSkipsRowsItCannotDecodeAndReportsThem() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("garage.sqlite")
        let garage = try Garage(path: path)
        let notes = (0..<4).map { Note(text: "note \($0)", tags: []) }
        for note in notes { try garage.park(note) }     // oldest first
        let bad = try garage.identifier(for: notes[0])
        try rawWrite(path, "UPDATE garage_object SET data = 'not json' WHERE type = 'Note' AND identifier = '\(bad)'")

        let claim = try garage.claim(Note.self, limit: 2)
        #expect(claim.objects.map(\.text) == ["note 1", "note 2"])
        #expect(claim.failures.map(\.identifier) == [bad])
        guard case .corruptData("Note", bad, _)? = claim.failures.first?.error as? GarageError else {
            Issue.record("expected corruptData naming Note(\(bad)), got \(claim.failures)")
            return
        }
        #expect(try garage.syncStatus(for: notes[1]) == .syncing)
        // The bad row is left as it was: unclaimed, and still waiting to be synced.
        #expect(try garage.metadata(Note.self, identifier: bad)?.syncStatus == .notSynced)
        #expect(try garage.metadata(Note.self, identifier: bad)?.claimDate == nil)
        #expect(try garage.complete(claim).synced.count == 2)
        let next = try garage.claim(Note.self, limit: 10)
        #expect(next.objects.map(\.text) == ["note 3"])
        #expect(next.failures.map(\.identifier) == [bad])
    }
}

extension BadSizeTests {
    @Test func aThousandDeepChainOfReferencesParksAndRetrievesOnASmallStack() async throws {
        let garage = try Garage.inMemory()
        var head = ChainLink(id: 0, next: nil)
        for id in 1..<1_000 { head = ChainLink(id: id, next: head) }
        let chain = head
        try await garage.park(chain)
        #expect(try await garage.count(ChainLink.self) == 1_000)

        // A Foundation thread with a 512 KB stack, as a dispatch queue's on Apple platforms.
        let onThread = try onSmallStack { try garage.retrieve(ChainLink.self, identifier: 999).map(lengthOf) }
        #expect(onThread == 1_000)
        let all = try onSmallStack { try garage.retrieveAll(ChainLink.self).map(lengthOf) }
        #expect(all.sorted() == Array(1...1_000))
        // Swift concurrency: the synchronous API in a task, and the asynchronous one.
        let inTask = try await Task.detached { try garage.retrieve(ChainLink.self, identifier: 999).map(lengthOf) }.value
        #expect(inTask == 1_000)
        #expect(try await garage.retrieve(ChainLink.self, identifier: 999).map(lengthOf) == 1_000)
        #expect(try await garage.retrieve(ChainLink.self, identifier: 500).map(lengthOf) == 501)
        // A link that can't be read deep in the chain still names itself.
        try garage.store.sql.execute("UPDATE garage_object SET data = '{' WHERE type = 'ChainLink' AND identifier = '3'")
        let error = try #require(throws: GarageError.self) {
            try onSmallStack { try garage.retrieve(ChainLink.self, identifier: 999) }
        }
        #expect(error == .corruptData(typeName: "ChainLink", identifier: "3", reason: "its JSON is invalid: expected a key at byte 1"))
    }
}

extension BadIdentifierTests {
    /// SQL aimed at the SQLite store's own table, as an identifier: it is a value like any other.
    @Test func anIdentifierThatIsSQLAgainstTheObjectTableRoundTrips() throws {
        try Self.expectRoundTrip("Robert'); DROP TABLE garage_object;--")
    }
}
