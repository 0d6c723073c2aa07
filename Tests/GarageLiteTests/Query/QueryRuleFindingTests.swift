import Foundation
import GarageLite
import Testing

/// What the random tests of issue 42 (QueryRuleTests, the `query` fuzz target) found the
/// library doing against the README, each as its smallest case: they failed before their fixes.
@Suite("Queries right for every input: findings")
struct QueryRuleFindingTests {
    struct Entry: Codable, Identifiable, Sendable, StoredTypeNamed {
        static let storedTypeName = "QueryRuleFindingEntry"
        var id: String
        var attrs: [String: String] = [:]
    }

    /// Keys are compared by their bytes: `"é"` (U+00E9) and `"e\u{301}"` are two keys, as SQL
    /// reads them. The rule (`RowQuery.lookup`, which answers unsaved changes, and on SQLite a
    /// query naming a key that JSON escapes) finds a member with Swift's `==`, which holds
    /// canonically equivalent strings equal.
    @Test(arguments: [false, true])
    func theRuleFindsADictionaryKeyByItsBytes(unsaved: Bool) throws {
        let garage = try TestEngine.garage()
        if unsaved { garage.isAutosaveEnabled = false }
        try garage.park(Entry(id: "a", attrs: ["e\u{301}": "x", "K": "k"]))
        #expect(try garage.identifiers(Query(Entry.self).filter(Field("attrs", "\u{E9}") == "x")) == [], "unsaved: \(unsaved)")
        #expect(try garage.identifiers(Query(Entry.self).filter(Field("attrs", "\u{212A}") == "k")) == [], "unsaved: \(unsaved)")
        // Saved, on SQLite: the same query ordered by a key holding a newline is answered by the rule.
        let ordered = Query(Entry.self).filter(Field("attrs", "\u{E9}") == "x").sorted(by: Field("attrs", "new\nline"))
        #expect(try garage.identifiers(ordered) == [], "unsaved: \(unsaved)")
    }

    /// Pages by modification date of unsaved changes: each read dates the unsaved changes anew
    /// (`StoreView.now`), so that after a cursor every unsaved object has moved past it.
    @Test(arguments: [QuerySort.Order.ascending, .descending])
    func pagesByModificationDateOfUnsavedChangesPageThroughEveryObjectOnce(order: QuerySort.Order) throws {
        let garage = try TestEngine.garage()
        garage.isAutosaveEnabled = false
        try garage.parkAll((0..<4).map { Entry(id: "e\($0)") })
        let query = Query(Entry.self).sortedByModificationDate(order).limit(2)
        var page = try garage.retrievePage(query)
        var seen = page.objects.map(\.id)
        while let next = page.next, seen.count < 10 {
            page = try garage.retrievePage(query, after: next)
            seen += page.objects.map(\.id)
        }
        #expect(seen == ["e0", "e1", "e2", "e3"], "\(order)")
    }
}
