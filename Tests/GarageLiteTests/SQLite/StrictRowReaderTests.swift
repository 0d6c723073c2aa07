@testable import GarageLite
import Foundation
import Testing

/// One strict reader for every row: a column of the wrong type is `corruptData` naming the
/// object and the column, whichever operation reads it, and the operations that skip bad rows
/// (lossy retrieves, claims) skip it the same way.
@Suite("Strict row reader", .firstPassOnly)
struct StrictRowReaderTests {
    static func store(_ directory: TemporaryDirectory) throws -> (Garage, String) {
        let path = directory.path("garage.sqlite")
        let garage = try Garage(path: path)
        try garage.parkAll((1...3).map { Book(id: $0, title: "Book \($0)", author: Author(id: UUID(), name: "A\($0)")) })
        return (garage, path)
    }

    static func damage(_ path: String, _ column: String, _ literal: String, identifier: String) throws {
        // The SQL is a constant of the test: a column name and an SQL literal.
        try SQLiteFile(path).execute("UPDATE garage_object SET \(column) = \(literal) WHERE type = 'Book' AND identifier = ?",
                                     [identifier])
    }

    /// A row whose creation date holds text was claimed (read as 0), then `complete` and
    /// `release` both threw on it, and every row of the batch stayed `.syncing`.
    @Test func aClaimSkipsARowItCannotReadAndTheBatchCompletes() throws {
        let directory = try TemporaryDirectory()
        let (garage, path) = try Self.store(directory)
        try Self.damage(path, "creationDate", "'yesterday'", identifier: "2")

        let claim = try garage.claim(Book.self, limit: 5)
        #expect(claim.identifiers.sorted() == ["1", "3"])
        let failure = try #require(claim.failures.first)
        #expect(claim.failures.count == 1)
        #expect(failure.identifier == "2")
        guard case GarageError.corruptData("Book", "2", let reason) = failure.error else {
            Issue.record("\(failure.error)")
            return
        }
        #expect(reason == "its creationDate column is not a number")

        #expect(try garage.complete(claim).synced.sorted() == ["1", "3"])
        #expect(try garage.count(Book.self, withStatus: .syncing) == 0)
        // The damaged row keeps its status, and still retrieves: its content is intact.
        #expect(try garage.count(Book.self, withStatus: .notSynced) == 1)
        #expect(try garage.retrieve(Book.self, identifier: 2)?.title == "Book 2")
    }

    @Test func aHandAlteredTableGivesCorruptDataNamingTheObject() throws {
        let directory = try TemporaryDirectory()
        let (garage, path) = try Self.store(directory)
        try Self.damage(path, "revision", "'two'", identifier: "1")
        try Self.damage(path, "syncStatus", "'synced'", identifier: "3")

        // Claims need the revision: the row is skipped and named.
        let claim = try garage.claim(Book.self, limit: 5, status: .notSynced)
        #expect(claim.identifiers == ["2"])
        #expect(claim.failures.map(\.identifier) == ["1"])
        #expect("\(claim.failures[0].error)".contains("its revision column is not an integer"))
        try garage.release(claim)

        // A retrieve needs the status.
        #expect(throws: GarageError.corruptData(typeName: "Book", identifier: "3",
                                                reason: "its syncStatus column is not an integer")) {
            try garage.retrieveAll(Book.self)
        }
        let lossy = try garage.retrieveAllLossy(Book.self)
        #expect(lossy.objects.map(\.id) == [1, 2])
        #expect(lossy.failures.map(\.identifier) == ["3"])
        // Counts by status don't read the rows: a status that is no status is in none.
        #expect(try garage.syncStatusCounts()["Book"] == [.notSynced: 2])
        // Metadata needs the revision.
        #expect(throws: GarageError.corruptData(typeName: "Book", identifier: "1",
                                                reason: "its revision column is not an integer")) {
            try garage.metadata(Book.self, identifier: 1)
        }
    }

    @Test func nullWhereTheSchemaAllowsItIsNotCorrupt() throws {
        let garage = try Garage.inMemory()
        try garage.park(Counter(id: 1, value: 1))
        let metadata = try #require(try garage.metadata(Counter.self, identifier: 1))
        #expect(metadata.claimDate == nil)
        #expect(metadata.revision == 1)
    }
}
