import Foundation

/// One way to store `BenchNote`s and query them by notebook and title: the query workloads
/// (QueryWorkloads.swift) call these, and each implementation does the equivalent work its own
/// way, each result decoded into whole notes.
protocol QueryContender: AnyObject {
    /// Parks `notes` in one call (one transaction): the store the queries read, built untimed.
    func parkAll(notes: [BenchNote]) throws
    /// Creates the indexes the queries read, one on the notebook and one on the title, with the
    /// statistics SQLite's planner needs to prefer them (`ANALYZE`), then checks what it can of
    /// the plans.
    func createNoteIndexes() throws
    /// The notes of `notebook`, in identifier order.
    func notes(inNotebook notebook: String) throws -> [BenchNote]
    /// Every note, retrieved, then filtered in Swift: what an app without queries does.
    func allNotesFiltered(notebook: String) throws -> [BenchNote]
    /// How many notes `notebook` holds.
    func countNotes(inNotebook notebook: String) throws -> Int
    /// The first `limit` notes in title order, of `notebook` or of every note.
    func notesByTitle(inNotebook notebook: String?, limit: Int) throws -> [BenchNote]

    // The text rows, on a store of their own.

    /// Creates a full-text index of each note's title and body (for every implementation the
    /// same text, the title, a space and the body, and the same tokenizer: FTS5's `unicode61`,
    /// diacritics kept), kept up to date by the store as notes are parked, then checks what it
    /// can of the plans.
    func createTextIndex() throws
    /// The notes that hold every word of `words`, in identifier order.
    func notes(matchingText words: String) throws -> [BenchNote]
    /// The `limit` notes most relevant to `words` (all required; FTS5's BM25), ties in
    /// identifier order.
    func mostRelevantNotes(_ words: String, limit: Int) throws -> [BenchNote]
    /// Parks one note, committed when it returns.
    func park(note: BenchNote) throws
    /// Drops the text index and what keeps it.
    func dropTextIndex() throws
    func close() throws
}

extension Implementation {
    func openForQueries(path: String) throws -> any QueryContender {
        switch self {
        case .garageLite: try GarageLiteContender(path: path)
        case .floor: try FloorContender(path: path)
        case .grdb: try GRDBContender(path: path)
        }
    }
}
