import Foundation
@testable import GarageLite

// The rows of a garage's store as its engine holds them, read through the engine's statements
// (`StorageEngine`, `RowStatements`): what the behaviour tests inspect below the public API,
// with whatever engine stands behind the garage. They read committed rows only (no unsaved
// changes), with every column.
extension Store {
    /// The row `key` (not a tombstone), or `nil`.
    func storedRow(_ key: ObjectKey) throws -> StoredRow? {
        try engine.read("test") { statements in try statements.row(key, for: .all) }
    }

    /// The rows of `type` (not tombstones), in identifier order.
    func storedRows(ofType type: String) throws -> [StoredRow] {
        try engine.read("test") { statements in try statements.rows(ofType: type, for: .all).map { try $0.get() } }
    }

    /// Every row, tombstones too, in type then identifier order.
    func allStoredRows() throws -> [StoredRow] {
        try engine.read("test") { statements in
            try statements.records(ofType: nil, after: nil, limit: Int(Int32.max)).map { try $0.get() }
        }
    }

    /// The distinct type names of the rows.
    func storedTypes() throws -> [String] {
        try engine.read("test") { statements in try statements.types() }
    }
}
