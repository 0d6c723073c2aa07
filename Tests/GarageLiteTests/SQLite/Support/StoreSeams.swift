@testable import GarageLite
import GarageLiteSQLite
import Foundation
import GRDB

// What the tests reach below the public API: the SQLite connection of a garage's store, and
// its statements on one `Database`. Only tests use these.
extension Store {
    /// The SQLite engine behind the store.
    var sqlite: SQLiteEngine {
        get throws {
            guard let engine = engine as? SQLiteEngine else { throw GarageError.storageFailure(operation: "test", reason: "not SQLite") }
            return engine
        }
    }

    var writer: any DatabaseWriter { get throws { try sqlite.writer } }

    /// Reads with a `Database` of the store, in one snapshot.
    func read<T>(_ operation: String, _ body: (Database) throws -> T) throws -> T {
        try sqlite.writer.read(body)
    }

    /// Writes with a `Database` of the store, in one transaction.
    func write<T: Sendable>(_ operation: String, _ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await sqlite.writer.write(body)
    }

    @discardableResult
    func limitPageCount(to count: Int) throws -> Int { try sqlite.limitPageCount(to: count) }
    func pageCount() throws -> Int { try sqlite.pageCount() }
    func synchronousSetting() throws -> Int { try sqlite.synchronousSetting() }

    /// The row `key` with every column.
    static func row(_ db: Database, _ key: ObjectKey) throws -> StoredRow? {
        try SQLiteConnection(db).row(key, for: .all)
    }

    static func rows(_ db: Database, type: String) throws -> [StoredRow] {
        try SQLiteConnection(db).rows(ofType: type, for: .all).map { try $0.get() }
    }

    static func allRows(_ db: Database) throws -> [StoredRow] {
        try SQLiteConnection(db).readRows("SELECT \(SQLiteConnection.columns) FROM garage_object", [], purpose: .all)
            .map { try $0.get() }
    }

    static func types(_ db: Database) throws -> [String] {
        try SQLiteConnection(db).types()
    }

    static func open(path: String, busyTimeout: TimeInterval, migrations: [Schema.Migration] = Schema.migrations) throws -> SQLiteEngine {
        try SQLiteEngine.open(path: path, busyTimeout: busyTimeout, migrations: migrations)
    }

    static var unreachableRowsSQL: String { SQLiteConnection.unreachableRowsSQL }
}

extension Garage {
    convenience init(store engine: SQLiteEngine) {
        self.init(engine: engine)
    }
}

extension GraphDecoder {
    /// A decoder over rows held in memory, unencrypted.
    convenience init(rows: @escaping (ObjectKey) -> StoredRow?) {
        let stage = EncryptionStage(delegate: nil)
        self.init(dateDecoding: .garageDefault, context: Garage.threadContext, registry: RegisteredTypes()) { key in try rows(key).map(stage.open) }
    }

    func decode<T: Decodable>(_ type: T.Type, from row: StoredRow) throws -> T {
        try decode(T.self, from: EncryptionStage(delegate: nil).open(row))
    }
}
