import Foundation
import GarageLite
import Testing

/// Issue 42: queries answer right for every value, or are refused with `invalidQuery`: pages by
/// modification date, `isIn` of thousands of values and predicates of any size, dictionary keys
/// with escapes, U+0000 in values, keys and type names, searches of 20,000 words. On the engine
/// the suite runs on (SQLite, or PostgreSQL with `GARAGE_TEST_ENGINE=postgres`).
@Suite("Queries right for every input")
struct QueryInputTests {
    struct Entry: Codable, Identifiable, Sendable, Equatable, StoredTypeNamed {
        static let storedTypeName = "QueryInputEntry"
        var id: String
        var title: String
        var rank: Double = 0
        var attrs: [String: String] = [:]
    }

    final class Card: Codable, Identifiable, @unchecked Sendable {
        let id: Int
        var name: String
        init(id: Int, name: String) { self.id = id; self.name = name }
    }

    struct Badly: Codable, Identifiable, StoredTypeNamed {
        static let storedTypeName = "Bad\u{0}Name"
        var id: String
    }

    static func reason(_ body: () throws -> Void) throws -> String {
        let error = try #require(throws: GarageError.self) { try body() }
        guard case .invalidQuery(_, _, let reason) = error else {
            Issue.record("expected invalidQuery, got \(error)")
            return ""
        }
        return reason
    }

    /// Every page of `query` after the first, after its cursor, until there is none.
    static func paged<T: Decodable & Sendable & Identifiable>(_ garage: Garage, _ query: Query<T>) throws -> [T.ID] {
        var page = try garage.retrievePage(query)
        var seen = page.objects.map(\.id)
        var pages = 1
        while let next = page.next, pages < 100 {
            page = try garage.retrievePage(query, after: next)
            seen += page.objects.map(\.id)
            pages += 1
        }
        return seen
    }

    // 1. Pages by modification date, both directions, alone and after another order.
    @Test func pagesByModificationDatePageThroughEveryObjectOnce() throws {
        let garage = try TestEngine.garage()
        for index in 0..<10 {
            // Parked one by one, some in one call: dates differ, and some are level.
            try garage.park(Entry(id: "e\(index)", title: index % 2 == 0 ? "even" : "odd"))
            if index == 5 { try garage.parkAll([Entry(id: "f1", title: "odd"), Entry(id: "f2", title: "even")]) }
        }
        for order in [QuerySort.Order.ascending, .descending] {
            for query in [Query(Entry.self).sortedByModificationDate(order),
                          Query(Entry.self).sorted(by: Field("title")).sortedByModificationDate(order)] {
                let whole = try garage.identifiers(query)
                #expect(whole.count == 12)
                for size in [1, 3, 5] {
                    #expect(try Self.paged(garage, query.limit(size)) == whole, "\(order), pages of \(size)")
                }
            }
        }
    }

    @Test func pagesByModificationDateOfAClassModelInAsyncCode() async throws {
        let cards = try TestEngine.garage()
        for id in 0..<7 { try await cards.park(Card(id: id, name: "card \(id)")) }
        var page = try await cards.retrievePage(Query(Card.self).sortedByModificationDate(.descending).limit(3))
        var ids = page.objects.map(\.id)
        while let next = page.next {
            page = try await cards.retrievePage(Query(Card.self).sortedByModificationDate(.descending).limit(3), after: next)
            ids += page.objects.map(\.id)
        }
        #expect(ids == Array((0..<7).reversed()))
    }

    // 2. isIn of thousands of values, and predicates of any size, answered or refused.
    @Test func isInOfThousandsOfValuesIsAnswered() throws {
        let garage = try TestEngine.garage()
        try garage.parkAll((0..<300).map { Entry(id: "e\($0)", title: "title \($0)", rank: Double($0)) })
        for count in [0, 1, 2, 100, 5_000, 10_000] {
            let wanted = (0..<count).map { "e\($0 * 7)" }
            let expected = Set(wanted.filter { Int($0.dropFirst())! < 300 })
            let query = Query(Entry.self).filter(Field("id").isIn(wanted))
            #expect(Set(try garage.identifiers(query)) == expected, "\(count) values")
            #expect(try garage.count(query) == expected.count, "\(count) values")
            let ranks = (0..<count).map { Double($0 * 3) }
            #expect(try garage.count(Query(Entry.self).filter(Field("rank").isIn(ranks))) == ranks.filter { $0 < 300 }.count)
        }
        // Values of another kind than the property's are refused, as in a comparison.
        #expect(try Self.reason { _ = try garage.count(Query(Entry.self).filter(Field("rank").isIn([QueryValue(2), QueryValue("2")]))) }
            .contains("rank holds numbers, not a string"))
    }

    @Test func predicatesOfThousandsOfConditionsAreAnsweredAndTooDeepOnesRefused() throws {
        let garage = try TestEngine.garage()
        try garage.parkAll((0..<50).map { Entry(id: "e\($0)", title: "title \($0)", rank: Double($0)) })
        // A chain of 20,000 alternatives of several kinds: one level, however long.
        let alternatives = (0..<20_000).map { index -> QueryPredicate in
            index % 2 == 0 ? Field("rank") == Double(index) : Field("title").hasPrefix("title \(index)")
        }
        let many = alternatives.reduce(QueryPredicate.any([])) { $0 || $1 }
        #expect(try garage.count(Query(Entry.self).filter(many)) == 50)
        #expect(try garage.count(Query(Entry.self).filter(.any(alternatives))) == 50)
        let all = (0..<3_000).map { Field("rank") != Double(-$0 - 1) }.reduce(QueryPredicate.all) { $0 && $1 }
        #expect(try garage.count(Query(Entry.self).filter(all)) == 50)
        // Negations cancel: 100,001 of them are one.
        var negated = Field("rank") < 10
        for _ in 0..<100_001 { negated = !negated }
        #expect(try garage.count(Query(Entry.self).filter(negated)) == 40)
        // Nesting: as deep as allowed is answered; deeper is refused, whatever the engine.
        func nested(_ levels: Int) -> QueryPredicate {
            var predicate = Field("rank") >= 0
            for level in 1..<levels {
                predicate = level % 2 == 0 ? (predicate && Field("rank") >= 0) : (predicate || Field("rank") < -1)
            }
            return predicate
        }
        #expect(try garage.count(Query(Entry.self).filter(nested(QueryPredicate.maximumDepth))) == 50)
        let reason = try Self.reason { _ = try garage.count(Query(Entry.self).filter(nested(QueryPredicate.maximumDepth + 1))) }
        #expect(reason.contains("\(QueryPredicate.maximumDepth) levels"), "\(reason)")
        #expect(try Self.reason { _ = try garage.records(matching: Query(recordsOf: "QueryInputEntry").filter(nested(40))) }
            .contains("levels deep"))
        // An error about a long list names a few of its values, not all of them.
        let error = try #require(throws: GarageError.self) {
            _ = try garage.retrieve(Query(Entry.self).filter(Field("nope").isIn((0..<10_000).map { "v\($0)" })))
        }
        #expect(error.localizedDescription.count < 2_000, "\(error.localizedDescription.prefix(300))")
    }

    // 3. Dictionary keys that JSON writes with escapes.
    static let awkwardKeys = ["back\\slash", "new\nline", "tab\t", "\u{1}", "\u{1F}x", "\\u0041", "quo\"te", "a.b", "$[0]",
                              "é", "e\u{301}", "emoji 🎉", "", " ", "'", "%_", "\u{7F}", "\u{2028}"]

    @Test func dictionaryKeysWithEscapesAreQueriedAndIndexed() throws {
        let garage = try TestEngine.garage()
        var entries: [Entry] = []
        for (index, key) in Self.awkwardKeys.enumerated() {
            entries.append(Entry(id: "k\(index)", title: "t", attrs: [key: "value\(index)", "plain": "word\(index)"]))
        }
        try garage.parkAll(entries)
        for (index, key) in Self.awkwardKeys.enumerated() {
            #expect(try garage.identifiers(Query(Entry.self).filter(Field("attrs", key) == "value\(index)")) == ["k\(index)"],
                    "key \(key.debugDescription)")
            #expect(try garage.identifiers(Query(Entry.self).filter(Field("attrs", key).hasPrefix("value"))) == ["k\(index)"],
                    "key \(key.debugDescription)")
            #expect(try garage.count(Query(Entry.self).filter(!(Field("attrs", key).isNull))) == 1, "key \(key.debugDescription)")
        }
        // A text index of such keys finds their words.
        let keys = Array(Self.awkwardKeys.prefix(8))
        #expect(try garage.textIndex(Entry.self, on: Field("attrs", keys[0]), Field("attrs", keys[1]), Field("attrs", keys[2]),
                                     Field("attrs", keys[3]), Field("attrs", keys[4]), Field("attrs", keys[5]),
                                     Field("attrs", keys[6]), Field("attrs", keys[7])))
        for index in keys.indices {
            #expect(try garage.identifiers(Query(Entry.self).search("value\(index)")) == ["k\(index)"], "key \(keys[index].debugDescription)")
        }
        try garage.park(Entry(id: "later", title: "t", attrs: ["new\nline": "fresh words"]))
        #expect(try garage.identifiers(Query(Entry.self).search("fresh")) == ["later"])
    }

    // 4. and 5. U+0000: refused where it enters, the same on every engine.
    @Test func nulIsRefusedWhereItEntersOnEveryEngine() throws {
        let garage = try TestEngine.garage()
        try garage.park(Entry(id: "a", title: "a"))
        let parked = #expect(throws: EncodingError.self) { try garage.park(Entry(id: "b", title: "a\u{0}b")) }
        #expect("\(parked.map { "\($0)" } ?? "")".contains("U+0000"))
        #expect(throws: EncodingError.self) { try garage.park(Entry(id: "c", title: "c", attrs: ["k\u{0}": "v"])) }
        #expect(throws: EncodingError.self) { try garage.parkAll([Entry(id: "d", title: "d", attrs: ["k": "\u{0}"])]) }
        #expect(try garage.retrieveAll(Entry.self).map(\.id) == ["a"])
        // A query can't ask for what no store holds.
        #expect(try Self.reason { _ = try garage.retrieve(Query(Entry.self).filter(Field("title") == "a\u{0}b")) }.contains("U+0000"))
        #expect(try Self.reason { _ = try garage.count(Query(Entry.self).filter(Field("title").hasPrefix("\u{0}"))) }.contains("U+0000"))
        #expect(try Self.reason { _ = try garage.count(Query(Entry.self).filter(Field("attrs", "a\u{0}") == "x")) }.contains("U+0000"))
        #expect(try Self.reason { _ = try garage.records(matching: Query(recordsOf: "QueryInputEntry").filter(Field("t\u{0}") == 1)) }
            .contains("U+0000"))
        #expect(try Self.reason { _ = try garage.records(matching: Query(recordsOf: "QueryInput\u{0}Entry")) }.contains("U+0000"))
        // A stored type name holding it is refused at its first use.
        let named = #expect(throws: GarageError.self) { try garage.park(Badly(id: "x")) }
        #expect("\(named.map { "\($0)" } ?? "")".contains("U+0000"))
        // Records imported with it are refused, naming the object.
        let record = ObjectRecord(key: ObjectKey(typeName: "QueryInputEntry", identifier: "r"), json: #"{"id":"r","title":"x\u0000y","rank":0,"attrs":{}}"#)
        #expect(throws: GarageError.self) { try garage.importRecords([record]) }
        #expect(try garage.count(Query(Entry.self)) == 1)
    }

    // 6. A search of 20,000 words.
    @Test func aSearchOfTwentyThousandWordsIsAnswered() throws {
        let garage = try TestEngine.garage()
        let words = (0..<300).map { "w\($0)" }
        try garage.parkAll([Entry(id: "all", title: words.joined(separator: " ")), Entry(id: "some", title: "w1 w2")])
        #expect(try garage.textIndex(Entry.self, on: Field("title")))
        let repeated = (0..<20_000).map { words[$0 % words.count] }.joined(separator: " ")
        #expect(try garage.identifiers(Query(Entry.self).search(repeated)) == ["all"])
        #expect(try garage.identifiers(Query(Entry.self).filter(.textMatches(repeated)).sorted(by: Field("id"))) == ["all"])
        let distinct = (0..<20_000).map { "x\($0)" }.joined(separator: " ")
        #expect(try garage.identifiers(Query(Entry.self).search(distinct)).isEmpty)
    }
}

