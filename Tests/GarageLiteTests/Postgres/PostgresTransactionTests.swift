import Foundation
import GarageLite
@testable import GarageLitePostgres
import Testing

/// The engine's transactions below the store: a statement that fails in a transaction fails
/// its commit, even when the code that ran it caught the error (PostgreSQL then refuses the
/// other statements, and would answer the `COMMIT` with a rollback).
extension PostgresEngineTests {
    @Test func aFailureCaughtInATransactionStillFailsItsCommit() throws {
        let (url, _) = Self.newSchema()
        _ = try Garage(postgresURL: url)
        let (configuration, schema) = try PostgresURL.parse(url)
        let engine = try PostgresEngine.open(configuration: configuration, schema: schema, options: PostgresGarageOptions())
        let thrown = #expect(throws: (any Error).self) {
            try engine.write("test") { statements in
                let postgres = try #require(statements as? PostgresStatements)
                try statements.transaction {
                    try postgres.setMetadata("written", "yes")
                    _ = try? postgres.execute("SELECT 1 / 0")      // division by zero, caught here
                }
            }
        }
        #expect("\(try #require(thrown))".contains("division by zero (SQLSTATE 22012)"),
                "the caught failure is the one thrown: \(String(describing: thrown))")
        #expect(try engine.read("test") { try $0.metadata("written") } == nil, "nothing of the transaction was written")

        // A statement refused after it (25P02) reports the first failure too.
        let refused = #expect(throws: (any Error).self) {
            try engine.write("test") { statements in
                let postgres = try #require(statements as? PostgresStatements)
                try statements.transaction {
                    _ = try? postgres.execute("SELECT 1 / 0")
                    try postgres.setMetadata("written", "yes")
                }
            }
        }
        #expect("\(try #require(refused))".contains("division by zero (SQLSTATE 22012)"), "\(String(describing: refused))")
        try engine.write("test") { statements in
            try statements.transaction { try (statements as? PostgresStatements)?.setMetadata("written", "yes") }
        }
        #expect(try engine.read("test") { try $0.metadata("written") } == "yes", "the connection carries on")
    }
}

/// A memo whose decoding calls ``CancellingMemo/onDecode`` (a claim decodes what it takes).
struct CancellingMemo: Codable, Identifiable, Syncable, Sendable {
    var id: String
    var syncStatus: SyncStatus = .notSynced

    init(id: String) { self.id = id }

    static let onDecode = Protected<(@Sendable () -> Void)?>(nil)

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(String.self, forKey: .id)
        syncStatus = try container.decodeIfPresent(SyncStatus.self, forKey: .syncStatus) ?? .notSynced
        Self.onDecode.read { $0 }?()
    }
}

extension PostgresEngineTests {
    /// A claim takes and marks its rows in one statement that commits alone; when its task is
    /// cancelled after that (while it decodes them), the rows are given back: nothing is claimed.
    @Test func aClaimCancelledAfterItsStatementGivesItsRowsBack() async throws {
        let (url, _) = Self.newSchema()
        let garage = try Garage(postgresURL: url)
        try await garage.parkAll((0..<5).map { CancellingMemo(id: "m\($0)") })
        let started = Protected<Task<Claim<CancellingMemo>, any Error>?>(nil)
        // The first decoding waits until the task is known, then cancels it: after the claim's
        // statement committed, before the claim returns.
        CancellingMemo.onDecode.write {
            $0 = {
                let deadline = Date().addingTimeInterval(30)
                while started.read({ $0 }) == nil, Date() < deadline { Thread.sleep(forTimeInterval: 0.001) }
                started.read { $0 }?.cancel()
            }
        }
        defer { CancellingMemo.onDecode.write { $0 = nil } }
        let task = Task { try await garage.claim(CancellingMemo.self, limit: 5) }
        started.write { $0 = task }
        let outcome = await task.result
        CancellingMemo.onDecode.write { $0 = nil }
        #expect(throws: CancellationError.self) { try outcome.get() }
        for index in 0..<5 {
            let metadata = try await garage.metadata(CancellingMemo.self, identifier: "m\(index)")
            #expect(metadata?.syncStatus == .notSynced && metadata?.claimDate == nil, "m\(index): \(String(describing: metadata))")
        }
        #expect(try await garage.claim(CancellingMemo.self, limit: 10).identifiers.count == 5)
    }
}

extension PostgresEngineTests {
    /// A statement may wait for the schema's lock as long as the busy timeout: the deadline of
    /// its answer, after which the connection is dropped, leaves it a minute more.
    @Test func anAnswersDeadlineOutlastsTheBusyTimeout() {
        #expect(PooledConnection.answerDeadline(busyTimeout: 10) == 120)
        #expect(PooledConnection.answerDeadline(busyTimeout: 300) == 360)
        #expect(PooledConnection.answerDeadline(busyTimeout: 90.5) == 151)
    }
}
