import Foundation
import GarageLite
import GarageLitePostgres

/// One way to store `BenchNote`s in a schema of the server: GarageLite, or the floor. Each
/// workload calls these, and each contender does the equivalent work its own way.
protocol Contender: AnyObject {
    /// "GarageLite" or "floor".
    var name: String { get }
    /// Parks `notes` in one call (one transaction), `.notSynced`.
    func parkAll(_ notes: [BenchNote]) async throws
    func retrieve(id: String) async throws -> BenchNote?
    /// Every note, in identifier order.
    func retrieveAll() async throws -> [BenchNote]
    /// Claims up to `limit` `.notSynced` notes, oldest change first (decoded, `.syncing`, no
    /// other worker takes them), then completes the claim (`.synced`). Returns how many were
    /// claimed; 0 when none was left.
    func claimAndComplete(limit: Int) async throws -> Int
    func close() async
}

/// Which contender a workload or a worker process runs.
enum ContenderKind: String, CaseIterable, Sendable {
    case garageLite = "GarageLite"
    case floor

    /// Makes `schema` ready for the contender: a fresh garage's tables, made by a Garage opened
    /// on it (then closed), for either contender: the floor writes GarageLite's own table.
    func createSchema(_ schema: String, on server: ServerAddress) throws {
        _ = try Garage(postgresURL: server.garageURL(schema: schema))
    }

    /// Opens the contender on `schema` (created already).
    func open(_ server: ServerAddress, schema: String) async throws -> any Contender {
        switch self {
        case .garageLite: try GarageLiteContender(server, schema: schema)
        case .floor: try await Floor.open(server, schema: schema)
        }
    }
}

/// GarageLite, through its public synchronous API, as an app calls it: `Garage(postgresURL:)`,
/// `parkAll`, `retrieve`, `retrieveAll`, `claim` and `complete`. (A call blocks its thread
/// while PostgreSQL answers, which the engine supports on any thread; the floor's `async`
/// calls park their task instead. Either way a statement is one hop to postgres-nio's event
/// loop and one back.)
final class GarageLiteContender: Contender {
    let name = "GarageLite"
    private let garage: Garage

    init(_ server: ServerAddress, schema: String) throws {
        garage = try Garage(postgresURL: server.garageURL(schema: schema))
    }

    func parkAll(_ notes: [BenchNote]) async throws {
        try Self.parkAll(notes, in: garage)
    }

    func retrieve(id: String) async throws -> BenchNote? {
        try Self.retrieve(id, in: garage)
    }

    func retrieveAll() async throws -> [BenchNote] {
        try Self.retrieveAll(in: garage)
    }

    func claimAndComplete(limit: Int) async throws -> Int {
        try Self.claimAndComplete(limit: limit, in: garage)
    }

    // The calls themselves, in synchronous functions: there, `garage.retrieve` is the
    // synchronous API (in an `async` function it would be the `async` one).

    private static func parkAll(_ notes: [BenchNote], in garage: Garage) throws {
        try garage.parkAll(notes)
    }

    private static func retrieve(_ id: String, in garage: Garage) throws -> BenchNote? {
        try garage.retrieve(BenchNote.self, identifier: id)
    }

    private static func retrieveAll(in garage: Garage) throws -> [BenchNote] {
        try garage.retrieveAll(BenchNote.self)
    }

    private static func claimAndComplete(limit: Int, in garage: Garage) throws -> Int {
        let claim = try garage.claim(BenchNote.self, limit: limit)
        guard !claim.isEmpty else { return 0 }
        // (The upload of `claim.objects` would be here.)
        let report = try garage.complete(claim)
        try expect(report.synced.count == claim.count, "completed \(report.synced.count) of \(claim.count) claimed")
        return claim.count
    }

    func close() async {}
}
