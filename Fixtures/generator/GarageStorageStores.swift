// The GarageStorage stores of Fixtures/garagestorage: files in Core Data's SQLite layout of
// GarageStorage's one entity (GSCoreDataObject), written row by row as GarageStorage 1.2 left
// them, for `Garage.importGarageStorageStore(at:)` to import.
//
//     swift run garage-fixtures --garagestorage Fixtures     # writes Fixtures/garagestorage/
//
// Core Data's own tables (Z_PRIMARYKEY, Z_METADATA, Z_MODELCACHE) are there with plausible
// content; the object table's columns are in an order of their own, since the import finds them
// by name. The last commits stay in the -wal file, as Core Data leaves them.

import Foundation
import GarageFixtureModels
import GarageLite
import GRDB

/// Seconds since 2001-01-01 00:00:00 UTC, as Core Data stores dates.
private let created: Double = 783_000_000    // 2025-10-24
private let modified: Double = 783_086_400

/// One row of ZGSCOREDATAOBJECT: NULL where `nil`.
private struct SourceRow {
    var type: String?
    var identifier: String?
    var data: String?
    var syncStatus: Int?
    var creationDate: Double? = created
    var modifiedDate: Double? = modified
}

/// The rows of store.garagestorage committed into the database file.
private func checkpointedRows() throws -> [SourceRow] {
    let encryptor = FixtureEncryptor()
    let diary = try encryptor.encrypt(Data(#"{"id":"d1","text":"Dear diary: the garage moved."}"#.utf8))
    return [
        // Swift rows, as GarageStorage's JSONEncoder wrote them: references as identifiers,
        // dates as "yyyy-MM-dd'T'HH:mm:ssZZZZZ", no syncStatus (kept out of the coding keys),
        // and no key for Nick's empty siblings.
        SourceRow(type: "Relative", identifier: "Sam", data: """
            {"name":"Sam","age":36,"birthdate":"1950-01-01T04:00:00Z","brother":"Nick","siblings":["Nick","Emily"],\
            "address":{"street":"1 Main St","city":"Boston"}}
            """, syncStatus: 2),
        SourceRow(type: "Relative", identifier: "Nick", data: #"{"name":"Nick","age":34,"birthdate":"1952-06-15T12:30:00-04:00"}"#,
                  syncStatus: 3),
        // An Objective-C era row: references, the date and the address in MappableObject's shapes.
        SourceRow(type: "Relative", identifier: "Olivia", data: """
            {"name":"Olivia","age":61,\
            "birthdate":{"gs_type":"gs_transformableType","gs_transformableType":"gs_transformableDate","gs_transformableData":"1964-03-02T00:00:00Z"},\
            "brother":{"gs_type":"Relative","gs_identifier":"Sam"},\
            "siblings":[{"gs_type":"Relative","gs_identifier":"Sam"},{"gs_type":"Relative","gs_identifier":"Nick"}],\
            "address":{"gs_identifier":"kGSAnonymousObject","gs_type":"Residence","kGSAnonymousDataKey":"{\\"street\\":\\"9 Elm St\\",\\"city\\":\\"Salem\\"}"}}
            """, syncStatus: 1),
        // Encrypted by the app's delegate.
        SourceRow(type: "Diary", identifier: "d1", data: diary, syncStatus: 0),
        // A Hashable value under its hashValue (seeded per process: unknowable after a relaunch).
        SourceRow(type: "Badge", identifier: "-4526998374617813370", data: #"{"label":"Founder"}"#, syncStatus: nil),
        // Rows GarageStorage could not read, or kept twice.
        SourceRow(type: "Relative", identifier: "Ghost", data: nil, syncStatus: 1),
        SourceRow(type: "Relative", identifier: "Nick", data: #"{"name":"Nick","age":33}"#, syncStatus: 1,
                  modifiedDate: created - 86_400),
        SourceRow(type: nil, identifier: "orphan", data: "{}", syncStatus: 0),
    ]
}

/// The rows of store.garagestorage left in its -wal file: the last commits.
private let walRows: [SourceRow] = [
    SourceRow(type: "Relative", identifier: "Emily", data: #"{"name":"Emily","age":30,"brother":"Nick"}"#,
              syncStatus: nil, creationDate: modified, modifiedDate: modified + 60),
]

private func insert(_ rows: [SourceRow], into db: Database, from firstKey: Int) throws {
    for (offset, row) in rows.enumerated() {
        try db.execute(sql: """
            INSERT INTO ZGSCOREDATAOBJECT
                (Z_PK, Z_ENT, Z_OPT, ZGS_SYNCSTATUS, ZGS_VERSION, ZGS_CREATIONDATE, ZGS_MODIFIEDDATE, ZGS_DATA,
                 ZGS_IDENTIFIER, ZGS_TYPE)
            VALUES (?, 1, 1, ?, NULL, ?, ?, ?, ?, ?)
            """, arguments: [firstKey + offset, row.syncStatus, row.creationDate, row.modifiedDate, row.data,
                             row.identifier, row.type])
    }
    try db.execute(sql: "UPDATE Z_PRIMARYKEY SET Z_MAX = ? WHERE Z_ENT = 1", arguments: [firstKey + rows.count - 1])
}

/// Writes store.garagestorage and its -wal file into `folder`.
func writeGarageStorageStore(into folder: URL) throws {
    let path = folder.appendingPathComponent("store.garagestorage").path
    var configuration = Configuration()
    configuration.prepareDatabase { db in
        try db.execute(sql: "PRAGMA journal_mode = WAL")
        try db.execute(sql: "PRAGMA wal_autocheckpoint = 0")
    }
    let queue = try DatabaseQueue(path: path, configuration: configuration)
    let rows = try checkpointedRows()
    try queue.write { db in
        try db.execute(sql: """
            CREATE TABLE ZGSCOREDATAOBJECT ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZGS_SYNCSTATUS INTEGER,
                ZGS_VERSION INTEGER, ZGS_CREATIONDATE TIMESTAMP, ZGS_MODIFIEDDATE TIMESTAMP, ZGS_DATA VARCHAR,
                ZGS_IDENTIFIER VARCHAR, ZGS_TYPE VARCHAR );
            CREATE TABLE Z_PRIMARYKEY (Z_ENT INTEGER PRIMARY KEY, Z_NAME VARCHAR, Z_SUPER INTEGER, Z_MAX INTEGER);
            CREATE TABLE Z_METADATA (Z_VERSION INTEGER PRIMARY KEY, Z_UUID VARCHAR(255), Z_PLIST BLOB);
            CREATE TABLE Z_MODELCACHE (Z_CONTENT BLOB);
            INSERT INTO Z_PRIMARYKEY VALUES (1, 'GSCoreDataObject', 0, 0);
            INSERT INTO Z_METADATA VALUES (1, '6E1D9A3C-2B4F-4E8A-9C17-5D0F3B2A8E61', x'62706C6973743030');
            """)
        try insert(rows, into: db, from: 1)
    }
    try queue.writeWithoutTransaction { db in _ = try db.checkpoint(.truncate) }
    try queue.write { db in try insert(walRows, into: db, from: rows.count + 1) }
    // Copied while the connection is open, so that the last commits stay in the -wal file.
    let walPath = path + "-wal"
    let walSize = try FileManager.default.attributesOfItem(atPath: walPath)[.size] as? Int ?? 0
    guard walSize > 0 else { throw GeneratorError(description: "\(walPath) is empty: the last commits were checkpointed") }
    let copies = folder.appendingPathComponent("copies")
    try FileManager.default.createDirectory(at: copies, withIntermediateDirectories: true)
    try FileManager.default.copyItem(atPath: path, toPath: copies.appendingPathComponent("store.garagestorage").path)
    try FileManager.default.copyItem(atPath: walPath, toPath: copies.appendingPathComponent("store.garagestorage-wal").path)
    try queue.close()
    for suffix in ["", "-wal", "-shm"] {
        try? FileManager.default.removeItem(atPath: path + suffix)
    }
    for name in ["store.garagestorage", "store.garagestorage-wal"] {
        try FileManager.default.moveItem(at: copies.appendingPathComponent(name), to: folder.appendingPathComponent(name))
    }
    try FileManager.default.removeItem(at: copies)
    print("wrote store.garagestorage: \(rows.count) rows in the file, \(walRows.count) in its -wal (\(walSize) bytes)")
}
