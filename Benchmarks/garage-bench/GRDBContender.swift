import Crypto
import Foundation
import GarageLite
import GRDB

/// A GRDB record: the row of one person (or team), its JSON in a data column.
struct PersonRecord: Codable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "person"
    var id: String
    var data: String // JSON from JSONEncoder
    var syncStatus: Int
    var modificationDate: Date
    var revision: Int
}

struct TeamRecord: Codable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "team"
    var id: String
    var data: String // JSON of a StoredTeam: the members are PersonRecords
    var syncStatus: Int
    var modificationDate: Date
    var revision: Int
}

/// The baseline a user would write instead of GarageLite: GRDB records in a DatabasePool
/// (WAL, synchronous=NORMAL), JSON through JSONEncoder/JSONDecoder, one `write` per batch.
final class GRDBContender: Contender {
    private var dbPool: DatabasePool?
    let encoder = JSONEncoder()
    let decoder = JSONDecoder()
    /// The model rows' coders (ModelWorkloads.swift).
    let modelCoders = ModelCoders()

    private enum Columns {
        static let syncStatus = Column("syncStatus")
        static let modificationDate = Column("modificationDate")
        static let revision = Column("revision")
    }

    init(path: String) throws {
        let pool = try DatabasePool(path: path)
        try pool.write { db in
            for table in [PersonRecord.databaseTableName, TeamRecord.databaseTableName] {
                try db.create(table: table) { t in
                    t.primaryKey("id", .text)
                    t.column("data", .text).notNull()
                    t.column("syncStatus", .integer).notNull()
                    t.column("modificationDate", .datetime).notNull()
                    t.column("revision", .integer).notNull()
                }
            }
            try db.create(table: ModelRecord.databaseTableName) { t in
                t.primaryKey("id", .text)
                t.column("data", .text).notNull()
                t.column("modificationDate", .datetime).notNull()
            }
            try db.create(index: "person_sync", on: PersonRecord.databaseTableName,
                          columns: ["syncStatus", "modificationDate"])
        }
        // After the pool's own WAL setup, which sets NORMAL.
        try pool.writeWithoutTransaction { try $0.execute(sql: "PRAGMA synchronous = \(BenchDurability.sqliteSynchronous)") }
        dbPool = pool
    }

    var pool: DatabasePool {
        get throws {
            guard let dbPool else { throw BenchFailure("GRDB store used after close") }
            return dbPool
        }
    }

    private func record(_ person: BenchPerson, at date: Date) throws -> PersonRecord {
        PersonRecord(id: person.id, data: String(decoding: try encoder.encode(person), as: UTF8.self),
                     syncStatus: person.syncStatus.rawValue, modificationDate: date, revision: 1)
    }

    private func person(_ record: PersonRecord) throws -> BenchPerson {
        var person = try decoder.decode(BenchPerson.self, from: Data(record.data.utf8))
        person.syncStatus = SyncStatus(rawValue: record.syncStatus) ?? .undetermined
        return person
    }

    // MARK: - Workloads

    func encrypt(with key: SymmetricKey) throws {
        throw BenchFailure("GRDB records: no encryption workload")
    }

    func parkAll(_ people: [BenchPerson]) throws {
        try pool.write { db in
            let now = Date()
            for person in people { try record(person, at: now).insert(db) }
        }
    }

    func park(_ person: BenchPerson) throws {
        try pool.write { db in try record(person, at: Date()).insert(db) }
    }

    func parkAll(teams: [BenchTeam]) throws {
        try pool.write { db in
            let now = Date()
            for team in teams {
                for member in team.members { try record(member, at: now).insert(db) }
                let stored = StoredTeam(id: team.id, name: team.name, memberIDs: team.members.map(\.id))
                try TeamRecord(id: team.id, data: String(decoding: try encoder.encode(stored), as: UTF8.self),
                               syncStatus: SyncStatus.undetermined.rawValue, modificationDate: now, revision: 1)
                    .insert(db)
            }
        }
    }

    func retrieve(id: String) throws -> BenchPerson? {
        try pool.read { db in try PersonRecord.fetchOne(db, key: id) }.map(person)
    }

    func retrieveAll() throws -> [BenchPerson] {
        try pool.read { db in try PersonRecord.fetchAll(db) }.map(person)
    }

    func retrieveTeam(id: String) throws -> BenchTeam? {
        try pool.read { db in
            guard let record = try TeamRecord.fetchOne(db, key: id) else { return nil }
            let stored = try decoder.decode(StoredTeam.self, from: Data(record.data.utf8))
            let members = try stored.memberIDs.map { memberID in
                guard let member = try PersonRecord.fetchOne(db, key: memberID) else {
                    throw BenchFailure("GRDB: missing member \(memberID)")
                }
                return try person(member)
            }
            return BenchTeam(id: stored.id, name: stored.name, members: members)
        }
    }

    func countNotSynced() throws -> Int {
        try count(status: .notSynced)
    }

    func count(status: SyncStatus) throws -> Int {
        try pool.read { db in
            try PersonRecord.filter(Columns.syncStatus == status.rawValue).fetchCount(db)
        }
    }

    func setStatus(_ status: SyncStatus, of person: BenchPerson) throws {
        try pool.write { db in
            _ = try PersonRecord.filter(key: person.id).updateAll(db, Columns.syncStatus.set(to: status.rawValue))
        }
    }

    func retrieveNotSynced() throws -> [BenchPerson] {
        try pool.read { db in
            try PersonRecord
                .filter(Columns.syncStatus == SyncStatus.notSynced.rawValue)
                .order(Columns.modificationDate)
                .fetchAll(db)
        }.map(person)
    }

    func claimAndComplete(limit: Int) throws -> Int {
        let pool = try pool
        // Claim: one write transaction.
        let claimed: [(id: String, revision: Int)] = try pool.write { db in
            let records = try PersonRecord
                .filter(Columns.syncStatus == SyncStatus.notSynced.rawValue)
                .order(Columns.modificationDate)
                .limit(limit)
                .fetchAll(db)
            let objects = try records.map { var p = try person($0); p.syncStatus = .syncing; return p }
            try PersonRecord.filter(keys: records.map(\.id))
                .updateAll(db, Columns.syncStatus.set(to: SyncStatus.syncing.rawValue))
            try expect(objects.count == records.count, "GRDB: claim decoded \(objects.count) of \(records.count)")
            return records.map { ($0.id, $0.revision) }
        }
        if claimed.isEmpty { return 0 }
        // Complete: another write transaction, .synced where the revision is unchanged.
        return try pool.write { db in
            var synced = 0
            for row in claimed {
                synced += try PersonRecord.filter(key: row.id)
                    .filter(Columns.revision == row.revision)
                    .updateAll(db, Columns.syncStatus.set(to: SyncStatus.synced.rawValue))
            }
            return synced
        }
    }

    func forEachPerson(_ body: (BenchPerson) throws -> Void) throws {
        try pool.read { db in
            let cursor = try PersonRecord.fetchCursor(db)
            while let record = try cursor.next() {
                try body(try person(record))
            }
        }
    }

    // MARK: - Sync cycle

    func parkAllForSync(_ people: [BenchPerson]) throws {
        try parkAll(people)
    }

    // The GRDB baseline has no tombstones: a user of GRDB records would design their own, and
    // the workload would measure that design, not GRDB. The tombstone workload skips GRDB.
    func delete(ids: [String]) throws {
        throw BenchFailure("GRDB: the baseline has no tombstones")
    }

    func claimAndCompleteWithDeletions(limit: Int) throws -> ClaimCounts {
        throw BenchFailure("GRDB: the baseline has no tombstones")
    }

    func parkDownloaded(_ people: [BenchPerson]) throws -> DownloadCounts {
        // Encoded before the write, every object, as the other implementations do.
        let data = try people.map { person in
            var person = person
            person.syncStatus = .synced
            return String(decoding: try encoder.encode(person), as: UTF8.self)
        }
        return try pool.write { db in
            // A record with a local edit (.notSynced, or .syncing: claimed) is a conflict, kept;
            // the others are updated, or inserted, as .synced.
            var counts = DownloadCounts()
            let now = Date()
            for (person, data) in zip(people, data) {
                if var record = try PersonRecord.fetchOne(db, key: person.id) {
                    if record.syncStatus == SyncStatus.notSynced.rawValue || record.syncStatus == SyncStatus.syncing.rawValue {
                        counts.keptLocal += 1
                        continue
                    }
                    if record.data != data {
                        record.data = data
                        record.modificationDate = now
                        record.revision += 1
                    }
                    record.syncStatus = SyncStatus.synced.rawValue
                    try record.update(db)
                } else {
                    try PersonRecord(id: person.id, data: data, syncStatus: SyncStatus.synced.rawValue,
                                     modificationDate: now, revision: 1).insert(db)
                }
                counts.applied += 1
            }
            return counts
        }
    }

    func retrieveForSync(id: String) throws -> BenchPerson? {
        try retrieve(id: id)
    }

    func syncCounts() throws -> SyncCounts {
        try pool.read { db in
            func count(_ status: SyncStatus) throws -> Int {
                try PersonRecord.filter(Columns.syncStatus == status.rawValue).fetchCount(db)
            }
            return SyncCounts(rows: try PersonRecord.fetchCount(db), tombstones: 0, notSynced: try count(.notSynced),
                              synced: try count(.synced), claimed: try count(.syncing))
        }
    }

    func close() throws {
        try dbPool?.close()
        dbPool = nil
    }
}
