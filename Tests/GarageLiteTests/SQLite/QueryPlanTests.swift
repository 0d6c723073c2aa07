import Foundation
@testable import GarageLite
@testable import GarageLiteCore
import GarageLiteSQLite
import Testing

/// Issue 28: a query whose condition compares an indexed property reads the index (SQLite's
/// plan of the statement the engine runs).
@Suite("SQLite query plans", .firstPassOnly)
struct QueryPlanTests {
    typealias QueryNote = QueryRuleTests.QueryNote

    @Test func aComparisonOfAnIndexedPropertyReadsTheIndex() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("notes.garage")
        let garage = try Garage(path: path)
        var random = SplitMix64(state: 7)
        try garage.parkAll((0..<200).map { QueryRuleTests.randomNote($0, &random) })
        let byTitle = RowQuery(typeName: "QueryNote", predicate: Field("title") == "milk" && Field("done") == true)
        let byRank = RowQuery(typeName: "QueryNote", predicate: Field("rank").isBetween(1.4, and: 1.6))
        func plan(_ query: RowQuery) throws -> String {
            let statement = try #require(SQLiteQuery.identifiersStatement(query))
            return try SQLiteFile(path).queryPlan(statement.sql, statement.arguments.map { $0.map { "\($0)" } }).joined(separator: "\n")
        }
        #expect(!(try plan(byTitle)).contains("garage_query_"), "no index yet")

        try garage.index(QueryNote.self, on: Field("title"))
        try garage.index(QueryNote.self, on: Field("rank"))
        let titlePlan = try plan(byTitle), rankPlan = try plan(byRank)
        #expect(titlePlan.contains("USING INDEX garage_query_"), "\(titlePlan)")
        #expect(rankPlan.contains("USING INDEX garage_query_"), "\(rankPlan)")
        // Under an `or`, or negated, a condition is no bare term: the type's rows are read.
        let either = RowQuery(typeName: "QueryNote", predicate: Field("title") == "milk" || Field("rank") > 1)
        #expect(!(try plan(either)).contains("garage_query_"))
    }

    /// With the index declared on the store with its objects, or (`emptyFirst`) on the empty
    /// store before they came, when its creation gathered no statistics.
    @Test(arguments: [false, true])
    func anOrderByAnIndexedPropertyReadsTheIndexInOrder(emptyFirst: Bool) throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("notes.garage")
        let garage = try Garage(path: path)
        var random = SplitMix64(state: 11)
        let notes = (0..<300).map { QueryRuleTests.randomNote($0, &random) }
        if emptyFirst {
            try garage.index(QueryNote.self, on: Field("title"))
            try garage.index(QueryNote.self, on: Field("done"), Field("title"))
        }
        try garage.parkAll(notes)
        func plan(_ query: RowQuery) throws -> String {
            let indexes = try garage.indexes().map { QueryIndexDefinition(typeName: $0.typeName, fields: $0.fields, kinds: []) }
            let statement = try #require(SQLiteQuery.identifiersStatement(query, indexes: indexes))
            return try SQLiteFile(path).queryPlan(statement.sql, statement.arguments.map { $0.map { "\($0)" } }).joined(separator: "\n")
        }
        var page = RowQuery(typeName: "QueryNote", predicate: .all, sortOrders: [QuerySort(key: .field(Field("title")), order: .ascending)])
        page.limit = 20
        if !emptyFirst {
            #expect(try plan(page).contains("USE TEMP B-TREE FOR ORDER BY"), "no index yet: every row is sorted")
        }

        try garage.index(QueryNote.self, on: Field("title"))
        let sortedPlan = try plan(page)
        #expect(sortedPlan.contains("USING INDEX garage_query_"), "\(sortedPlan)")
        #expect(!sortedPlan.contains("TEMP B-TREE"), "the index gives the order, ties by identifier: \(sortedPlan)")
        // The order is the rule's (QueryRuleTests holds every order to it, with and without indexes).
        let pageOfTwenty = try garage.identifiers(Query(QueryNote.self).sorted(by: Field("title")).limit(20))
        let expected = QueryRuleTests.expected(notes, { _ in true }, sorts: [(Field("title"), .ascending)], limit: 20)
        #expect(pageOfTwenty == expected)

        // A comparison and an order by the fields of a two-field index read it alone.
        try garage.index(QueryNote.self, on: Field("done"), Field("title"))
        var filtered = RowQuery(typeName: "QueryNote", predicate: Field("done") == true,
                                sortOrders: [QuerySort(key: .field(Field("title")), order: .ascending)])
        filtered.limit = 20
        let filteredPlan = try plan(filtered)
        #expect(filteredPlan.contains("USING INDEX garage_query_"), "\(filteredPlan)")
        #expect(!filteredPlan.contains("TEMP B-TREE"), "\(filteredPlan)")
    }
    /// A feed's entry: what a sync server's download reads in pages after a position.
    struct PlanFeedEntry: Codable, Identifiable {
        var id: String
        var kind: String
        var scope: String
        var position: Int
    }

    /// Issue 44: a page after a position of a feed (equal to two fields, after a value of the
    /// third, in its order) reads the index in order, and only the page: with the order's rank
    /// term (constant, the comparison pins it) SQLite sorted the whole rest of the feed for each
    /// page, and a million objects' first sync took a third of the time it takes 100,000.
    @Test func aPageAfterAPositionReadsTheIndexInOrderWithoutSorting() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("feed.garage")
        let garage = try Garage(path: path)
        try garage.index(PlanFeedEntry.self, on: Field("kind"), Field("scope"), Field("position"))
        try garage.parkAll((0..<300).map { PlanFeedEntry(id: "e\($0)", kind: "Note", scope: "team\($0 % 3)", position: $0) })
        var page = RowQuery(typeName: "PlanFeedEntry",
                            predicate: Field("kind") == "Note" && Field("scope") == "team1" && Field("position") > 100,
                            sortOrders: [QuerySort(key: .field(Field("position")), order: .ascending)])
        page.limit = 21
        let indexes = try garage.indexes().map { QueryIndexDefinition(typeName: $0.typeName, fields: $0.fields, kinds: []) }
        let statement = try #require(SQLiteQuery.identifiersStatement(page, indexes: indexes))
        let plan = try SQLiteFile(path).queryPlan(statement.sql, statement.arguments.map { $0.map { "\($0)" } }).joined(separator: "\n")
        #expect(plan.contains("USING INDEX garage_query_"), "\(plan)")
        #expect(!plan.contains("TEMP B-TREE"), "the page is read in the index's order, not sorted: \(plan)")
        // And it is the page the rule says.
        let found = try garage.retrieve(Query(PlanFeedEntry.self)
            .filter(Field("kind") == "Note" && Field("scope") == "team1" && Field("position") > 100)
            .sorted(by: Field("position")).limit(21))
        #expect(found.map(\.position) == Array(stride(from: 103, to: 300, by: 3).prefix(21)))
    }
}
