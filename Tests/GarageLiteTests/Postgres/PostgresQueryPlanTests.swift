import Foundation
@testable import GarageLite
@testable import GarageLiteCore
@testable import GarageLitePostgres
import Testing

/// Issue 28: on PostgreSQL, a query whose condition compares an indexed property reads the
/// index (the plan of the statement the engine runs).
extension PostgresEngineTests {
    @Test func aComparisonOfAnIndexedPropertyReadsTheIndexOnPostgreSQL() throws {
        let (url, _) = Self.newSchema()
        let garage = try Garage(postgresURL: url)
        var random = SplitMix64(state: 7)
        try garage.parkAll((0..<3_000).map { QueryRuleTests.randomNote($0, &random) })
        try Self.psql("ANALYZE")
        let (configuration, schema) = try PostgresURL.parse(url)
        var options = PostgresGarageOptions()
        options.createsSchema = false
        let engine = try PostgresEngine.open(configuration: configuration, schema: schema, options: options)
        func plan(_ query: RowQuery) throws -> String {
            try engine.read("plan") { statements in
                try #require(statements as? PostgresStatements).queryPlan(matching: query).joined(separator: "\n")
            }
        }
        let byTitle = RowQuery(typeName: "QueryNote", predicate: Field("title") == "milk zoo" && Field("done") == true)
        let byRank = RowQuery(typeName: "QueryNote", predicate: Field("rank") == 1.5)
        #expect(!(try plan(byTitle)).contains("garage_query_"))
        try garage.index(QueryRuleTests.QueryNote.self, on: Field("title"))
        try garage.index(QueryRuleTests.QueryNote.self, on: Field("rank"))
        try Self.psql("ANALYZE")
        let titlePlan = try plan(byTitle), rankPlan = try plan(byRank)
        #expect(titlePlan.contains("garage_query_"), "\(titlePlan)")
        #expect(rankPlan.contains("garage_query_"), "\(rankPlan)")
        #expect(try garage.identifiers(Query(QueryRuleTests.QueryNote.self).filter(Field("title") == "milk zoo"))
            == garage.retrieveAll(QueryRuleTests.QueryNote.self).filter { $0.title == "milk zoo" }.map(\.id))
    }

    @Test func aTextSearchReadsTheTextIndexOnPostgreSQL() throws {
        let (url, _) = Self.newSchema()
        let garage = try Garage(postgresURL: url)
        var random = SplitMix64(state: 9)
        var memos = (0..<3_000).map { QueryTextTests.randomMemo($0, &random) }
        memos[1_234].body = "a zebra"
        try garage.parkAll(memos)
        try garage.textIndex(QueryTextTests.SearchMemo.self, on: Field("title"), Field("body"))
        try Self.psql("ANALYZE")
        let (configuration, schema) = try PostgresURL.parse(url)
        var options = PostgresGarageOptions()
        options.createsSchema = false
        let engine = try PostgresEngine.open(configuration: configuration, schema: schema, options: options)
        let search = RowQuery(typeName: "SearchMemo", predicate: .textMatches("zebra"))
        let plan = try engine.read("plan") { statements in
            let resolved = try statements.resolvingTextIndex(search)
            return try #require(statements as? PostgresStatements).queryPlan(matching: resolved).joined(separator: "\n")
        }
        #expect(plan.contains("garage_text_"), "\(plan)")
        #expect(try garage.identifiers(Query(QueryTextTests.SearchMemo.self).search("zebra")) == [memos[1_234].id])
    }

    @Test func anOrderByAnIndexedPropertyReadsTheIndexOnPostgreSQL() throws {
        let (url, _) = Self.newSchema()
        let garage = try Garage(postgresURL: url)
        var random = SplitMix64(state: 8)
        let notes = (0..<3_000).map { QueryRuleTests.randomNote($0, &random) }
        try garage.parkAll(notes)
        try garage.index(QueryRuleTests.QueryNote.self, on: Field("title"))
        try Self.psql("ANALYZE")
        let (configuration, schema) = try PostgresURL.parse(url)
        var options = PostgresGarageOptions()
        options.createsSchema = false
        let engine = try PostgresEngine.open(configuration: configuration, schema: schema, options: options)
        for order in [QuerySort.Order.ascending, .descending] {
            var page = RowQuery(typeName: "QueryNote", predicate: .all, sortOrders: [QuerySort(key: .field(Field("title")), order: order)])
            page.limit = 20
            let plan = try engine.read("plan") { statements in
                try #require(statements as? PostgresStatements).queryPlan(matching: page).joined(separator: "\n")
            }
            #expect(plan.contains("garage_query_"), "\(plan)")
            if order == .ascending { #expect(!plan.contains("Sort Key"), "the index gives the order: \(plan)") }
            let expected = QueryRuleTests.expected(notes, { _ in true }, sorts: [(Field("title"), order)], limit: 20)
            #expect(try garage.identifiers(Query(QueryRuleTests.QueryNote.self).sorted(by: Field("title"), order).limit(20)) == expected)
        }
    }
}

extension PostgresEngineTests {
    /// Issue 44: a feed's page after a position (equal to two fields, after a value of the third,
    /// in its order) reads the index in order on PostgreSQL too, with no sort of the rest of the feed.
    @Test func aPageAfterAPositionReadsTheIndexInOrderOnPostgreSQL() throws {
        let (url, _) = Self.newSchema()
        let garage = try Garage(postgresURL: url)
        try garage.index(QueryPlanTests.PlanFeedEntry.self, on: Field("kind"), Field("scope"), Field("position"))
        try garage.parkAll((0..<3_000).map { QueryPlanTests.PlanFeedEntry(id: "e\($0)", kind: "Note", scope: "team\($0 % 3)", position: $0) })
        try Self.psql("ANALYZE")
        let (configuration, schema) = try PostgresURL.parse(url)
        var options = PostgresGarageOptions()
        options.createsSchema = false
        let engine = try PostgresEngine.open(configuration: configuration, schema: schema, options: options)
        var page = RowQuery(typeName: "PlanFeedEntry",
                            predicate: Field("kind") == "Note" && Field("scope") == "team1" && Field("position") > 100,
                            sortOrders: [QuerySort(key: .field(Field("position")), order: .ascending)])
        page.limit = 21
        let plan = try engine.read("plan") { statements in
            try #require(statements as? PostgresStatements).queryPlan(matching: page).joined(separator: "\n")
        }
        #expect(plan.contains("garage_query_"), "\(plan)")
        // The pinned fields' columns lead the order (PostgreSQL takes those pinned by `IS NULL`
        // for unordered), so the index gives the page's order, ties aside.
        let wholeSorts = plan.split(separator: "\n").filter { line in
            let node = line.trimmingCharacters(in: .whitespaces)
            return node.hasPrefix("Sort ") || node.hasPrefix("->  Sort ")
        }
        #expect(wholeSorts.isEmpty, "the page is read in the index's order, not sorted whole: \(plan)")
    }
}
