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
