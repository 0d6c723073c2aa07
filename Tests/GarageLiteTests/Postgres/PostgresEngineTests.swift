import Foundation
import GarageLite
import GarageLitePostgres
import Testing

/// What only the PostgreSQL engine has: a schema of its own on a server shared by garages on
/// many machines. (The behaviour suite runs on it too, with `GARAGE_TEST_ENGINE=postgres`.)
/// Skipped without `GARAGE_POSTGRES_URL` (`.ci/with-postgres swift test` sets it).
@Suite("PostgreSQL engine", .serialized, .enabled(if: TestEngine.postgresURL != nil, "no PostgreSQL server: set GARAGE_POSTGRES_URL"))
struct PostgresEngineTests {
    /// The URL of a schema no other test uses.
    static func newSchema() -> (url: String, schema: String) {
        let schema = TestEngine.newSchemaName()
        return (TestEngine.schemaURL(TestEngine.postgresURL!, schema: schema), schema)
    }

    /// Runs `sql` (or the script `file`) with psql on the tests' server, below the library.
    @discardableResult
    static func psql(_ sql: String? = nil, file: String? = nil) throws -> String {
        var components = URLComponents(string: TestEngine.postgresURL!)!
        components.queryItems = nil
        let input = file.map { ["-f", $0] } ?? ["-c", sql ?? ""]
        let result = try psqlRun([components.string!, "-v", "ON_ERROR_STOP=1", "-tA"] + input)
        try #require(result.exitCode == 0, "psql failed: \(result)")
        return String(decoding: result.stdoutData, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Runs psql with `arguments`; again, for up to a minute, while it can't connect or its
    /// connection is ended by a restart (its statement rolled back): another test may be
    /// restarting the server (`aServerRestartFailsInFlightCallsAndLaterCallsWork`,
    /// the stress tests), which the suites running beside it don't wait for.
    static func psqlRun(_ arguments: [String]) throws -> ToolProcess.Result {
        let deadline = Date().addingTimeInterval(60)
        while true {
            let result = try ToolProcess.run(executable: URL(fileURLWithPath: "/usr/bin/psql"), arguments)
            let text = String(decoding: result.stderrData, as: UTF8.self)
            let cannotConnect = result.exitCode == 2
                && ["Connection refused", "starting up", "shutting down", "terminating connection", "closed the connection unexpectedly"]
                    .contains { text.contains($0) }
            if !cannotConnect || Date() > deadline { return result }
            Thread.sleep(forTimeInterval: 0.2)
        }
    }

    /// Runs `sql` in a psql transaction that stays open until the returned `release` is
    /// called (or two minutes pass, so that a test that fails early leaves nothing running):
    /// what it locks, it holds meanwhile.
    static func holdInPsql(_ sql: String) throws -> () -> Void {
        let directory = try TemporaryDirectory()
        let ready = directory.path("ready"), done = directory.path("done"), script = directory.path("hold.sql")
        try """
            BEGIN;
            \(sql)
            \\! touch \(ready)
            \\! i=0; while [ ! -e \(done) ] && [ $i -lt 6000 ]; do sleep 0.02; i=$((i+1)); done
            COMMIT;
            """.write(toFile: script, atomically: true, encoding: .utf8)
        let finished = DispatchSemaphore(value: 0)
        let holder = Thread {
            _ = try? Self.psql(file: script)
            finished.signal()
        }
        holder.start()
        // Waits for psql to see the file and end, before the folder (which the closure keeps) goes.
        let release = {
            withExtendedLifetime(directory) {
                _ = FileManager.default.createFile(atPath: done, contents: nil)
                _ = finished.wait(timeout: .now() + 30)
            }
        }
        let deadline = Date().addingTimeInterval(120)
        while !FileManager.default.fileExists(atPath: ready) {
            guard Date() < deadline else {
                release()
                throw PsqlDidNotRun(sql: sql)
            }
            Thread.sleep(forTimeInterval: 0.02)
        }
        return release
    }

    struct PsqlDidNotRun: Error {
        var sql: String
    }

    @Test func aNewSchemaIsCreatedAndOpensAgainWithItsObjects() throws {
        let (url, schema) = Self.newSchema()
        do {
            let garage = try Garage(postgresURL: url)
            try garage.park(Memo(id: "m1", text: "first"))
        }
        let garage = try Garage(postgresURL: url)
        #expect(try garage.retrieve(Memo.self, identifier: "m1")?.text == "first")
        #expect(try Self.psql("SELECT application || ' ' || version FROM \(schema).garage_format") == "GarageLite 2")
        #expect(try garage.statistics().formatVersion == GarageEngine.postgresFormatVersion)
    }

    @Test func aSchemaOfAnotherApplicationIsRefusedUntouched() throws {
        let (url, schema) = Self.newSchema()
        try Self.psql("CREATE SCHEMA \(schema); CREATE TABLE \(schema).orders (id int); INSERT INTO \(schema).orders VALUES (7)")
        let error = try #require(throws: GarageError.self) { try Garage(postgresURL: url) }
        guard case .notAGarageStore(_, let reason) = error else { Issue.record("unexpected \(error)"); return }
        #expect(reason.contains("orders"))
        #expect(try Self.psql("SELECT string_agg(table_name, ',') FROM information_schema.tables WHERE table_schema = '\(schema)'")
                == "orders")
    }

    @Test func aNewerFormatIsRefusedUntouched() throws {
        let (url, schema) = Self.newSchema()
        _ = try Garage(postgresURL: url)
        try Self.psql("UPDATE \(schema).garage_format SET version = 99")
        let error = try #require(throws: GarageError.self) { try Garage(postgresURL: url) }
        guard case .newerFormatVersion(_, let version, let supported) = error else { Issue.record("unexpected \(error)"); return }
        #expect(version == 99 && supported == GarageEngine.postgresFormatVersion)
        #expect(try Self.psql("SELECT version FROM \(schema).garage_format") == "99")
    }

    @Test func anInvalidSchemaNameOrURLIsRefused() throws {
        #expect(throws: GarageError.self) { try Garage(postgresURL: TestEngine.schemaURL(TestEngine.postgresURL!, schema: "Bad-Name")) }
        #expect(throws: GarageError.self) { try Garage(postgresURL: "http://example.com/db") }
        #expect(throws: GarageError.self) { try Garage(postgresURL: "postgres://garage@127.0.0.1:1/postgres?sslmode=disable") }
    }

    /// A claim takes and marks its rows in one statement; a row whose JSON doesn't decode
    /// (written below the library) is given back as it was: unclaimed, `.notSynced`, reported.
    @Test func aClaimGivesBackARowItCannotDecode() throws {
        let (url, schema) = Self.newSchema()
        let garage = try Garage(postgresURL: url)
        for index in 0..<4 { try garage.park(Memo(id: "m\(index)", text: "memo \(index)")) }     // oldest first
        try Self.psql("UPDATE \(schema).garage_object SET data = 'not json' WHERE identifier = 'm0'")
        let claim = try garage.claim(Memo.self, limit: 2)
        #expect(claim.identifiers == ["m1", "m2"])
        #expect(claim.failures.map(\.identifier) == ["m0"])
        #expect(try garage.metadata(Memo.self, identifier: "m0")?.syncStatus == .notSynced)
        #expect(try garage.metadata(Memo.self, identifier: "m0")?.claimDate == nil)
        #expect(try Self.psql("SELECT data FROM \(schema).garage_object WHERE identifier = 'm0'") == "not json")
        #expect(try garage.complete(claim).synced == ["m1", "m2"])
        let next = try garage.claim(Memo.self, limit: 10)
        #expect(next.identifiers == ["m3"] && next.failures.map(\.identifier) == ["m0"])
    }

    /// Garages with engines of their own (as on several machines) claim from one schema at once:
    /// each row is claimed once, and every row is uploaded.
    @Test func garagesOnOneSchemaClaimDisjointBatches() throws {
        let (url, _) = Self.newSchema()
        let garages = try (0..<4).map { _ in try Garage(postgresURL: url) }
        let count = 300
        try garages[0].parkAll((0..<count).map { Memo(id: String(format: "m%04d", $0), text: "memo \($0)") })
        let claimed = Protected<[String]>([])
        let failures = Protected<[String]>([])
        DispatchQueue.concurrentPerform(iterations: garages.count) { index in
            let garage = garages[index]
            do {
                while true {
                    let claim = try garage.claim(Memo.self, limit: 7)
                    if claim.identifiers.isEmpty { break }
                    claimed.write { $0 += claim.identifiers }
                    try garage.complete(claim)
                }
            } catch {
                failures.write { $0.append("\(error)") }
            }
        }
        #expect(failures.read { $0 }.isEmpty)
        let identifiers = claimed.read { $0 }
        #expect(identifiers.count == count)
        #expect(Set(identifiers).count == count)
        #expect(try garages[1].count(Memo.self, withStatus: .synced) == count)
    }

    /// A claim skips the rows another transaction holds instead of waiting for it.
    @Test func aClaimSkipsRowsAnotherTransactionLocks() throws {
        let (url, schema) = Self.newSchema()
        let garage = try Garage(postgresURL: url)
        try garage.parkAll([Memo(id: "a", text: "a"), Memo(id: "b", text: "b")])
        // psql locks "a" in a transaction of its own, and holds it until told to end.
        let release = try Self.holdInPsql("SELECT 1 FROM \(schema).garage_object WHERE identifier = 'a' FOR UPDATE;")
        defer { release() }
        let claim = try garage.claim(Memo.self, limit: 10)
        #expect(claim.identifiers == ["b"])
        try garage.complete(claim)
    }

    /// The end of a claim takes the schema's write lock shared: it doesn't wait for another
    /// claim's end (psql holds the lock shared, as an end does), while a write, which takes it
    /// alone, waits, then fails as busy.
    @Test func endsOfClaimsShareTheWriteLockThatWritesTakeAlone() throws {
        let (url, schema) = Self.newSchema()
        var options = PostgresGarageOptions()
        options.busyTimeout = 0.5
        let garage = try Garage(postgresURL: url, options: options)
        try garage.parkAll([Memo(id: "a", text: "a"), Memo(id: "b", text: "b")])
        let claim = try garage.claim(Memo.self, limit: 10)
        let release = try Self.holdInPsql("SELECT pg_advisory_xact_lock_shared(hashtext('GarageLite write \(schema)'));")
        defer { release() }
        let report = try garage.complete(claim)
        #expect(report.synced.sorted() == ["a", "b"])
        let error = try #require(throws: GarageError.self) { try garage.park(Memo(id: "c", text: "c")) }
        guard case .storeBusy = error else {
            Issue.record("expected storeBusy, got \(error)")
            return
        }
        #expect(try garage.retrieve(Memo.self, identifier: "c") == nil)
    }

    /// Another garage's commits reach this garage's observers through LISTEN/NOTIFY.
    @Test func anotherGaragesCommitsAreObserved() async throws {
        let (url, _) = Self.newSchema()
        let observer = try Garage(postgresURL: url)
        let writer = try Garage(postgresURL: url)
        let changes = observer.changes(of: Memo.self)
        let parker = Task {
            // Until the observer hears: its watch starts listening after its first look.
            for attempt in 0..<200 {
                try await writer.park(Memo(id: "seen", text: "attempt \(attempt)"))
                try await Task.sleep(nanoseconds: 50_000_000)
            }
        }
        var heard: [GarageChange] = []
        for await batch in changes {
            heard += batch
            if heard.contains(where: { $0.identifier == "seen" }) { break }
        }
        parker.cancel()
        #expect(heard.contains { $0.identifier == "seen" })
    }

    /// The cluster's programs and data folder, from `.ci/with-postgres`: a test can restart it.
    static let server: (bin: String, data: String)? = {
        let environment = ProcessInfo.processInfo.environment
        guard let bin = environment["GARAGE_POSTGRES_BIN"], let data = environment["GARAGE_POSTGRES_DATA"] else { return nil }
        return (bin, data)
    }()

    /// A server restart fails the calls it interrupts with a `GarageError`, and the garage carries
    /// on: its next calls connect again. Not while the behaviour suite runs on the same server.
    @Test(.enabled(if: server != nil && !TestEngine.isPostgres, "the server can be restarted by .ci/with-postgres only"))
    func aServerRestartFailsInFlightCallsAndLaterCallsWork() throws {
        let (url, _) = Self.newSchema()
        let garage = try Garage(postgresURL: url)
        try garage.park(Memo(id: "before", text: "kept"))
        let server = try #require(Self.server)
        var command = ["\(server.bin)/pg_ctl", "-D", server.data, "-m", "fast", "-w", "restart"]
        if getuid() == 0 { command = ["/usr/sbin/runuser", "-u", "postgres", "--"] + command }
        let restart = try ToolProcess.run(executable: URL(fileURLWithPath: command[0]), Array(command.dropFirst()))
        try #require(restart.exitCode == 0, "pg_ctl restart failed: \(restart)")
        var retrieved: Memo?
        var errors: [any Error] = []
        for _ in 0..<100 where retrieved == nil {
            do {
                retrieved = try garage.retrieve(Memo.self, identifier: "before")
            } catch {
                errors.append(error)
                Thread.sleep(forTimeInterval: 0.1)
            }
        }
        #expect(retrieved?.text == "kept")
        for error in errors {
            switch error as? GarageError {
            case .connectionLost(_, _, let mayHaveCommitted, _)?:
                #expect(!mayHaveCommitted, "a read: \(error)")
            case .storageFailure(_, let reason)?:
                #expect(reason.hasPrefix("PostgreSQL"))
            default:
                Issue.record("not a lost connection: \(error)")
            }
        }
        try garage.park(Memo(id: "after", text: "written"))
        #expect(try garage.retrieveAll(Memo.self).map(\.id).sorted() == ["after", "before"])
    }

    /// A role that may only read reads the garage, and its writes fail with `readOnlyStore`.
    @Test func aRoleThatMayOnlyReadGetsReadOnlyStoreErrors() throws {
        let (url, schema) = Self.newSchema()
        try Garage(postgresURL: url).park(Memo(id: "m", text: "stored"))
        let role = "reader_" + schema
        try Self.psql("""
            CREATE ROLE \(role) LOGIN; GRANT USAGE ON SCHEMA \(schema) TO \(role);
            GRANT SELECT ON ALL TABLES IN SCHEMA \(schema) TO \(role)
            """)
        var components = URLComponents(string: url)!
        components.user = role
        let reader = try Garage(postgresURL: components.string!)
        #expect(try reader.retrieve(Memo.self, identifier: "m")?.text == "stored")
        let error = try #require(throws: GarageError.self) { try reader.park(Memo(id: "n", text: "refused")) }
        guard case .readOnlyStore = error else { Issue.record("unexpected \(error)"); return }
        #expect(try reader.retrieveAll(Memo.self).map(\.id) == ["m"])
    }
}
