import Foundation
import GRDB

/// A note's GRDB record: its JSON in a data column.
struct NoteRecord: Codable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "note"
    /// Its columns, and not the generated `text` of a text store (GRDBContender.createTextIndex).
    static var databaseSelection: [any SQLSelectable] { [Column("id"), Column("data")] }
    var id: String
    var data: String // JSON from JSONEncoder
}

/// The query workloads with GRDB records: a `note` table, two expression indexes written by
/// hand (and their statistics; the table has no type column, so no primary key to outbid
/// them), and the query interface with SQL snippets for the JSON expressions.
extension GRDBContender: QueryContender {
    private static let notebook = "json_extract(data, '$.notebook')"
    private static let title = "json_extract(data, '$.title')"

    func parkAll(notes: [BenchNote]) throws {
        let records = try notes.map { NoteRecord(id: $0.id, data: String(decoding: try encoder.encode($0), as: UTF8.self)) }
        try pool.write { db in
            if try !db.tableExists(NoteRecord.databaseTableName) {
                try db.create(table: NoteRecord.databaseTableName) { t in
                    t.primaryKey("id", .text)
                    t.column("data", .text).notNull()
                }
            }
            for record in records { try record.insert(db) }
        }
    }

    func createNoteIndexes() throws {
        try pool.write { db in
            try db.execute(sql: """
                CREATE INDEX note_notebook ON note (\(Self.notebook));
                CREATE INDEX note_title ON note (\(Self.title));
                ANALYZE note_notebook;
                ANALYZE note_title;
                """)
        }
        // The plans read the indexes, as the floor's do.
        try pool.read { db in
            func plan(_ request: QueryInterfaceRequest<NoteRecord>) throws -> String {
                let statement = try request.makePreparedRequest(db, forSingleResult: false).statement
                return try GRDB.Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + statement.sql, arguments: statement.arguments)
                    .map { $0["detail"] as String }.joined(separator: "; ")
            }
            for (request, index) in [(inNotebook("x"), "INDEX note_notebook"), (byTitle(nil, limit: 20), "INDEX note_title"),
                                     (byTitle("x", limit: 20), "INDEX note_")] {
                let plan = try plan(request)
                try expect(plan.contains(index), "GRDB: the plan is \"\(plan)\", expected \(index)")
            }
        }
    }

    private func inNotebook(_ notebook: String) -> QueryInterfaceRequest<NoteRecord> {
        NoteRecord.filter(sql: "\(Self.notebook) = ?", arguments: [notebook])
    }

    private func byTitle(_ notebook: String?, limit: Int) -> QueryInterfaceRequest<NoteRecord> {
        (notebook.map(inNotebook) ?? NoteRecord.all()).order(sql: Self.title).limit(limit)
    }

    private func notes(_ records: [NoteRecord]) throws -> [BenchNote] {
        try records.map { try decoder.decode(BenchNote.self, from: Data($0.data.utf8)) }
    }

    func notes(inNotebook notebook: String) throws -> [BenchNote] {
        // No order asked, as the floor: the index's, equal values in rowid order (identifier order here).
        try notes(pool.read { db in try inNotebook(notebook).fetchAll(db) })
    }

    func allNotesFiltered(notebook: String) throws -> [BenchNote] {
        throw BenchFailure("GRDB: retrieveAll + filter is GarageLite's row only")
    }

    func countNotes(inNotebook notebook: String) throws -> Int {
        try pool.read { db in try inNotebook(notebook).fetchCount(db) }
    }

    func notesByTitle(inNotebook notebook: String?, limit: Int) throws -> [BenchNote] {
        try notes(pool.read { db in try byTitle(notebook, limit: limit).fetchAll(db) })
    }

    // MARK: Text

    /// The text rows' SQL, as GRDB's guide joins an external content full-text table to its
    /// table ("Querying External Content Full-Text Tables"): the matches in the full-text
    /// index's order (rowid order, identifier order here), and the most relevant by `rank`
    /// (BM25), ties by identifier.
    private static let matchingSQL = """
        SELECT note.id, note.data FROM note JOIN note_ft ON note_ft.rowid = note.rowid AND note_ft MATCH ?
        """
    private static let mostRelevantSQL = """
        SELECT note.id, note.data FROM note JOIN note_ft ON note_ft.rowid = note.rowid AND note_ft MATCH ?
        ORDER BY note_ft.rank, note.id LIMIT ?
        """

    /// GRDB's FTS5 table synchronized with `note` (`synchronize(withTable:)`: external content,
    /// GRDB's triggers, a rebuild), on a virtual generated column of `note` that holds the
    /// text: a full-text table synchronized with a table indexes that table's columns, and a
    /// note's title and body are in its JSON.
    func createTextIndex() throws {
        try pool.write { db in
            try db.execute(sql: """
                ALTER TABLE note ADD COLUMN text TEXT
                GENERATED ALWAYS AS (json_extract(data, '$.title') || ' ' || json_extract(data, '$.body')) VIRTUAL
                """)
            try db.create(virtualTable: "note_ft", using: FTS5()) { t in
                t.synchronize(withTable: "note")
                t.tokenizer = .unicode61(diacritics: .keep)
                t.column("text")
            }
        }
        try pool.read { db in
            let statements: [(String, StatementArguments)] = [(Self.matchingSQL, StatementArguments(["x"])),
                                                              (Self.mostRelevantSQL, StatementArguments(["x", 20]))]
            for (sql, arguments) in statements {
                let plan = try GRDB.Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + sql, arguments: arguments)
                    .map { $0["detail"] as String }.joined(separator: "; ")
                try expect(plan.contains("VIRTUAL TABLE INDEX") && plan.contains("note USING INTEGER PRIMARY KEY"),
                           "GRDB: the plan is \"\(plan)\", expected the full-text index, then each note by rowid")
            }
        }
    }

    func notes(matchingText words: String) throws -> [BenchNote] {
        guard let pattern = FTS5Pattern(matchingAllTokensIn: words) else { return [] }
        return try notes(pool.read { db in try NoteRecord.fetchAll(db, sql: Self.matchingSQL, arguments: [pattern]) })
    }

    func mostRelevantNotes(_ words: String, limit: Int) throws -> [BenchNote] {
        guard let pattern = FTS5Pattern(matchingAllTokensIn: words) else { return [] }
        return try notes(pool.read { db in try NoteRecord.fetchAll(db, sql: Self.mostRelevantSQL, arguments: [pattern, limit]) })
    }

    func park(note: BenchNote) throws {
        let record = NoteRecord(id: note.id, data: String(decoding: try encoder.encode(note), as: UTF8.self))
        try pool.write { db in try record.insert(db) }
    }

    func dropTextIndex() throws {
        try pool.write { db in
            try db.drop(table: "note_ft")
            try db.dropFTS5SynchronizationTriggers(forTable: "note_ft")
        }
    }
}
