import Crypto
import Foundation
@testable import GarageLite
import Testing

/// Issue 28: text search. Random notes and random searches, on the engine the suite runs on
/// (SQLite's FTS5 or PostgreSQL's `tsvector`), then with the notes unsaved (the rule): a search
/// finds exactly the notes whose indexed words hold every word of it, computed here
/// independently from the Swift values; edits and deletions reach the index; the most relevant
/// note comes first; mistakes are errors.
@Suite("Text search")
struct QueryTextTests {
    struct SearchMemo: Codable, Identifiable, Sendable, Hashable {
        var id: String
        var title: String
        var body: String?
        var tags: [String] = []
        var rank: Int = 0
    }

    /// Words between spaces and punctuation, in several cases: the engines split them alike.
    static let vocabulary = ["milk", "Milk", "MILK", "bread", "bread-and-butter", "eggs,", "don't", "tea.", "10", "v2",
                             "oat_milk", "(cheese)", "butter", "and", "x", "Breakfast"]

    static func randomMemo(_ index: Int, _ random: inout SplitMix64) -> SearchMemo {
        func text(_ count: ClosedRange<Int>) -> String {
            (0..<Int.random(in: count, using: &random)).map { _ in vocabulary.randomElement(using: &random)! }.joined(separator: " ")
        }
        var memo = SearchMemo(id: String(format: "m%03d", index), title: text(0...3))
        memo.body = Int.random(in: 0..<4, using: &random) == 0 ? nil : text(0...8)
        memo.tags = (0..<Int.random(in: 0...2, using: &random)).map { _ in vocabulary.randomElement(using: &random)! }
        memo.rank = Int.random(in: 0...3, using: &random)
        return memo
    }

    /// The lowercased ASCII letter-and-digit runs of the memo's indexed text.
    static func words(_ text: String) -> [String] {
        text.lowercased().split { !($0.isASCII && ($0.isLetter || $0.isNumber)) }.map(String.init)
    }

    static func finds(_ memo: SearchMemo, _ search: String) -> Bool {
        let memoWords = words(([memo.title, memo.body ?? ""] + memo.tags).joined(separator: " "))
        var terms: [(String, Bool)] = []
        for piece in search.split(separator: " ") {
            let pieceWords = words(String(piece))
            for (index, word) in pieceWords.enumerated() {
                terms.append((word, index == pieceWords.count - 1 && piece.hasSuffix("*")))
            }
        }
        guard !terms.isEmpty else { return false }
        return terms.allSatisfy { word, isPrefix in memoWords.contains { isPrefix ? $0.hasPrefix(word) : $0 == word } }
    }

    static func randomSearch(_ random: inout SplitMix64) -> String {
        let pieces = ["milk", "MILK", "bread", "bre*", "butter", "and", "eggs", "don't", "don", "t", "tea", "10", "v2", "oat",
                      "cheese", "x", "breakfast", "b*", "missing", "oat_milk", "bread-and-butter", "Breakf*", "!!"]
        return (0..<Int.random(in: 1...3, using: &random)).map { _ in pieces.randomElement(using: &random)! }.joined(separator: " ")
    }

    @Test(arguments: [false, true])
    func randomSearchesFindWhatAFilterInMemoryFinds(unsaved: Bool) throws {
        for seed in 0..<QueryRuleTests.seeds {
            var random = SplitMix64(state: 0x5465_7874 &+ UInt64(seed))
            let garage = try TestEngine.garage()
            var memos = (0..<40).map { Self.randomMemo($0, &random) }
            // Declared before the memos come on every other seed, after them on the others.
            if seed % 2 == 0 { try garage.textIndex(SearchMemo.self, on: Field("title"), Field("body"), Field("tags")) }
            try garage.parkAll(memos)
            if seed % 2 == 1 { try garage.textIndex(SearchMemo.self, on: Field("title"), Field("body"), Field("tags")) }
            if unsaved { garage.isAutosaveEnabled = false }
            for round in 0..<4 {
                // Edits and deletions between rounds: the index follows them.
                if round > 0 {
                    for _ in 0..<5 {
                        let index = Int.random(in: 0..<memos.count, using: &random)
                        memos[index] = Self.randomMemo(Int(memos[index].id.dropFirst())!, &random)
                        try garage.park(memos[index])
                    }
                    let gone = memos.remove(at: Int.random(in: 0..<memos.count, using: &random))
                    try garage.delete(SearchMemo.self, identifier: gone.id)
                }
                for _ in 0..<15 {
                    let search = Self.randomSearch(&random)
                    let expected = memos.filter { Self.finds($0, search) }.map(\.id).sorted()
                    let described = "seed \(seed) round \(round): \"\(search)\""
                    let query = Query(SearchMemo.self).filter(.textMatches(search))
                    #expect(try garage.identifiers(query) == expected, "\(described)")
                    #expect(try garage.count(query) == expected.count, "\(described)")
                    #expect(try garage.identifiers(Query(SearchMemo.self).search(search)).sorted() == expected, "ranked: \(described)")
                    let combined = query.filter(Field("rank") >= 2 || !.textMatches("milk"))
                    let combinedExpected = memos.filter {
                        Self.finds($0, search) && ($0.rank >= 2 || !Self.finds($0, "milk"))
                    }.map(\.id).sorted()
                    #expect(try garage.identifiers(combined) == combinedExpected, "combined: \(described)")
                }
            }
            if unsaved { try garage.save() }
        }
    }

    @Test func theMostRelevantComesFirst() throws {
        let garage = try TestEngine.garage()
        try garage.textIndex(SearchMemo.self, on: Field("title"), Field("body"))
        try garage.parkAll([
            SearchMemo(id: "a", title: "Shopping", body: "bread eggs cheese and a note about milk among many other words here"),
            SearchMemo(id: "b", title: "Milk", body: "milk milk milk"),
            SearchMemo(id: "c", title: "Tea", body: "nothing about it"),
            SearchMemo(id: "d", title: "Dairy", body: "milk, then cheese"),
        ])
        let ranked = try garage.identifiers(Query(SearchMemo.self).search("milk"))
        #expect(ranked.count == 3)
        #expect(ranked.first == "b", "\(ranked)")
        #expect(Set(ranked) == ["a", "b", "d"])
        let firstOnly = try garage.retrieve(Query(SearchMemo.self).search("milk").limit(1))
        #expect(firstOnly.map(\.id) == ["b"])
        // A text search with other orders: relevance breaks their ties.
        #expect(try garage.identifiers(Query(SearchMemo.self).filter(.textMatches("cheese")).sorted(by: Field("title"))) == ["d", "a"])
    }

    @Test func theTextIndexIsListedReplacedAndDropped() throws {
        let garage = try TestEngine.garage()
        try garage.parkAll([SearchMemo(id: "a", title: "milk", body: "tea"), SearchMemo(id: "b", title: "tea", body: "milk")])
        #expect(try garage.textIndex(SearchMemo.self, on: Field("title")))
        #expect(try !garage.textIndex(SearchMemo.self, on: Field("title")), "already there")
        #expect(try garage.identifiers(Query(SearchMemo.self).filter(.textMatches("milk"))) == ["a"])
        #expect(try garage.indexes().map(\.isText) == [true])
        #expect(try garage.textIndex(SearchMemo.self, on: Field("body")), "replaces the one on title")
        #expect(try garage.identifiers(Query(SearchMemo.self).filter(.textMatches("milk"))) == ["b"])
        #expect(try garage.indexes().map(\.fields) == [[Field("body")]])
        #expect(try garage.dropTextIndex(SearchMemo.self))
        #expect(try !garage.dropTextIndex(SearchMemo.self))
        #expect(try garage.indexes().isEmpty)
        let error = try #require(throws: GarageError.self) { try garage.count(Query(SearchMemo.self).filter(.textMatches("milk"))) }
        #expect("\(error)".contains("has no text index"), "\(error)")
        #expect(try garage.check().isOK)
    }

    static func reason(_ body: () throws -> Void) -> String {
        do { try body() } catch { return "\(error)" }
        return "no error"
    }

    @Test func mistakesAreErrors() async throws {
        let garage = try TestEngine.garage()
        try await garage.textIndex(SearchMemo.self, on: Field("title"))
        try await garage.park(SearchMemo(id: "a", title: "milk"))
        let reason = Self.reason
        #expect(reason { _ = try garage.textIndex(SearchMemo.self, on: Field("rank")) }.contains("holds numbers"))
        #expect(reason { _ = try garage.textIndex(SearchMemo.self, on: Field("nope")) }.contains("has no property \"nope\""))
        #expect(reason { _ = try garage.identifiers(Query(SearchMemo.self).sortedByRelevance()) }.contains("needs a text search"))
        #expect(reason { _ = try garage.retrievePage(Query(SearchMemo.self).search("milk")) }.contains("has no pages"))
        // A search with orders of its own is in those orders, and has pages.
        try await garage.park(SearchMemo(id: "b", title: "Milk milk milk"))
        try await garage.park(SearchMemo(id: "c", title: "A milk"))
        #expect(try await garage.identifiers(Query(SearchMemo.self).search("milk")).first == "b")
        let byTitle = Query(SearchMemo.self).search("milk").sorted(by: Field("title"))
        #expect(try await garage.identifiers(byTitle) == ["c", "b", "a"])
        #expect(try await garage.retrievePage(byTitle.limit(2)).objects.map(\.id) == ["c", "b"])
        #expect(try await garage.identifiers(Query(SearchMemo.self).filter(.textMatches("  ,, "))) == [], "a search without words finds nothing")
        let ranked = try await garage.retrieve(Query(SearchMemo.self).search("MILK"))
        #expect(ranked.first?.id == "b" && Set(ranked.map(\.id)) == ["a", "b", "c"])
        try await garage.dropTextIndex(SearchMemo.self)
        #expect(reason { _ = try garage.count(Query(SearchMemo.self).filter(.textMatches("bob"))) }.contains("matches \"bob\""))
    }

    @Test func anEncryptingGarageRefusesTextIndexesAndSearches() throws {
        let garage = try TestEngine.garage(encryptionKey: .key(.init(size: .bits256)))
        try garage.park(SearchMemo(id: "a", title: "milk"))
        #expect(Self.reason { _ = try garage.textIndex(SearchMemo.self, on: Field("title")) }.contains("encrypts its objects"))
        #expect(Self.reason { _ = try garage.count(Query(SearchMemo.self).filter(.textMatches("milk"))) }.contains("their text"))
    }

    /// Encrypting a garage drops its indexes, whose copies of the words and values would stay
    /// readable: none of them is left in the store's files (on PostgreSQL,
    /// `PostgresEncryptionTests` reads the table's files).
    @Test func encryptingAGarageDropsItsIndexes() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("memos.garage")
        let plain = try TestEngine.garage(path: path)
        try plain.parkAll((0..<200).map { SearchMemo(id: "m\($0)", title: "Zebramarker \($0)", body: "Okapimarker") })
        try plain.textIndex(SearchMemo.self, on: Field("title"), Field("body"))
        try plain.index(SearchMemo.self, on: Field("title"))
        #expect(try plain.count(Query(SearchMemo.self).filter(.textMatches("zebramarker"))) == 200)
        let encrypted = try TestEngine.garage(path: path, encryptionKey: .key(SymmetricKey(size: .bits256)))
        _ = try encrypted.encryptUnencryptedObjects()
        #expect(try encrypted.indexes().isEmpty)
        #expect(try encrypted.check().isOK)
        if TestEngine.hasFiles {
            let bytes = storeFileBytes(path)
            for marker in ["Zebramarker", "zebramarker", "Okapimarker", "okapimarker"] {
                #expect(bytes.range(of: Data(marker.utf8)) == nil, "\(marker) is in the files")
            }
        }
        #expect(Self.reason { _ = try plain.count(Query(SearchMemo.self).filter(.textMatches("zebramarker"))) }
            .contains("no text index"))
    }
}
