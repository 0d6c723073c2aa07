import Foundation
import GarageLite

/// The query workloads through GarageLite's queries, as its README's "Querying" uses them.
extension GarageLiteContender: QueryContender {
    func parkAll(notes: [BenchNote]) throws {
        try store.parkAll(notes)
    }

    func createNoteIndexes() throws {
        let garage = try store
        try expect(try garage.index(BenchNote.self, on: Field("notebook")), "GarageLite: the notebook index existed")
        try expect(try garage.index(BenchNote.self, on: Field("title")), "GarageLite: the title index existed")
        let indexes = try garage.indexes()
        try expect(indexes.count == 2, "GarageLite: indexes \(indexes)")
    }

    func notes(inNotebook notebook: String) throws -> [BenchNote] {
        try store.retrieve(Query(BenchNote.self).filter(Field("notebook") == notebook))
    }

    func allNotesFiltered(notebook: String) throws -> [BenchNote] {
        try store.retrieveAll(BenchNote.self).filter { $0.notebook == notebook }
    }

    func countNotes(inNotebook notebook: String) throws -> Int {
        try store.count(Query(BenchNote.self).filter(Field("notebook") == notebook))
    }

    func notesByTitle(inNotebook notebook: String?, limit: Int) throws -> [BenchNote] {
        var query = Query(BenchNote.self)
        if let notebook { query = query.filter(Field("notebook") == notebook) }
        return try store.retrieve(query.sorted(by: Field("title")).limit(limit))
    }

    func createTextIndex() throws {
        let garage = try store
        try expect(try garage.textIndex(BenchNote.self, on: Field("title"), Field("body")), "GarageLite: the text index existed")
        let indexes = try garage.indexes()
        try expect(indexes.count == 1 && indexes[0].isText, "GarageLite: indexes \(indexes)")
    }

    func notes(matchingText words: String) throws -> [BenchNote] {
        try store.retrieve(Query(BenchNote.self).filter(.textMatches(words)))
    }

    func mostRelevantNotes(_ words: String, limit: Int) throws -> [BenchNote] {
        try store.retrieve(Query(BenchNote.self).search(words).limit(limit))
    }

    func park(note: BenchNote) throws {
        try store.park(note) // autosave is on: one commit per park
    }

    func dropTextIndex() throws {
        try expect(try store.dropTextIndex(BenchNote.self), "GarageLite: no text index to drop")
    }
}
