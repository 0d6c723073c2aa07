import Foundation
import GRDB
import GarageLiteCore

/// A GarageStorage store file, read: Core Data's SQLite layout of GarageStorage's one entity,
/// `GSCoreDataObject`, the table `ZGSCOREDATAOBJECT`.
///
/// The file is never opened in place: it is copied, with its `-wal` file (where Core Data's
/// last commits may still be), into a temporary folder, and the copy is read and deleted. So
/// the source, and its folder, are left exactly as they were, whatever SQLite would do on
/// opening a WAL database (create a `-shm` file, replay the WAL).
package enum GarageStorageFile {
    package static let table = "ZGSCOREDATAOBJECT"
    /// The columns the import needs, found by name: Core Data's order is its own.
    package static let columns = ["Z_PK", "ZGS_TYPE", "ZGS_IDENTIFIER", "ZGS_DATA", "ZGS_SYNCSTATUS",
                          "ZGS_CREATIONDATE", "ZGS_MODIFIEDDATE"]

    /// The rows of the GarageStorage store at `path`, in primary key order, and the store's
    /// Core Data UUID (`Z_METADATA.Z_UUID`, Core Data's `NSStoreUUIDKey`: given to the store when
    /// it was created, and kept by every save, copy and move), `nil` when it has none (a file
    /// Core Data did not make).
    ///
    /// - throws: ``GarageError/notAGarageStorageStore(path:reason:)`` when the file is missing,
    ///   is not an SQLite database, or has no GarageStorage table with its columns.
    package static func read(at path: String) throws -> (rows: [GarageStorageRow], storeUUID: String?) {
        let fileManager = FileManager.default
        var isDirectory: ObjCBool = false
        guard fileManager.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue else {
            throw GarageError.notAGarageStorageStore(path: path, reason: "there is no file there")
        }
        let folder = fileManager.temporaryDirectory.appendingPathComponent("GarageLite-import-\(UUID().uuidString)")
        defer { try? fileManager.removeItem(at: folder) }
        let copy = folder.appendingPathComponent("GarageStorage.sqlite").path
        do {
            try fileManager.createDirectory(at: folder, withIntermediateDirectories: true)
            try fileManager.copyItem(atPath: path, toPath: copy)
            if fileManager.fileExists(atPath: path + "-wal") {
                try fileManager.copyItem(atPath: path + "-wal", toPath: copy + "-wal")
            }
        } catch {
            throw GarageError.cannotOpenStore(path: path, reason: "it could not be copied to be read: \(error.localizedDescription)")
        }
        do {
            var configuration = Configuration()
            configuration.label = "GarageLite.import"
            let queue = try DatabaseQueue(path: copy, configuration: configuration)
            defer { try? queue.close() }
            return try queue.read { db in
                guard try db.tableExists(table) else {
                    throw GarageError.notAGarageStorageStore(
                        path: path, reason: "it has no table \(table), GarageStorage's one entity")
                }
                let present = Set(try db.columns(in: table).map { $0.name.uppercased() })
                let missing = columns.filter { !present.contains($0) }
                guard missing.isEmpty else {
                    throw GarageError.notAGarageStorageStore(
                        path: path, reason: "its table \(table) lacks the columns \(missing.joined(separator: ", "))")
                }
                let cursor = try GRDB.Row.fetchCursor(db, sql: """
                    SELECT Z_PK, ZGS_TYPE, ZGS_IDENTIFIER, ZGS_DATA, ZGS_SYNCSTATUS, ZGS_CREATIONDATE, ZGS_MODIFIEDDATE
                    FROM \(table) ORDER BY Z_PK
                    """)
                var rows: [GarageStorageRow] = []
                while let row = try cursor.next() {
                    rows.append(read(row))
                }
                return (rows, try storeUUID(db))
            }
        } catch let error as GarageError {
            throw error
        } catch {
            throw GarageError.notAGarageStorageStore(path: path, reason: "it can't be read as an SQLite database: \(error)")
        }
    }

    /// Core Data's UUID of the store, when it has its metadata table and the UUID is text.
    private static func storeUUID(_ db: Database) throws -> String? {
        guard try db.tableExists("Z_METADATA"),
              try db.columns(in: "Z_METADATA").contains(where: { $0.name.uppercased() == "Z_UUID" }) else { return nil }
        let value = try DatabaseValue.fetchOne(db, sql: "SELECT Z_UUID FROM Z_METADATA LIMIT 1")
        guard case .string(let uuid)? = value?.storage, !uuid.isEmpty else { return nil }
        return uuid
    }

    /// One row, each column read strictly: a value of another type is a problem, not a guess.
    private static func read(_ row: GRDB.Row) -> GarageStorageRow {
        var problems: [String] = []
        func text(_ index: Int, _ name: String) -> String? {
            let value = row[index] as DatabaseValue
            if value.isNull { return nil }
            guard case .string(let string) = value.storage else {
                problems.append("\(name) is not text")
                return nil
            }
            return string
        }
        func integer(_ index: Int, _ name: String) -> Int64? {
            let value = row[index] as DatabaseValue
            if value.isNull { return nil }
            guard case .int64(let integer) = value.storage else {
                problems.append("\(name) is not an integer")
                return nil
            }
            return integer
        }
        func real(_ index: Int, _ name: String) -> Double? {
            let value = row[index] as DatabaseValue
            switch value.storage {
            case .null: return nil
            case .double(let double): return double
            case .int64(let integer): return Double(integer)
            default:
                problems.append("\(name) is not a number")
                return nil
            }
        }
        var result = GarageStorageRow(
            primaryKey: integer(0, "Z_PK") ?? 0,
            type: text(1, "ZGS_TYPE"), identifier: text(2, "ZGS_IDENTIFIER"), data: text(3, "ZGS_DATA"),
            syncStatus: integer(4, "ZGS_SYNCSTATUS"),
            creationDate: real(5, "ZGS_CREATIONDATE"), modificationDate: real(6, "ZGS_MODIFIEDDATE"))
        result.problems = problems
        return result
    }
}
