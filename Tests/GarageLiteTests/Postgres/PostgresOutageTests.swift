import Foundation
import GarageLite
import GarageLitePostgres
import Testing

/// A connection lost mid-operation (issue 41): the error says what is known of the operation's
/// writes, and the outcome is what it says. A relay between the garage and the server
/// (``CuttingRelay``) cuts the connection before a write sends its `COMMIT`, as it sends it,
/// after the server committed, and during a read. (In the engine's suite, which runs one test at
/// a time: one of them restarts the server.)
extension PostgresEngineTests {
    /// A garage on a new schema through a new relay, its statements prepared by a first park.
    private static func relayedGarage() throws -> (garage: Garage, relay: CuttingRelay, url: String) {
        let (url, _) = newSchema()
        let relay = try CuttingRelay(upstream: url)
        let garage = try Garage(postgresURL: relay.relayed(url))
        try garage.park(Memo(id: "first", text: "prepares the statements"))
        return (garage, relay, url)
    }

    private static func takesTheWriteLock(_ sql: String) -> Bool { sql.contains("pg_advisory_xact_lock(") }
    private static func commits(_ sql: String) -> Bool { sql.trimmingCharacters(in: .whitespaces).uppercased() == "COMMIT" }

    /// The error `body` throws, which must be `connectionLost` with `mayHaveCommitted`, and
    /// whose description says so, with a server's advice: no file, folder or free space.
    private static func connectionLost(mayHaveCommitted: Bool, _ body: () throws -> Void) throws -> String {
        let error = try #require(throws: GarageError.self, performing: body)
        guard case let .connectionLost(path, _, reportedMayHaveCommitted, _) = error else {
            Issue.record("expected connectionLost, got \(error)")
            return ""
        }
        #expect(reportedMayHaveCommitted == mayHaveCommitted, "\(error)")
        #expect(path.hasPrefix("postgres://"))
        let text = error.description
        if mayHaveCommitted {
            #expect(text.contains("may have committed: read the objects it wrote again before calling it again"), "\(text)")
            #expect(!text.contains("Nothing"), "\(text)")
        } else {
            #expect(text.contains("Nothing of it was written (no commit of it was sent), so calling it again is safe"), "\(text)")
        }
        #expect(text.contains("PostgreSQL server") && text.contains("the server runs and is not restarting"), "\(text)")
        for advice in ["file", "folder", "free space", "disk"] {
            #expect(!text.contains(advice), "a server's error advises about \(advice): \(text)")
        }
        #expect(isBalanced(text), "unbalanced parentheses: \(text)")
        return text
    }

    /// Whether every parenthesis of `text` closes, in order.
    static func isBalanced(_ text: String) -> Bool {
        var depth = 0
        for character in text {
            if character == "(" { depth += 1 }
            if character == ")" { depth -= 1 }
            if depth < 0 { return false }
        }
        return depth == 0
    }

    /// Cut before the `COMMIT` went out (while the park waits for its read): nothing written, and
    /// the error says so; the garage's next call connects again.
    @Test func aConnectionLostBeforeTheCommitSaysNothingWasWritten() throws {
        let (garage, relay, url) = try Self.relayedGarage()
        defer { relay.stop() }
        relay.cut(at: Self.takesTheWriteLock, .beforeForwarding)
        let text = try Self.connectionLost(mayHaveCommitted: false) { try garage.park(Memo(id: "lost", text: "never written")) }
        #expect(text.contains("park Memo(lost)"), "\(text)")
        #expect(relay.cutCount == 1)
        #expect(try Garage(postgresURL: url).retrieve(Memo.self, identifier: "lost") == nil)
        try garage.park(Memo(id: "again", text: "written"))
        #expect(try garage.retrieveAll(Memo.self).map(\.id).sorted() == ["again", "first"])
    }

    /// Cut as the `COMMIT` is sent, before the server gets it: the garage can't tell this from a
    /// commit whose answer was lost, so the error says it may have committed; it didn't.
    @Test func aConnectionLostAsTheCommitIsSentSaysItMayHaveCommitted() throws {
        let (garage, relay, url) = try Self.relayedGarage()
        defer { relay.stop() }
        relay.cut(after: Self.takesTheWriteLock, at: Self.commits, .beforeForwarding)
        _ = try Self.connectionLost(mayHaveCommitted: true) { try garage.park(Memo(id: "unsure", text: "not committed")) }
        #expect(relay.cutCount == 1)
        #expect(try Garage(postgresURL: url).retrieve(Memo.self, identifier: "unsure") == nil)
        #expect(try garage.retrieve(Memo.self, identifier: "unsure") == nil)
    }

    /// Cut after the server committed, before its answer reached the garage (the issue's case: a
    /// claim worker synced the object before the writer's retry): the error says it may have
    /// committed, and it did.
    @Test func aConnectionLostAfterTheCommitSaysItMayHaveCommittedAndItDid() throws {
        let (garage, relay, url) = try Self.relayedGarage()
        defer { relay.stop() }
        relay.cut(after: Self.takesTheWriteLock, at: Self.commits, .afterAnswer(tag: "COMMIT"))
        _ = try Self.connectionLost(mayHaveCommitted: true) { try garage.park(Memo(id: "committed", text: "written")) }
        #expect(relay.cutCount == 1)
        #expect(try Garage(postgresURL: url).retrieve(Memo.self, identifier: "committed")?.text == "written")
        let claim = try Garage(postgresURL: url).claim(Memo.self, limit: 10)
        #expect(claim.identifiers.contains("committed"))
    }

    /// A claim's statement commits alone: cut after the server took the rows, the claim may have
    /// committed (it did: its rows stay claimed until released as stale).
    @Test func aConnectionLostAfterAClaimTookItsRowsSaysItMayHaveCommitted() throws {
        let (garage, relay, url) = try Self.relayedGarage()
        defer { relay.stop() }
        relay.cut(at: { $0.contains("SKIP LOCKED") }, .afterAnswer(tag: "UPDATE 1"))
        _ = try Self.connectionLost(mayHaveCommitted: true) { _ = try garage.claim(Memo.self, limit: 10) }
        #expect(relay.cutCount == 1)
        #expect(try Garage(postgresURL: url).claim(Memo.self, limit: 10).identifiers.isEmpty)
    }

    /// Cut during a read: nothing written, and the error says so.
    @Test func aConnectionLostDuringAReadSaysNothingWasWritten() throws {
        let (garage, relay, _) = try Self.relayedGarage()
        defer { relay.stop() }
        relay.cut(at: { _ in true }, .beforeForwarding)
        _ = try Self.connectionLost(mayHaveCommitted: false) { _ = try garage.retrieve(Memo.self, identifier: "first") }
        #expect(relay.cutCount == 1)
        #expect(try garage.retrieve(Memo.self, identifier: "first")?.text == "prepares the statements")
    }

    /// A server that can't be reached: nothing written, with a server's advice.
    @Test func aServerThatCantBeReachedSaysNothingWasWritten() throws {
        let (garage, relay, _) = try Self.relayedGarage()
        relay.stop()
        // The relay no longer accepts, and closed the garage's idle connection.
        var errors: [GarageError] = []
        for _ in 0..<2 {
            do {
                try garage.park(Memo(id: "refused", text: "never written"))
            } catch let error as GarageError {
                errors.append(error)
            }
        }
        try #require(errors.count == 2, "\(errors)")
        for error in errors {
            _ = try Self.connectionLost(mayHaveCommitted: false) { throw error }
        }
        #expect(errors[1].description.contains("the server can't be reached"), "\(errors[1])")
    }

    /// `garage check` of a sound PostgreSQL store says what it checked, and names no SQLite file.
    @Test func toolCheckOfASoundPostgresStoreSaysWhatItChecked() throws {
        let (url, _) = Self.newSchema()
        try Garage(postgresURL: url).park(Memo(id: "m", text: "sound"))
        let result = try ToolProcess.run(["check", url])
        #expect(result.exitCode == 0, "\(result)")
        #expect(result.stdout.contains("every object's row was read without an error. The database's own files were not checked"), "\(result.stdout)")
        #expect(!result.stdout.contains("SQLite"), "\(result.stdout)")
    }
}
