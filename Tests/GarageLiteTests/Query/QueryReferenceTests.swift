import Foundation
import GarageLite
import Testing

/// Issue 28: queries by references — the referrers of an object (the store's index of
/// references), and objects whose reference points to one with a given property (one level) —
/// on the engine the suite runs on, then with unsaved changes (the rule), against a filter of
/// the Swift values.
@Suite("Queries by reference")
struct QueryReferenceTests {
    struct RefBook: Codable, Identifiable, Sendable, Hashable {
        var id: String
        var name: String
        var pinned: Bool
    }

    struct Meta: Codable, Sendable, Hashable {
        var owner: RefBook?
    }

    struct RefNote: Codable, Identifiable, Sendable, Hashable {
        var id: String
        var title: String
        var book: RefBook?
        var related: [RefBook] = []
        var meta = Meta()
    }

    static func world(_ random: inout SplitMix64) -> ([RefBook], [RefNote]) {
        let books = (0..<8).map { RefBook(id: "b\($0)", name: ["Work", "Home", "Wish"][$0 % 3], pinned: Bool.random(using: &random)) }
        let notes = (0..<50).map { index -> RefNote in
            var note = RefNote(id: String(format: "n%02d", index), title: "note \(index)")
            if Int.random(in: 0..<4, using: &random) > 0 { note.book = books.randomElement(using: &random) }
            note.related = (0..<Int.random(in: 0...2, using: &random)).map { _ in books.randomElement(using: &random)! }
            if Int.random(in: 0..<3, using: &random) == 0 { note.meta.owner = books.randomElement(using: &random) }
            return note
        }
        return (books, notes)
    }

    static func references(_ note: RefNote, _ book: String) -> Bool {
        note.book?.id == book || note.related.contains { $0.id == book } || note.meta.owner?.id == book
    }

    @Test(arguments: [false, true])
    func referenceQueriesEqualAFilterInMemory(unsaved: Bool) throws {
        for seed in 0..<QueryRuleTests.seeds {
            var random = SplitMix64(state: 0x5265_6673 &+ UInt64(seed))
            let garage = try TestEngine.garage()
            var (books, notes) = Self.world(&random)
            if unsaved { garage.isAutosaveEnabled = false }
            try garage.parkAll(notes)
            // Pin or unpin some notebooks on their own: the notes' copies are stale, the
            // store's rows of the notebooks are what a reference predicate reads.
            for index in books.indices where Bool.random(using: &random) {
                books[index].pinned.toggle()
                try garage.park(books[index])
            }
            let pinned = Set(books.filter(\.pinned).map(\.id))
            for book in books {
                let query = Query(RefNote.self).filter(.references(RefBook.self, identifier: book.id))
                let expected = notes.filter { Self.references($0, book.id) }.map(\.id)
                #expect(try garage.identifiers(query) == expected, "seed \(seed): referrers of \(book.id)")
                #expect(try garage.count(query) == expected.count)
            }
            let pinnedBook = Query(RefNote.self).filter(Field("book").references(RefBook.self, where: Field("pinned") == true))
            #expect(try garage.identifiers(pinnedBook) == notes.filter { $0.book.map { pinned.contains($0.id) } ?? false }.map(\.id),
                    "seed \(seed)")
            let relatedWish = Query(RefNote.self)
                .filter(Field("related").references(RefBook.self, where: Field("name").hasPrefix("Wi") && !(Field("pinned") == true)))
                .sorted(by: Field("title"), .descending)
            let wishes = Set(books.filter { $0.name.hasPrefix("Wi") && !$0.pinned }.map(\.id))
            let expectedWish = notes.filter { $0.related.contains { wishes.contains($0.id) } }.sorted { $0.title > $1.title }.map(\.id)
            #expect(try garage.identifiers(relatedWish) == expectedWish, "seed \(seed)")
            let neither = Query(RefNote.self).filter(!(Field("book").references(RefBook.self, where: Field("name") == "Work"))
                && !.references(RefBook.self, identifier: "b1"))
            let work = Set(books.filter { $0.name == "Work" }.map(\.id))
            #expect(try garage.identifiers(neither)
                == notes.filter { !($0.book.map { work.contains($0.id) } ?? false) && !Self.references($0, "b1") }.map(\.id), "seed \(seed)")
            // An edit moves a note from one notebook to another.
            notes[0].book = books[7]
            notes[0].related = []
            notes[0].meta.owner = nil
            try garage.park(notes[0])
            #expect(try garage.identifiers(Query(RefNote.self).filter(.references(RefBook.self, identifier: "b7"))).contains(notes[0].id))
            #expect(try !garage.identifiers(Query(RefNote.self).filter(.references(RefBook.self, identifier: books[0].id))).contains(notes[0].id)
                    || books[0].id == "b7")
            if unsaved { try garage.save() }
        }
    }

    @Test func referenceMistakesAreErrors() throws {
        struct Other: Codable, Identifiable { var id: String }
        let garage = try TestEngine.garage()
        func reason(_ predicate: QueryPredicate) -> String {
            QueryTextTests.reason { _ = try garage.count(Query(RefNote.self).filter(predicate)) }
        }
        #expect(reason(Field("title").references(RefBook.self, where: .all)).contains("holds strings, not references"))
        #expect(reason(Field("book").references(Other.self, where: .all)).contains("references RefBook, not Other"))
        #expect(reason(Field("book").references(RefBook.self, where: Field("nmae") == "x")).contains("has no property \"nmae\""))
        #expect(reason(Field("book").references(RefBook.self, where: .textMatches("x"))).contains("can't look inside a reference"))
        #expect(reason(Field("book", "name") == "Work").contains("Field(\"book\").references(RefBook.self, where: Field(\"name\") == …)"))
        #expect(reason(Field("book").references(RefBook.self, where: Field("nmae") == "x")).contains("in RefBook (which book references)"))
    }
}
