import Crypto
import Foundation
import GarageLite
import GRDBSQLite

/// The floor: Foundation's JSONEncoder/JSONDecoder and SQLite's C API, with prepared
/// statements reused, on a table with the same keys and sync index as GarageLite's, in WAL
/// mode with synchronous=NORMAL, and one transaction per batch.
final class FloorContender: Contender {
    private(set) var db: OpaquePointer?
    let encoder = JSONEncoder()
    let decoder = JSONDecoder()
    let personType = "BenchPerson"
    private let teamType = "BenchTeam"

    private var upsert: Statement!
    private var selectOne: Statement!
    private var selectAll: Statement!
    private var countStatus: Statement!
    private var updateStatus: Statement!
    private var selectStatus: Statement!
    private var selectClaimable: Statement!
    private var markSyncing: Statement!
    private var markSynced: Statement!
    /// The statements of the sync workloads' table (FloorContender+Sync.swift), prepared on first use.
    var syncStatements: SyncStatements?
    /// The statements of the query workloads (FloorContender+Queries.swift), prepared with their indexes.
    var noteStatements: NoteStatements?
    /// The statements of the text rows (FloorContender+Queries.swift), prepared with the text index.
    var textStatements: TextStatements?
    /// The statements and coders of the model rows (ModelWorkloads.swift), prepared on first use.
    var modelState: FloorModelState?
    /// The key each person's JSON is encrypted with, when the workload encrypts: AES-256-GCM,
    /// a random nonce each time, the row's type and identifier authenticated, stored as base64,
    /// as GarageLite's `AESGCMEncryptor` does.
    private var key: SymmetricKey?

    init(path: String) throws {
        var handle: OpaquePointer?
        let rc = sqlite3_open_v2(path, &handle, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nil)
        db = handle
        guard rc == SQLITE_OK else {
            defer { sqlite3_close_v2(handle) }
            throw BenchFailure("floor: cannot open \(path): \(String(cString: sqlite3_errstr(rc)))")
        }
        try execute("PRAGMA journal_mode=WAL")
        try execute("PRAGMA synchronous=\(BenchDurability.sqliteSynchronous)")
        try execute("""
            CREATE TABLE IF NOT EXISTS floor_object (
                type TEXT NOT NULL,
                identifier TEXT NOT NULL,
                data TEXT NOT NULL,
                syncStatus INTEGER NOT NULL,
                creationDate REAL NOT NULL,
                modificationDate REAL NOT NULL,
                revision INTEGER NOT NULL,
                PRIMARY KEY (type, identifier));
            CREATE INDEX IF NOT EXISTS floor_sync ON floor_object (syncStatus, type, modificationDate);
            """)
        // Parking is an upsert, as in GarageLite: a row parked again gets the new content,
        // keeps its creation date, and its revision increases.
        upsert = try prepare("""
            INSERT INTO floor_object (type, identifier, data, syncStatus, creationDate, modificationDate, revision)
            VALUES (?1, ?2, ?3, ?4, ?5, ?5, 1)
            ON CONFLICT (type, identifier) DO UPDATE SET
                data = excluded.data, syncStatus = excluded.syncStatus,
                modificationDate = excluded.modificationDate, revision = floor_object.revision + 1
            """)
        selectOne = try prepare("SELECT data, syncStatus FROM floor_object WHERE type = ?1 AND identifier = ?2")
        selectAll = try prepare("SELECT data, syncStatus, identifier FROM floor_object WHERE type = ?1 ORDER BY identifier")
        countStatus = try prepare("SELECT COUNT(*) FROM floor_object WHERE syncStatus = ?1 AND type = ?2")
        updateStatus = try prepare("UPDATE floor_object SET syncStatus = ?1 WHERE type = ?2 AND identifier = ?3")
        selectStatus = try prepare("""
            SELECT data, syncStatus FROM floor_object WHERE syncStatus = ?1 AND type = ?2 ORDER BY modificationDate
            """)
        selectClaimable = try prepare("""
            SELECT identifier, revision, data FROM floor_object
            WHERE syncStatus = ?1 AND type = ?2 ORDER BY modificationDate LIMIT ?3
            """)
        markSyncing = try prepare("UPDATE floor_object SET syncStatus = ?3 WHERE type = ?1 AND identifier = ?2")
        markSynced = try prepare("""
            UPDATE floor_object SET syncStatus = ?4 WHERE type = ?1 AND identifier = ?2 AND revision = ?3
            """)
    }

    // MARK: - Workloads

    func parkAll(_ people: [BenchPerson]) throws {
        try transaction {
            let now = Date().timeIntervalSinceReferenceDate
            for person in people { try write(person, at: now) }
        }
    }

    func park(_ person: BenchPerson) throws {
        try write(person, at: Date().timeIntervalSinceReferenceDate) // autocommit: one commit
    }

    func parkAll(teams: [BenchTeam]) throws {
        try transaction {
            let now = Date().timeIntervalSinceReferenceDate
            for team in teams {
                for member in team.members { try write(member, at: now) }
                let stored = StoredTeam(id: team.id, name: team.name, memberIDs: team.members.map(\.id))
                try write(type: teamType, id: team.id, data: encoder.encode(stored), status: .undetermined, at: now)
            }
        }
    }

    func retrieve(id: String) throws -> BenchPerson? {
        try fetchPerson(id: id)
    }

    func retrieveAll() throws -> [BenchPerson] {
        let s = selectAll.handle
        defer { sqlite3_reset(s) }
        sqlite3_bind_text(s, 1, personType, -1, sqliteTransient)
        var people: [BenchPerson] = []
        while try step(s) {
            people.append(try person(s, data: 0, status: 1, id: key == nil ? nil : String(cString: sqlite3_column_text(s, 2))))
        }
        return people
    }

    func retrieveTeam(id: String) throws -> BenchTeam? {
        // One read transaction: the team and its members come from one snapshot.
        try transaction(kind: "BEGIN") {
            let s = selectOne.handle
            sqlite3_bind_text(s, 1, teamType, -1, sqliteTransient)
            sqlite3_bind_text(s, 2, id, -1, sqliteTransient)
            let stored: StoredTeam
            do {
                defer { sqlite3_reset(s) }
                guard try step(s) else { return nil }
                stored = try decoder.decode(StoredTeam.self, from: columnData(s, 0))
            }
            var members: [BenchPerson] = []
            members.reserveCapacity(stored.memberIDs.count)
            for memberID in stored.memberIDs {
                guard let member = try fetchPerson(id: memberID) else {
                    throw BenchFailure("floor: missing member \(memberID)")
                }
                members.append(member)
            }
            return BenchTeam(id: stored.id, name: stored.name, members: members)
        }
    }

    func countNotSynced() throws -> Int {
        try count(status: .notSynced)
    }

    func setStatus(_ status: SyncStatus, of person: BenchPerson) throws {
        let s = updateStatus.handle
        defer { sqlite3_reset(s) }
        sqlite3_bind_int64(s, 1, Int64(status.rawValue))
        sqlite3_bind_text(s, 2, personType, -1, sqliteTransient)
        sqlite3_bind_text(s, 3, person.id, -1, sqliteTransient)
        _ = try step(s) // autocommit: one commit
    }

    func count(status: SyncStatus) throws -> Int {
        let s = countStatus.handle
        defer { sqlite3_reset(s) }
        sqlite3_bind_int64(s, 1, Int64(status.rawValue))
        sqlite3_bind_text(s, 2, personType, -1, sqliteTransient)
        guard try step(s) else { return 0 }
        return Int(sqlite3_column_int64(s, 0))
    }

    func retrieveNotSynced() throws -> [BenchPerson] {
        let s = selectStatus.handle
        defer { sqlite3_reset(s) }
        sqlite3_bind_int64(s, 1, Int64(SyncStatus.notSynced.rawValue))
        sqlite3_bind_text(s, 2, personType, -1, sqliteTransient)
        var people: [BenchPerson] = []
        while try step(s) {
            people.append(try person(s, data: 0, status: 1))
        }
        return people
    }

    func claimAndComplete(limit: Int) throws -> Int {
        // Claim: one write transaction selects the oldest rows with their revision, decodes
        // them for the upload, and marks them .syncing.
        let claimed: [(id: String, revision: Int64)] = try transaction {
            let s = selectClaimable.handle
            sqlite3_bind_int64(s, 1, Int64(SyncStatus.notSynced.rawValue))
            sqlite3_bind_text(s, 2, personType, -1, sqliteTransient)
            sqlite3_bind_int64(s, 3, Int64(limit))
            var rows: [(id: String, revision: Int64)] = []
            var objects: [BenchPerson] = []
            do {
                defer { sqlite3_reset(s) }
                while try step(s) {
                    rows.append((String(cString: sqlite3_column_text(s, 0)), sqlite3_column_int64(s, 1)))
                    var object = try decoder.decode(BenchPerson.self, from: columnData(s, 2))
                    object.syncStatus = .syncing
                    objects.append(object)
                }
            }
            let u = markSyncing.handle
            for row in rows {
                sqlite3_bind_text(u, 1, personType, -1, sqliteTransient)
                sqlite3_bind_text(u, 2, row.id, -1, sqliteTransient)
                sqlite3_bind_int64(u, 3, Int64(SyncStatus.syncing.rawValue))
                try run(u)
            }
            try expect(objects.count == rows.count, "floor: claim decoded \(objects.count) of \(rows.count)")
            return rows
        }
        if claimed.isEmpty { return 0 }
        // Complete: another write transaction marks .synced the rows whose revision is unchanged.
        return try transaction {
            let u = markSynced.handle
            var synced = 0
            for row in claimed {
                sqlite3_bind_text(u, 1, personType, -1, sqliteTransient)
                sqlite3_bind_text(u, 2, row.id, -1, sqliteTransient)
                sqlite3_bind_int64(u, 3, row.revision)
                sqlite3_bind_int64(u, 4, Int64(SyncStatus.synced.rawValue))
                try run(u)
                synced += Int(sqlite3_changes(db))
            }
            return synced
        }
    }

    func forEachPerson(_ body: (BenchPerson) throws -> Void) throws {
        // A statement of its own, stepped row by row: one row decoded at a time.
        let s = try prepare("SELECT data, syncStatus FROM floor_object WHERE type = ?1 ORDER BY identifier")
        sqlite3_bind_text(s.handle, 1, personType, -1, sqliteTransient)
        while try step(s.handle) {
            try body(try person(s.handle, data: 0, status: 1))
        }
    }

    func close() throws {
        for statement in [upsert, selectOne, selectAll, countStatus, updateStatus, selectStatus,
                          selectClaimable, markSyncing, markSynced] {
            statement?.finalize()
        }
        syncStatements?.finalize()
        syncStatements = nil
        noteStatements?.finalize()
        noteStatements = nil
        textStatements?.finalize()
        textStatements = nil
        modelState?.finalize()
        modelState = nil
        if let db {
            let rc = sqlite3_close_v2(db)
            guard rc == SQLITE_OK else { throw BenchFailure("floor: close failed: \(rc)") }
        }
        db = nil
    }

    deinit {
        try? close()
    }

    // MARK: - SQLite

    final class Statement {
        private(set) var handle: OpaquePointer?
        init(_ handle: OpaquePointer?) { self.handle = handle }
        func finalize() {
            sqlite3_finalize(handle)
            handle = nil
        }
        deinit { finalize() }
    }

    func prepare(_ sql: String) throws -> Statement {
        var handle: OpaquePointer?
        guard sqlite3_prepare_v2(db, sql, -1, &handle, nil) == SQLITE_OK else {
            throw BenchFailure("floor: cannot prepare \(sql): \(errorMessage)")
        }
        return Statement(handle)
    }

    func execute(_ sql: String) throws {
        guard sqlite3_exec(db, sql, nil, nil, nil) == SQLITE_OK else {
            throw BenchFailure("floor: \(sql): \(errorMessage)")
        }
    }

    var errorMessage: String { String(cString: sqlite3_errmsg(db)) }

    /// Steps `s`: true for a row, false when done.
    func step(_ s: OpaquePointer?) throws -> Bool {
        switch sqlite3_step(s) {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default: throw BenchFailure("floor: step failed: \(errorMessage)")
        }
    }

    /// Runs a statement that returns no row, then resets it for its next use.
    func run(_ s: OpaquePointer?) throws {
        defer { sqlite3_reset(s) }
        guard sqlite3_step(s) == SQLITE_DONE else { throw BenchFailure("floor: step failed: \(errorMessage)") }
    }

    func transaction<Result>(kind: String = "BEGIN IMMEDIATE", _ body: () throws -> Result) throws -> Result {
        try execute(kind)
        do {
            let result = try body()
            try execute("COMMIT")
            return result
        } catch {
            try? execute("ROLLBACK")
            throw error
        }
    }

    private func write(_ person: BenchPerson, at date: Double) throws {
        var data = try encoder.encode(person)
        if let key {
            let box = try AES.GCM.seal(data, using: key, authenticating: Self.associatedData(personType, person.id))
            data = Data(box.combined!.base64EncodedString().utf8)
        }
        try write(type: personType, id: person.id, data: data, status: person.syncStatus, at: date)
    }

    func encrypt(with key: SymmetricKey) throws {
        self.key = key
    }

    /// The row's type and identifier, each preceded by its length.
    private static func associatedData(_ type: String, _ id: String) -> Data {
        var data = Data()
        for part in [type, id] {
            withUnsafeBytes(of: UInt32(part.utf8.count).bigEndian) { data.append(contentsOf: $0) }
            data.append(contentsOf: part.utf8)
        }
        return data
    }

    func write(type: String, id: String, data: Data, status: SyncStatus, at date: Double) throws {
        let s = upsert.handle
        sqlite3_bind_text(s, 1, type, -1, sqliteTransient)
        sqlite3_bind_text(s, 2, id, -1, sqliteTransient)
        data.withUnsafeBytes { bytes in
            _ = sqlite3_bind_text(s, 3, bytes.baseAddress?.assumingMemoryBound(to: CChar.self),
                                  Int32(bytes.count), sqliteTransient)
        }
        sqlite3_bind_int64(s, 4, Int64(status.rawValue))
        sqlite3_bind_double(s, 5, date)
        try run(s)
    }

    private func fetchPerson(id: String) throws -> BenchPerson? {
        let s = selectOne.handle
        defer { sqlite3_reset(s) }
        sqlite3_bind_text(s, 1, personType, -1, sqliteTransient)
        sqlite3_bind_text(s, 2, id, -1, sqliteTransient)
        guard try step(s) else { return nil }
        return try person(s, data: 0, status: 1, id: id)
    }

    /// The text of a column, without a copy: valid until the statement steps or resets.
    func columnData(_ s: OpaquePointer?, _ column: Int32) -> Data {
        guard let text = sqlite3_column_text(s, column) else { return Data() }
        let count = Int(sqlite3_column_bytes(s, column))
        return Data(bytesNoCopy: UnsafeMutableRawPointer(mutating: text), count: count, deallocator: .none)
    }

    private func person(_ s: OpaquePointer?, data: Int32, status: Int32, id: String? = nil) throws -> BenchPerson {
        var json = columnData(s, data)
        if let key {
            guard let id, let combined = Data(base64Encoded: json) else { throw BenchFailure("floor: not an envelope") }
            json = try AES.GCM.open(AES.GCM.SealedBox(combined: combined), using: key,
                                    authenticating: Self.associatedData(personType, id))
        }
        var person = try decoder.decode(BenchPerson.self, from: json)
        person.syncStatus = SyncStatus(rawValue: Int(sqlite3_column_int64(s, status))) ?? .undetermined
        return person
    }
}

/// SQLITE_TRANSIENT, which Swift does not import: SQLite copies the bound value.
var sqliteTransient: sqlite3_destructor_type {
    unsafeBitCast(-1, to: sqlite3_destructor_type.self)
}
