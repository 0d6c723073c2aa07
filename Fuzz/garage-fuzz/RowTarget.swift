import Foundation
import GarageLite
import GRDB

extension FuzzTarget {
    /// The input damages one column of a parked row behind the garage's back (another SQLite
    /// connection writes it): the first byte picks the row and the column, the second the kind
    /// of value, the rest is the value. The garage then reads the row every way it can (the
    /// strict row reader, the graph decoder through the references, records, metadata, claims,
    /// `check()`), and the row is put back as it was.
    static let row = FuzzTarget(
        name: "row",
        summary: "one column of a parked row overwritten with a value of any kind, then read every way"
    ) { bytes in
        guard bytes.count >= 2 else { return }
        let store = DamagedRowStore.shared
        let (key, column) = store.target(bytes[0])
        let value: DatabaseValue
        let payload = Array(bytes.dropFirst(2))
        switch bytes[1] % 5 {
        case 0: value = String(decoding: payload, as: UTF8.self).databaseValue
        case 1: value = payload.reduce(Int64(0)) { $0 << 8 | Int64($1) }.databaseValue
        case 2: value = (Double(String(decoding: payload, as: UTF8.self)) ?? Double(payload.count) / 7).databaseValue
        case 3: value = Data(payload).databaseValue
        default: value = .null
        }
        store.damage(key, column: column, value: value) { garage in
            _ = try? garage.retrieve(FuzzParent.self, identifier: "p")
            _ = try? garage.retrieveAll(FuzzChild.self)
            _ = try? garage.retrieveAll(FuzzParent.self)
            _ = try? garage.metadata(FuzzChild.self, identifier: key.identifier)
            _ = try? garage.records(ofType: key.typeName)
            if let claim = try? garage.claim(FuzzChild.self, limit: 10) { _ = try? garage.release(claim) }
            _ = try? garage.check(maximumProblems: 5)
        }
    }
}

/// A file store holding a parent and its children, and a second connection that damages and
/// restores its rows.
final class DamagedRowStore: Sendable {
    static let shared = DamagedRowStore()

    /// The columns of the object table.
    static let columns = [
        "type", "identifier", "data", "isEncrypted", "syncStatus", "creationDate", "modificationDate", "revision",
        "isRoot", "refs", "claim", "claimedAt", "isDeleted", "isRemote", "attempts", "lastError", "retryAt",
        "referencesKnown", "base", "serverVersion",
    ]
    static let keys = [ObjectKey(typeName: "FuzzParent", identifier: "p"), ObjectKey(typeName: "FuzzChild", identifier: "c0")]

    private let garage: Garage
    private let connection: DatabaseQueue
    /// Each row as parked, every column, and its rowid.
    private let originals: [ObjectKey: (rowid: Int64, values: [String: DatabaseValue])]

    private init() {
        // The fuzzer can't go on without its store: a failure here is the harness's, not a finding.
        let folder = FileManager.default.temporaryDirectory
            .appendingPathComponent("garage-fuzz-rows-\(ProcessInfo.processInfo.processIdentifier)", isDirectory: true)
        try? FileManager.default.removeItem(at: folder)
        try! FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let path = folder.appendingPathComponent("store.garage").path
        garage = try! Garage(path: path)
        try! garage.park(FuzzParent(id: "p"))
        var configuration = Configuration()
        configuration.busyMode = .timeout(10)
        connection = try! DatabaseQueue(path: path, configuration: configuration)
        originals = try! connection.read { db in
            var rows: [ObjectKey: (Int64, [String: DatabaseValue])] = [:]
            for key in Self.keys {
                let row = try Row.fetchOne(db, sql: "SELECT rowid, * FROM garage_object WHERE type = ? AND identifier = ?",
                                           arguments: [key.typeName, key.identifier])!
                rows[key] = (row["rowid"], Dictionary(uniqueKeysWithValues: (["rowid"] + Self.columns).map { ($0, row[$0] as DatabaseValue) }))
            }
            return rows
        }
    }

    func target(_ byte: UInt8) -> (ObjectKey, String) {
        (Self.keys[Int(byte) % Self.keys.count], Self.columns[Int(byte) / Self.keys.count % Self.columns.count])
    }

    /// Writes `value` into `column` of the row `key`, lets `body` read, and puts the row back.
    func damage(_ key: ObjectKey, column: String, value: DatabaseValue, _ body: (Garage) -> Void) {
        guard let original = originals[key] else { return }
        let written = (try? connection.write { db in
            try db.execute(sql: "UPDATE garage_object SET \"\(column)\" = ? WHERE rowid = ?", arguments: [value, original.rowid])
        }) != nil
        guard written else { return } // a constraint refused the value: nothing to read
        body(garage)
        _ = try? garage.releaseStaleClaims(olderThan: -3_600)
        try! connection.write { db in
            let names = ["rowid"] + Self.columns
            try db.execute(sql: "DELETE FROM garage_object WHERE rowid = ?", arguments: [original.rowid])
            try db.execute(
                sql: "INSERT INTO garage_object (\(names.map { "\"\($0)\"" }.joined(separator: ", "))) "
                    + "VALUES (\(names.map { _ in "?" }.joined(separator: ", ")))",
                arguments: StatementArguments(names.map { original.values[$0] ?? .null }))
        }
    }
}
