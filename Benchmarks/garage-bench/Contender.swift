import Crypto
import Foundation
import GarageLite

/// One way to store `BenchPerson` and `BenchTeam`: each workload calls these, and each
/// implementation does the equivalent work its own way.
protocol Contender: AnyObject {
    /// Encrypts every object from now on with AES-256-GCM and `key` (GarageLite and the floor).
    func encrypt(with key: SymmetricKey) throws
    /// Parks `people` in one call (one transaction).
    func parkAll(_ people: [BenchPerson]) throws
    /// Parks one person, committed when it returns.
    func park(_ person: BenchPerson) throws
    /// Parks `teams` and their members (4 rows per team of 3) in one call (one transaction).
    func parkAll(teams: [BenchTeam]) throws
    func retrieve(id: String) throws -> BenchPerson?
    func retrieveAll() throws -> [BenchPerson]
    /// Retrieves a team with all its members.
    func retrieveTeam(id: String) throws -> BenchTeam?
    func countNotSynced() throws -> Int
    /// The number of people with `status`.
    func count(status: SyncStatus) throws -> Int
    /// Sets the sync status of the stored person `person.id` to `status`, committed when it returns.
    func setStatus(_ status: SyncStatus, of person: BenchPerson) throws
    /// The `.notSynced` people, oldest change first.
    func retrieveNotSynced() throws -> [BenchPerson]
    /// Claims up to `limit` `.notSynced` people, oldest change first (they become `.syncing`,
    /// and the claim keeps their revisions), then completes the claim (`.synced` where the
    /// revision is unchanged). Returns how many became `.synced`; 0 when nothing was left.
    func claimAndComplete(limit: Int) throws -> Int
    /// Visits every person without loading them all.
    func forEachPerson(_ body: (BenchPerson) throws -> Void) throws

    // The sync cycle with tombstones and downloads. The floor runs these on a table of its
    // own with GarageLite's format-3 schema (claims, tombstones, retries, the index of references), with the statements
    // GarageLite runs; the methods above keep their simpler table.

    /// Parks `people`, each with its status, in one call (one transaction): the store a sync
    /// workload starts from.
    func parkAllForSync(_ people: [BenchPerson]) throws
    /// Deletes the people `ids` names, in one transaction: those a copy of which may be on the
    /// server (once `.synced`) become tombstones, deletions for a sync job to upload.
    func delete(ids: [String]) throws
    /// Claims up to `limit` rows to sync, oldest change first: objects (decoded, `.syncing`)
    /// and deletions, in one transaction; then completes the claim in another: objects whose
    /// revision is unchanged become `.synced`, and deletions are purged. Returns what it did;
    /// empty when nothing was left.
    func claimAndCompleteWithDeletions(limit: Int) throws -> ClaimCounts
    /// Parks `people`, downloaded from the server, as `.synced`, in one transaction; a row with
    /// a local edit (`.notSynced`, a tombstone, or claimed) is a conflict that keeps it.
    func parkDownloaded(_ people: [BenchPerson]) throws -> DownloadCounts
    /// The person `id` as the sync workloads' store holds it (not a tombstone).
    func retrieveForSync(id: String) throws -> BenchPerson?
    /// The sync workloads' store, counted for the checks (not timed).
    func syncCounts() throws -> SyncCounts

    func close() throws
}

/// What ``Contender/claimAndCompleteWithDeletions(limit:)`` did.
struct ClaimCounts: Equatable, CustomStringConvertible {
    /// Objects claimed (and decoded), and their tags, counted from the decoded objects.
    var objects = 0
    var tags = 0
    /// Deletions claimed.
    var deletions = 0
    /// Objects completed as `.synced`, and tombstones purged.
    var synced = 0
    var deletionsUploaded = 0

    var isEmpty: Bool { objects == 0 && deletions == 0 }

    static func += (lhs: inout ClaimCounts, rhs: ClaimCounts) {
        lhs.objects += rhs.objects
        lhs.tags += rhs.tags
        lhs.deletions += rhs.deletions
        lhs.synced += rhs.synced
        lhs.deletionsUploaded += rhs.deletionsUploaded
    }

    var description: String {
        "\(objects) objects (\(tags) tags), \(deletions) deletions claimed; "
            + "\(synced) synced, \(deletionsUploaded) deletions uploaded"
    }
}

/// What ``Contender/parkDownloaded(_:)`` did.
struct DownloadCounts: Equatable, CustomStringConvertible {
    /// Written as `.synced`.
    var applied = 0
    /// Conflicts with a local edit, which was kept.
    var keptLocal = 0

    var description: String { "\(applied) applied, \(keptLocal) conflicts kept local" }
}

/// The rows of the sync workloads' store.
struct SyncCounts: Equatable, CustomStringConvertible {
    /// Every row, tombstones included.
    var rows = 0
    var tombstones = 0
    /// Live rows (not tombstones) by status.
    var notSynced = 0
    var synced = 0
    /// Rows under a claim.
    var claimed = 0

    var description: String {
        "\(rows) rows (\(tombstones) tombstones), \(notSynced) .notSynced, \(synced) .synced, \(claimed) claimed"
    }
}

/// `GARAGE_BENCH_DURABILITY=full`: every implementation syncs each commit to storage before it
/// returns (GarageLite's `.full` durability, `synchronous = FULL` for the floor and GRDB), to
/// measure what the setting costs; by default they all run `synchronous = NORMAL`.
enum BenchDurability {
    static let isFull = ProcessInfo.processInfo.environment["GARAGE_BENCH_DURABILITY"] == "full"
    static var garageLite: GarageEngine.Durability { isFull ? .full : .normal }
    static var sqliteSynchronous: String { isFull ? "FULL" : "NORMAL" }
}

enum Implementation: String, CaseIterable {
    case garageLite = "GarageLite"
    case floor = "floor"
    case grdb = "GRDB"

    func open(path: String) throws -> any Contender {
        switch self {
        case .garageLite: try GarageLiteContender(path: path)
        case .floor: try FloorContender(path: path)
        case .grdb: try GRDBContender(path: path)
        }
    }
}
