import Crypto
import Foundation
import GarageLite
import Testing

/// Issue 28: a query that can't be answered as written is an error naming the type, the query
/// and what is wrong, at its first use, never an empty result.
@Suite("A query's mistakes are errors")
struct QueryErrorTests {
    static func reason(_ body: () throws -> Void) throws -> String {
        let error = try #require(throws: GarageError.self) { try body() }
        guard case .invalidQuery(let type, let query, let reason) = error else {
            Issue.record("expected invalidQuery, got \(error)")
            return ""
        }
        #expect(!type.isEmpty && !query.isEmpty)
        return reason
    }

    static func bookGarage() throws -> Garage {
        let garage = try TestEngine.garage()
        let author = Author(id: UUID(), name: "Ursula")
        try garage.parkAll([Book(id: 1, title: "Earthsea", author: author), Book(id: 2, title: "Lathe", author: author)])
        return garage
    }

    @Test func aPropertyTheTypeDoesNotEncodeIsNamedWithTheKeysItHas() throws {
        let garage = try Self.bookGarage()
        let reason = try Self.reason { _ = try garage.retrieve(Query(Book.self).filter(Field("titel") == "Earthsea")) }
        #expect(reason.contains("no property \"titel\"") && reason.contains("title"), "\(reason)")
        // count and identifiers check as retrieve does, and so does an order.
        #expect(try Self.reason { _ = try garage.count(Query(Book.self).filter(Field("pages") > 3)) }.contains("\"pages\""))
        #expect(try Self.reason { _ = try garage.identifiers(Query(Book.self).sorted(by: Field("year"))) }.contains("\"year\""))
        // A class model too, with a nested value's property.
        let people = try TestEngine.garage()
        #expect(try Self.reason { _ = try people.retrieve(Query(Person.self).filter(Field("address", "town") == "Oslo")) }
            .contains("address has no property \"town\""))
        #expect(try people.retrieve(Query(Person.self).filter(Field("address", "city") == "Oslo")).isEmpty)
    }

    @Test func aComparisonWithAValueOfAnotherKindIsRefused() throws {
        let garage = try Self.bookGarage()
        #expect(try Self.reason { _ = try garage.retrieve(Query(Book.self).filter(Field("title") > 3)) }
            .contains("title holds strings, not a number"))
        #expect(try Self.reason { _ = try garage.retrieve(Query(Book.self).filter(Field("id") == "1")) }
            .contains("id holds numbers, not a string"))
        #expect(try Self.reason { _ = try garage.retrieve(Query(Book.self).filter(Field("id").hasPrefix("1"))) }
            .contains("not strings"))
        #expect(try Self.reason { _ = try garage.retrieve(Query(Book.self).filter(Field("title").contains("E"))) }
            .contains("not arrays"))
        #expect(try Self.reason { _ = try garage.retrieve(Query(Book.self).sorted(by: Field("coAuthors"))) }
            .contains("no order"))
        // Null compares with anything: a missing or null property.
        #expect(try garage.count(Query(Book.self).filter(Field("title") == nil)) == 0)
    }

    @Test func aReferenceIsItsIdentifierAndItsInsideIsRefused() throws {
        let garage = try TestEngine.garage()
        let ursula = Author(id: UUID(), name: "Ursula"), ted = Author(id: UUID(), name: "Ted")
        try garage.parkAll([Book(id: 1, title: "Earthsea", author: ursula), Book(id: 2, title: "Story", author: ted)])
        let reason = try Self.reason { _ = try garage.retrieve(Query(Book.self).filter(Field("author", "name") == "Ursula")) }
        #expect(reason.contains("author is a reference to a Author") && reason.contains(".references(Author.self, where:"), "\(reason)")
        // The stub holds the identifier: books by one author, without reading the authors.
        let byUrsula = Query(Book.self).filter(Field("author") == ursula.id.uuidString)
        #expect(try garage.retrieve(byUrsula).map(\.title) == ["Earthsea"])
        #expect(try garage.retrieve(byUrsula).first?.author == ursula, "the graph is whole")
    }

    @Test func anEncryptedGarageQueriesStatusesAndDatesOnly() throws {
        let garage = try TestEngine.garage(encryptionKey: .key(SymmetricKey(size: .bits256)))
        try garage.parkAll([Book(id: 1, title: "Earthsea", author: Author(id: UUID(), name: "U"))])
        let reason = try Self.reason { _ = try garage.retrieve(Query(Book.self).filter(Field("title") == "Earthsea")) }
        #expect(reason.contains("encrypts"), "\(reason)")
        let notSynced = Query(Book.self).filter(.syncStatus(.notSynced)).sortedByModificationDate(.descending)
        #expect(try garage.retrieve(notSynced).map(\.id) == [1])
    }

    /// Tools query records by stored type name; a query of records without one is refused.
    @Test func aQueryOfRecordsNamesItsStoredType() throws {
        let garage = try Self.bookGarage()
        let found = try garage.records(matching: Query(recordsOf: "Book").filter(Field("title") == "Earthsea"))
        #expect(found.map(\.identifier) == ["1"])
        #expect(try Self.reason { _ = try garage.records(matching: Query(ObjectRecord.self)) }.contains("recordsOf"))
    }
}

