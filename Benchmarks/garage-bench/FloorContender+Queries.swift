import Foundation
import GRDBSQLite

// The floor of the query workloads: the notes in `floor_object` under the type "BenchNote",
// two partial expression indexes written by hand on what the queries compare and sort by, and
// the statements a competent program writes on them, prepared once; JSONDecoder for every
// note returned. The filter asks for no order: SQLite returns the notes of a notebook in the
// index's order, equal values in rowid order, which is identifier order in these stores (the
// notes are parked in identifier order), the order GarageLite's query gives and sorts for; the
// workloads check it. The title order has no ties to break (titles are unique).

/// The prepared statements of the query workloads, prepared once the indexes exist.
final class NoteStatements {
    static let type = "BenchNote"

    /// The indexes, partial on the type (its literal, which the statements repeat so that
    /// SQLite can prove a statement reads only rows the index holds), and the statistics of
    /// both and of the primary key. Without the primary key's, SQLite's planner guesses that
    /// `type = ?` selects 10 rows, fewer than the ~300 of a notebook the notebook index's
    /// statistics show, and reads every note of the type through the primary key instead.
    static let indexes = """
        CREATE INDEX floor_note_notebook ON floor_object (json_extract(data, '$.notebook')) WHERE type = 'BenchNote';
        CREATE INDEX floor_note_title ON floor_object (json_extract(data, '$.title')) WHERE type = 'BenchNote';
        ANALYZE floor_note_notebook;
        ANALYZE floor_note_title;
        ANALYZE sqlite_autoindex_floor_object_1;
        """

    /// Each statement, and the index its plan must read (checked by `EXPLAIN QUERY PLAN`).
    static let inNotebookSQL = """
        SELECT data FROM floor_object WHERE type = 'BenchNote' AND json_extract(data, '$.notebook') = ?1
        """
    static let countSQL = """
        SELECT COUNT(*) FROM floor_object WHERE type = 'BenchNote' AND json_extract(data, '$.notebook') = ?1
        """
    static let byTitleSQL = """
        SELECT data FROM floor_object WHERE type = 'BenchNote' ORDER BY json_extract(data, '$.title') LIMIT ?1
        """
    static let inNotebookByTitleSQL = """
        SELECT data FROM floor_object WHERE type = 'BenchNote' AND json_extract(data, '$.notebook') = ?1
        ORDER BY json_extract(data, '$.title') LIMIT ?2
        """

    let inNotebook: FloorContender.Statement
    let count: FloorContender.Statement
    let byTitle: FloorContender.Statement
    let inNotebookByTitle: FloorContender.Statement

    init(_ floor: FloorContender) throws {
        inNotebook = try floor.prepare(Self.inNotebookSQL)
        count = try floor.prepare(Self.countSQL)
        byTitle = try floor.prepare(Self.byTitleSQL)
        inNotebookByTitle = try floor.prepare(Self.inNotebookByTitleSQL)
    }

    func finalize() {
        for statement in [inNotebook, count, byTitle, inNotebookByTitle] { statement.finalize() }
    }
}

/// The floor's text index: a regular FTS5 table of the notes' text (the title, a space, the
/// body: the text GarageLite indexes, so that BM25 scores the same), same tokenizer, its rowid
/// the note's rowid in `floor_object`, kept by triggers on `floor_object` (so in the write's
/// transaction, whoever writes), filled from the table when created. Its statements join the
/// matches to `floor_object` by rowid: the matches in the full-text index's order (rowid order,
/// which is identifier order in these stores, as the notebook filter's), and the most relevant
/// by `bm25()`, ties by identifier.
final class TextStatements {
    /// The text of the note whose JSON is `data`.
    static func text(_ data: String) -> String {
        "json_extract(\(data), '$.title') || ' ' || json_extract(\(data), '$.body')"
    }

    static let index = """
        CREATE VIRTUAL TABLE floor_note_text USING fts5(text, tokenize = 'unicode61 remove_diacritics 0');
        CREATE TRIGGER floor_note_text_insert AFTER INSERT ON floor_object WHEN new.type = 'BenchNote' BEGIN
            INSERT INTO floor_note_text (rowid, text) VALUES (new.rowid, \(text("new.data")));
        END;
        CREATE TRIGGER floor_note_text_update AFTER UPDATE OF data ON floor_object WHEN new.type = 'BenchNote' BEGIN
            UPDATE floor_note_text SET text = \(text("new.data")) WHERE rowid = new.rowid;
        END;
        CREATE TRIGGER floor_note_text_delete AFTER DELETE ON floor_object WHEN old.type = 'BenchNote' BEGIN
            DELETE FROM floor_note_text WHERE rowid = old.rowid;
        END;
        INSERT INTO floor_note_text (rowid, text) SELECT rowid, \(text("data")) FROM floor_object WHERE type = 'BenchNote';
        """

    static let drop = """
        DROP TRIGGER floor_note_text_insert;
        DROP TRIGGER floor_note_text_update;
        DROP TRIGGER floor_note_text_delete;
        DROP TABLE floor_note_text;
        """

    static let matchingSQL = """
        SELECT floor_object.data FROM floor_note_text JOIN floor_object ON floor_object.rowid = floor_note_text.rowid
        WHERE floor_note_text MATCH ?1
        """
    static let mostRelevantSQL = """
        SELECT floor_object.data FROM floor_note_text JOIN floor_object ON floor_object.rowid = floor_note_text.rowid
        WHERE floor_note_text MATCH ?1 ORDER BY bm25(floor_note_text), floor_object.identifier LIMIT ?2
        """

    let matching: FloorContender.Statement
    let mostRelevant: FloorContender.Statement

    init(_ floor: FloorContender) throws {
        matching = try floor.prepare(Self.matchingSQL)
        mostRelevant = try floor.prepare(Self.mostRelevantSQL)
    }

    func finalize() {
        matching.finalize()
        mostRelevant.finalize()
    }
}

extension FloorContender: QueryContender {
    func parkAll(notes: [BenchNote]) throws {
        try transaction {
            let now = Date().timeIntervalSinceReferenceDate
            for note in notes {
                try write(type: NoteStatements.type, id: note.id, data: encoder.encode(note), status: .undetermined, at: now)
            }
        }
    }

    func createNoteIndexes() throws {
        try execute(NoteStatements.indexes)
        noteStatements = try NoteStatements(self)
        // The plans read the indexes: the filter and the count the notebook's (the count reads
        // no row of the table: it needs nothing the index lacks), the page of every note the
        // title's, in its order (no sort),
        // and the notebook's page one of them (the title index, in order until 20 notes of
        // the notebook, when notebooks are few and large; else the notebook's, then a sort).
        try expectPlan(NoteStatements.inNotebookSQL, contains: "INDEX floor_note_notebook")
        try expectPlan(NoteStatements.countSQL, contains: "INDEX floor_note_notebook")
        try expectPlan(NoteStatements.byTitleSQL, contains: "INDEX floor_note_title", without: "TEMP B-TREE")
        try expectPlan(NoteStatements.inNotebookByTitleSQL, contains: "INDEX floor_note_")
    }

    private func statements() throws -> NoteStatements {
        guard let noteStatements else { throw BenchFailure("floor: the note indexes are not created") }
        return noteStatements
    }

    func notes(inNotebook notebook: String) throws -> [BenchNote] {
        let s = try statements().inNotebook.handle
        defer { sqlite3_reset(s) }
        sqlite3_bind_text(s, 1, notebook, -1, sqliteTransient)
        return try decodeNotes(s)
    }

    /// The floor has nothing to measure here: the row shows what GarageLite's app did before queries.
    func allNotesFiltered(notebook: String) throws -> [BenchNote] {
        throw BenchFailure("floor: retrieveAll + filter is GarageLite's row only")
    }

    func countNotes(inNotebook notebook: String) throws -> Int {
        let s = try statements().count.handle
        defer { sqlite3_reset(s) }
        sqlite3_bind_text(s, 1, notebook, -1, sqliteTransient)
        guard try step(s) else { return 0 }
        return Int(sqlite3_column_int64(s, 0))
    }

    func notesByTitle(inNotebook notebook: String?, limit: Int) throws -> [BenchNote] {
        let statements = try statements()
        let s = (notebook == nil ? statements.byTitle : statements.inNotebookByTitle).handle
        defer { sqlite3_reset(s) }
        if let notebook {
            sqlite3_bind_text(s, 1, notebook, -1, sqliteTransient)
            sqlite3_bind_int64(s, 2, Int64(limit))
        } else {
            sqlite3_bind_int64(s, 1, Int64(limit))
        }
        return try decodeNotes(s)
    }

    func createTextIndex() throws {
        try transaction { try execute(TextStatements.index) }
        textStatements = try TextStatements(self)
        // The plans read the full-text index, then each note by rowid.
        for sql in [TextStatements.matchingSQL, TextStatements.mostRelevantSQL] {
            try expectPlan(sql, contains: "VIRTUAL TABLE INDEX")
            try expectPlan(sql, contains: "floor_object USING INTEGER PRIMARY KEY")
        }
    }

    private func textIndexStatements() throws -> TextStatements {
        guard let textStatements else { throw BenchFailure("floor: the text index is not created") }
        return textStatements
    }

    func notes(matchingText words: String) throws -> [BenchNote] {
        let s = try textIndexStatements().matching.handle
        defer { sqlite3_reset(s) }
        sqlite3_bind_text(s, 1, words, -1, sqliteTransient)
        return try decodeNotes(s)
    }

    func mostRelevantNotes(_ words: String, limit: Int) throws -> [BenchNote] {
        let s = try textIndexStatements().mostRelevant.handle
        defer { sqlite3_reset(s) }
        sqlite3_bind_text(s, 1, words, -1, sqliteTransient)
        sqlite3_bind_int64(s, 2, Int64(limit))
        return try decodeNotes(s)
    }

    func park(note: BenchNote) throws {
        // Autocommit: one commit, the triggers' writes in it.
        try write(type: NoteStatements.type, id: note.id, data: encoder.encode(note), status: .undetermined,
                  at: Date().timeIntervalSinceReferenceDate)
    }

    func dropTextIndex() throws {
        textStatements?.finalize()
        textStatements = nil
        try transaction { try execute(TextStatements.drop) }
    }

    /// Every row of `s`, its first column decoded.
    private func decodeNotes(_ s: OpaquePointer?) throws -> [BenchNote] {
        var notes: [BenchNote] = []
        while try step(s) {
            notes.append(try decoder.decode(BenchNote.self, from: columnData(s, 0)))
        }
        return notes
    }

    /// Throws unless SQLite's plan of `sql` mentions `text` (and not `excluded`).
    private func expectPlan(_ sql: String, contains text: String, without excluded: String? = nil) throws {
        let statement = try prepare("EXPLAIN QUERY PLAN " + sql)
        defer { statement.finalize() }
        var details: [String] = []
        while try step(statement.handle) {
            details.append(String(cString: sqlite3_column_text(statement.handle, 3)))
        }
        let plan = details.joined(separator: "; ")
        try expect(plan.contains(text) && !(excluded.map(plan.contains) ?? false),
                   "floor: the plan of \(sql) is \"\(plan)\", expected \(text)\(excluded.map { " without \($0)" } ?? "")")
    }
}
