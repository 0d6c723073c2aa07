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
