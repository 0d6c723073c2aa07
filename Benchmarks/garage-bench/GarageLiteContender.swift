import Crypto
import Foundation
import GarageLite
import GRDB

/// GarageLite, used as its README says.
final class GarageLiteContender: Contender {
    private var garage: Garage?
    private let path: String

    init(path: String) throws {
        garage = try Garage(engine: .sqlite(path: path, durability: BenchDurability.garageLite))
        self.path = path
    }

    var store: Garage {
        get throws {
            guard let garage else { throw BenchFailure("GarageLite store used after close") }
            return garage
        }
    }

    /// Opens the store again locked with `key`, as the README's "Encryption" says: the rows
    /// are encrypted with a data key the store keeps wrapped, and counted by its triggers.
    func encrypt(with key: SymmetricKey) throws {
        garage = nil
        garage = try Garage(engine: .sqlite(path: path, durability: BenchDurability.garageLite), encryptionKey: .key(key))
    }

    func parkAll(_ people: [BenchPerson]) throws {
        try store.parkAll(people)
    }

    func park(_ person: BenchPerson) throws {
        try store.park(person) // autosave is on: one commit per park
    }

    func parkAll(teams: [BenchTeam]) throws {
        try store.parkAll(teams)
    }

    func retrieve(id: String) throws -> BenchPerson? {
        try store.retrieve(BenchPerson.self, identifier: id)
    }

    func retrieveAll() throws -> [BenchPerson] {
        try store.retrieveAll(BenchPerson.self)
    }

    func retrieveTeam(id: String) throws -> BenchTeam? {
        try store.retrieve(BenchTeam.self, identifier: id)
    }

    func countNotSynced() throws -> Int {
        try count(status: .notSynced)
    }

    func count(status: SyncStatus) throws -> Int {
        try store.count(BenchPerson.self, withStatus: status)
    }

    func setStatus(_ status: SyncStatus, of person: BenchPerson) throws {
        try store.setSyncStatus(status, for: person) // autosave is on: one commit each
    }

    func retrieveNotSynced() throws -> [BenchPerson] {
        try store.retrieveAll(BenchPerson.self, withStatus: .notSynced)
    }

    func claimAndComplete(limit: Int) throws -> Int {
        let garage = try store
        let claim = try garage.claim(BenchPerson.self, limit: limit)
        if claim.isEmpty { return 0 }
        return try garage.complete(claim).synced.count
    }

    func forEachPerson(_ body: (BenchPerson) throws -> Void) throws {
        try store.forEach(BenchPerson.self, body) // default batch size: 1000 objects
    }

    func parkAllForSync(_ people: [BenchPerson]) throws {
        try store.parkAll(people)
    }

    func delete(ids: [String]) throws {
        let garage = try store
        try garage.transaction {
            for id in ids {
                guard try garage.delete(BenchPerson.self, identifier: id) else {
                    throw BenchFailure("GarageLite: \(id) not found to delete")
                }
            }
        }
    }

    func claimAndCompleteWithDeletions(limit: Int) throws -> ClaimCounts {
        let garage = try store
        let claim = try garage.claim(BenchPerson.self, limit: limit)
        if claim.isEmpty { return ClaimCounts() }
        try expect(claim.failures.isEmpty, "GarageLite: \(claim.failures.count) claim failures")
        let report = try garage.complete(claim)
        return ClaimCounts(
            objects: claim.objects.count, tags: claim.objects.reduce(0) { $0 + $1.tags.count },
            deletions: claim.deletions.count, synced: report.synced.count,
            deletionsUploaded: report.deletionsUploaded.count)
    }

    func parkDownloaded(_ people: [BenchPerson]) throws -> DownloadCounts {
        let report = try store.parkDownloaded(people) // onConflict: .keepLocal
        return DownloadCounts(applied: report.applied.count,
                              keptLocal: report.conflicts.filter { $0.resolution == .keptLocal }.count)
    }

    func retrieveForSync(id: String) throws -> BenchPerson? {
        try retrieve(id: id)
    }

    func syncCounts() throws -> SyncCounts {
        // Tombstones and claims are not in GarageLite's API: the file, read-only (only people
        // are parked in the sync workloads' stores).
        var configuration = Configuration()
        configuration.readonly = true
        let queue = try DatabaseQueue(path: path, configuration: configuration)
        defer { try? queue.close() }
        let counts = try queue.read { db in
            let row = try GRDB.Row.fetchOne(db, sql: """
                SELECT COUNT(*), COUNT(*) FILTER (WHERE isDeleted <> 0),
                    COUNT(*) FILTER (WHERE isDeleted = 0 AND syncStatus = ?),
                    COUNT(*) FILTER (WHERE isDeleted = 0 AND syncStatus = ?),
                    COUNT(*) FILTER (WHERE claim IS NOT NULL)
                FROM garage_object
                """, arguments: [SyncStatus.notSynced.rawValue, SyncStatus.synced.rawValue])
            guard let row else { throw BenchFailure("GarageLite: no counts") }
            return SyncCounts(rows: row[0], tombstones: row[1], notSynced: row[2], synced: row[3], claimed: row[4])
        }
        // The API agrees.
        let garage = try store
        let live = try garage.count(BenchPerson.self)
        let synced = try garage.count(BenchPerson.self, withStatus: .synced)
        try expect(live == counts.rows - counts.tombstones && synced == counts.synced,
                   "GarageLite: API counts \(live) live, \(synced) synced; file: \(counts)")
        return counts
    }

    func close() throws {
        garage = nil // the garage closes its connections when released
    }
}
