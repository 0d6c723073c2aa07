import Foundation
import GarageLite

/// One way to store `BenchPerson` and `BenchTeam`: each workload calls these, and each
/// implementation does the equivalent work its own way.
protocol Contender: AnyObject {
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
    /// The `.notSynced` people, oldest change first.
    func retrieveNotSynced() throws -> [BenchPerson]
    /// Claims up to `limit` `.notSynced` people, oldest change first (they become `.syncing`,
    /// and the claim keeps their revisions), then completes the claim (`.synced` where the
    /// revision is unchanged). Returns how many became `.synced`; 0 when nothing was left.
    func claimAndComplete(limit: Int) throws -> Int
    /// Visits every person without loading them all.
    func forEachPerson(_ body: (BenchPerson) throws -> Void) throws
    func close() throws
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
