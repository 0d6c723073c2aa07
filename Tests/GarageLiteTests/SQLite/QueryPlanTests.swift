import Foundation
@testable import GarageLite
import Testing

/// Issue 28: a query whose condition compares an indexed property reads the index (SQLite's
/// plan of the statement the engine runs).
@Suite("SQLite query plans")
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
}
