import Foundation
import GRDB

/// A note's GRDB record: its JSON in a data column.
struct NoteRecord: Codable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "note"
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
}
