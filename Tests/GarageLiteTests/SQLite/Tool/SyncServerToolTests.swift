import Foundation
import GarageLite
import GarageLiteServer
import Testing

/// Issue 44: the `garage sync-server` commands an operator runs against a server's store file
/// (SQLite: the tool opens a path).
@Suite("The tool on a sync server's store file", .firstPassOnly)
struct SyncServerToolTests {
    /// The operator's commands on a server's store file: scopes, a purge, a forced rebase, a cursor.
    @Test func theGarageToolLooksAfterAServersStore() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("server.garage")
        do {
            let server = SyncServer(garage: try Garage(path: path))
            try server.serve(SyncServerTests.TeamNote.self, rules: SyncServerTests.rules)
            let a = try TombstoneHorizonTests.device(server)
            try await a.garage.parkAll((0..<3).map { SyncServerTests.TeamNote(id: "n\($0)", team: "1") })
            _ = try await a.engine.sync()
            _ = try await a.garage.delete(SyncServerTests.TeamNote.self, identifier: "n0")
            _ = try await a.engine.sync()
        }
        let scopes = try ToolProcess.run(["sync-server", "scopes", path, "--json"])
        #expect(scopes.exitCode == 0, "\(scopes)")
        let listed = try JSONDecoder().decode([SyncScope].self, from: scopes.stdoutData)
        #expect(listed.map(\.name) == ["team:1"] && listed.first?.objects == 2 && listed.first?.tombstones == 1)
        let purge = try ToolProcess.run(["sync-server", "purge", path, "--older-than", "0"])
        #expect(purge.exitCode == 0 && purge.stdout.contains("Purged 1 tombstones."), "\(purge)")
        let rebase = try ToolProcess.run(["sync-server", "rebase", path, "team:1"])
        #expect(rebase.exitCode == 0 && rebase.stdout.contains("rebase at their next download"), "\(rebase)")
        let cursor = try ToolProcess.run(["sync-server", "cursor", path, #"{"horizons":{},"positions":{"team:1":4}}"#, "--json"])
        #expect(cursor.exitCode == 0, "\(cursor)")
        #expect(try JSONDecoder().decode([SyncCursorScope].self, from: cursor.stdoutData).map(\.rebases) == [true])
        // Text that is no cursor is refused, saying where a device keeps its cursors.
        let garbage = try ToolProcess.run(["sync-server", "cursor", path, "not a cursor"])
        #expect(garbage.exitCode != 0 && garbage.stderr.contains("garage-sync-engine:cursor-"), "\(garbage)")
    }
}
