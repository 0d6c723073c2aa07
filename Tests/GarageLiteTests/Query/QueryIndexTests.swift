import Crypto
import Foundation
import GarageLite
import Testing

/// Issue 28: indexes the app declares are created, recorded, listed and dropped by the store,
/// change no query's answer, and are refused where they can't order the values.
@Suite("Query indexes")
struct QueryIndexTests {
    typealias QueryNote = QueryRuleTests.QueryNote

    @Test func anIndexIsRecordedListedAndDroppedAndChangesNoAnswer() throws {
        let garage = try TestEngine.garage()
        var random = SplitMix64(state: 0x1D_E7)
        let notes = (0..<60).map { QueryRuleTests.randomNote($0, &random) }
        try garage.parkAll(notes)
        var queries: [(Query<QueryNote>, [String])] = []
        for _ in 0..<40 {
            let drawn = QueryRuleTests.randomQuery(&random, notes, modificationDate: false)
            queries.append((drawn.query, QueryRuleTests.expected(notes, drawn.judge, sorts: drawn.sorts, limit: drawn.limit, dates: [:])))
        }

        #expect(try garage.index(QueryNote.self, on: Field("title")))
        #expect(try garage.index(QueryNote.self, on: Field("rank"), Field("done")))
        #expect(try garage.index(QueryNote.self, on: Field("place", "city")))
        #expect(try !garage.index(QueryNote.self, on: Field("title")), "the store has it already")
        #expect(try garage.indexes().map(\.description).sorted()
            == ["QueryNote(place.city)", "QueryNote(rank, done)", "QueryNote(title)"])
        // Another garage on the store sees them.
        for (query, expected) in queries {
            #expect(try garage.identifiers(query) == expected, "\(query.predicate)")
        }
        // Writes keep the indexes: an edit, a deletion, a new object.
        try garage.park(QueryNote(id: "n0", title: "milk", rank: 1))
        try garage.delete(QueryNote.self, identifier: "n1")
        try garage.park(QueryNote(id: "new", title: "milk", rank: 1))
        #expect(try garage.identifiers(Query(QueryNote.self).filter(Field("title") == "milk")).sorted()
            == (notes.filter { $0.title == "milk" && !["n0", "n1"].contains($0.id) }.map(\.id) + ["n0", "new"]).sorted())

        #expect(try garage.dropIndex(QueryNote.self, on: Field("title")))
        #expect(try !garage.dropIndex(QueryNote.self, on: Field("title")))
        #expect(try garage.indexes().count == 2)
    }

    @Test func anIndexOfWhatHasNoOrderIsRefused() throws {
        let garage = try TestEngine.garage()
        func reason(_ fields: Field...) throws -> String {
            let error = try #require(throws: GarageError.self) { try garage.index(QueryNote.self, on: fields[0]) }
            guard case .invalidQuery(_, _, let reason) = error else { return "\(error)" }
            return reason
        }
        #expect(try reason(Field("tags")).contains("arrays"))
        #expect(try reason(Field("mixed")).contains("several kinds") || reason(Field("mixed")).contains("any kind"))
        #expect(try reason(Field("titel")).contains("no property"))
        #expect(try reason(Field("place")).contains("objects"))
        #expect(try garage.indexes().isEmpty)

        let encrypted = try TestEngine.garage(encryptionKey: .key(SymmetricKey(size: .bits256)))
        #expect(throws: GarageError.self) { try encrypted.index(QueryNote.self, on: Field("title")) }
    }

    /// A garage indexed, then encrypted: the encryption drops the index, which held the values
    /// in clear and would read nothing of the encrypted rows (issue 42: it stayed listed), and
    /// writes and status queries carry on.
    @Test func anIndexedGarageCanBeEncryptedLater() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("notes.garage")
        let plain = try TestEngine.garage(path: path)
        try plain.parkAll([QueryNote(id: "a", title: "milk"), QueryNote(id: "b", title: "bread")])
        try plain.index(QueryNote.self, on: Field("title"))
        let key = StoreKey.key(SymmetricKey(size: .bits256))
        let encrypted = try TestEngine.garage(path: path, encryptionKey: key)
        _ = try encrypted.encryptUnencryptedObjects()
        try encrypted.park(QueryNote(id: "c", title: "milk"))
        #expect(try encrypted.retrieveAll(QueryNote.self).map(\.id) == ["a", "b", "c"])
        #expect(try encrypted.identifiers(Query(QueryNote.self).sortedByModificationDate()).count == 3)
        #expect(try encrypted.indexes().isEmpty)
        #expect(try plain.indexes().isEmpty)
    }
}

