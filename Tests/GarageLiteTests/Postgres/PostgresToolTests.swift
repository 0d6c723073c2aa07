import Foundation
import GarageLite
import GarageLitePostgres
import Testing

/// The `garage` tool takes a `postgres://` URL wherever it takes a file, and moves a store
/// between the engines without losing anything. (In the engine's suite, which runs one test at
/// a time: one of them restarts the server.)
extension PostgresEngineTests {
    @Test func exportFromSQLiteImportIntoPostgresAndBackKeepsEveryRecord() throws {
        let directory = try TemporaryDirectory()
        let source = directory.path("source.garage")
        do {
            let garage = try Garage(path: source)
            let memos = (0..<5).map { Memo(id: "m\($0)", text: "memo \($0)") }
            try garage.parkAll(memos)
            try garage.setSyncStatus(.synced, for: [memos[1], memos[2]])
            #expect(try garage.delete(Memo.self, identifier: "m2"))      // a tombstone: it was synced
            let claim = try garage.claim(Memo.self, limit: 1)
            try garage.release(claim, retryAfter: 60, error: CocoaError(.featureUnsupported))   // an attempt, an error
        }
        let exported = try ToolProcess.run(["export", source])
        try #require(exported.exitCode == 0, "\(exported)")
        #expect(String(decoding: exported.stdoutData, as: UTF8.self).split(separator: "\n").count == 5)
        let file = directory.path("objects.jsonl")
        try exported.stdoutData.write(to: URL(fileURLWithPath: file))

        let url = TestEngine.schemaURL(TestEngine.postgresURL!, schema: TestEngine.newSchemaName())
        let imported = try ToolProcess.run(["import", url], stdin: file)
        #expect(imported.exitCode == 0, "\(imported)")
        let fromPostgres = try ToolProcess.run(["export", url])
        #expect(fromPostgres.exitCode == 0, "\(fromPostgres)")
        #expect(fromPostgres.stdoutData == exported.stdoutData,
                "PostgreSQL's export differs:\n\(exported.stdout)\n---\n\(fromPostgres.stdout)")

        let back = directory.path("back.garage")
        try fromPostgres.stdoutData.write(to: URL(fileURLWithPath: file))
        #expect(try ToolProcess.run(["import", back], stdin: file).exitCode == 0)
        #expect(try ToolProcess.run(["export", back]).stdoutData == exported.stdoutData)

        for command in [["stats", url], ["check", url], ["list", url]] {
            let result = try ToolProcess.run(command)
            #expect(result.exitCode == 0, "\(result)")
        }
        let garage = try Garage(postgresURL: url)
        #expect(try garage.retrieveAll(Memo.self).map(\.id).sorted() == ["m0", "m1", "m3", "m4"])
        #expect(try garage.check().isOK)
    }

    /// A command that reads (or changes) a store refuses a schema that holds no garage, and
    /// creates nothing, as it refuses a missing file; `import` creates the garage.
    @Test func readCommandsRefuseASchemaWithoutAGarageAndCreateNothing() throws {
        let schema = TestEngine.newSchemaName()
        let url = TestEngine.schemaURL(TestEngine.postgresURL!, schema: schema)
        for command in [["stats", url], ["list", url], ["check", url], ["export", url], ["gc", url]] {
            let result = try ToolProcess.run(command)
            #expect(result.exitCode != 0, "\(command[0]): \(result)")
            #expect(result.stderr.contains("there is no garage in the schema \(schema)"), "\(command[0]): \(result.stderr)")
        }
        #expect(try Self.psql("SELECT count(*) FROM information_schema.schemata WHERE schema_name = '\(schema)'") == "0")

        var options = PostgresGarageOptions()
        options.createsSchema = false
        let error = try #require(throws: GarageError.self) { try Garage(postgresURL: url, options: options) }
        guard case .cannotOpenStore = error else {
            Issue.record("expected cannotOpenStore, got \(error)")
            return
        }
        try Garage(postgresURL: url).park(Memo(id: "m", text: "memo"))
        #expect(try Garage(postgresURL: url, options: options).retrieve(Memo.self, identifier: "m")?.text == "memo")
    }
}
