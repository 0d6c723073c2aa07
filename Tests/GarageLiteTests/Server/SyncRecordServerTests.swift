import Foundation
import GarageLite
import GarageLiteServer
import Testing

/// Issue 43: a server with no Swift type for what it serves (`garage-server`'s way): the
/// devices' `TeamNote`s stored and answered as records, on the engine the suite runs on, with
/// the same versions, conflicts, feed and scopes as a typed server.
@Suite("Sync server: records")
struct SyncRecordServerTests {
    typealias TeamNote = SyncServerTests.TeamNote

    static func server(_ garage: Garage, pageSize: Int = 500) throws -> SyncServer {
        let server = SyncServer(garage: garage, pageSize: pageSize)
        try server.serveRecords(ofType: "TeamNote", rules: SyncRules(scope: { "team:" + ($0["team"]?.text ?? "") }, validate: { _, record, _ in
            record.map { ($0["title"]?.text?.count ?? 0) > 40 ? "a title has at most 40 characters" : nil } ?? nil
        }))
        return server
    }

    static func device(_ server: SyncServer, teams: Set<String>) throws -> SyncServerTests.Device {
        let garage = try TestEngine.garage()
        let transport = SyncServerTests.InProcessTransport(server: server, access: SyncAccess(user: "u", scopes: Set(teams.map { "team:\($0)" })))
        return SyncServerTests.Device(garage: garage, engine: SyncEngine(garage: garage, transport: transport, types: [.of(TeamNote.self)],
                                                                          configuration: SyncServerTests.quick), transport: transport)
    }

    @Test func devicesMeetThroughARecordServer() async throws {
        let store = try TestEngine.garage()
        let server = try Self.server(store, pageSize: 2)
        let a = try Self.device(server, teams: ["1"]), b = try Self.device(server, teams: ["1"]), other = try Self.device(server, teams: ["2"])
        for index in 0..<5 {
            try await a.garage.park(TeamNote(id: "n\(index)", team: "1", title: "note \(index)", body: "line \(index)\nwith \"quotes\" and é"))
        }
        _ = try await a.engine.sync()
        _ = try await b.engine.sync()
        _ = try await other.engine.sync()
        #expect(try await SyncServerTests.notes(b.garage) == (try await SyncServerTests.notes(a.garage)))
        #expect(try await other.garage.retrieveAll(TeamNote.self).isEmpty)
        // The store holds each note as its row, readable as a record.
        let record = try #require(try await store.record(ObjectKey(typeName: "TeamNote", identifier: "n3")))
        #expect(record.json.contains("line 3"))

        // Concurrent edits: merged on the device, each side learns it.
        try await SyncServerTests.editApart(a, b, "n1")
        _ = try await b.garage.delete(TeamNote.self, identifier: "n4")
        _ = try await a.engine.sync()
        #expect(try await b.engine.sync().conflicts.map(\.object.identifier) == ["n1"])
        _ = try await a.engine.sync()
        let merged = try await SyncServerTests.notes(a.garage)
        #expect(merged["n1"]?.title == "title from A" && merged["n1"]?.body == "body from B")
        #expect(merged["n4"] == nil)
        #expect(merged == (try await SyncServerTests.notes(b.garage)))
    }

    /// A record server that merges (`garage-server --merge fields-server-wins`): property by
    /// property, the server's value where both changed one, and the device that lost is told.
    @Test func aRecordServerMerges() async throws {
        let server = SyncServer(garage: try TestEngine.garage())
        try server.serveRecords(ofType: "TeamNote", rules: SyncRules(scope: { "team:" + ($0["team"]?.text ?? "") },
                                                                     merge: .fields(bothChanged: .serverWins)))
        let a = try Self.device(server, teams: ["1"]), b = try Self.device(server, teams: ["1"])
        try await a.garage.park(TeamNote(id: "n1", team: "1", title: "first", body: "body"))
        _ = try await a.engine.sync()
        _ = try await b.engine.sync()
        try await SyncServerTests.editApart(a, b, "n1")
        var onB = try #require(try await b.garage.retrieve(TeamNote.self, identifier: "n1"))
        onB.title = "title from B"
        try await b.garage.park(onB)
        _ = try await a.engine.sync()
        let report = try await b.engine.sync()
        #expect(report.conflicts.isEmpty && report.replaced.map(\.fields) == [["title"]])
        _ = try await a.engine.sync()
        let expected = TeamNote(id: "n1", team: "1", title: "title from A", body: "body from B", syncStatus: .undetermined)
        #expect(try await SyncServerTests.notes(a.garage)["n1"] == expected)
        #expect(try await SyncServerTests.notes(b.garage)["n1"] == expected)
    }

    @Test func aRecordServerRefusesWhatItsRulesAndScopesRefuse() async throws {
        let store = try TestEngine.garage()
        let server = try Self.server(store)
        let access = SyncAccess(user: "u", scopes: ["team:1"])
        func upload(_ identifier: String, _ json: String) async throws -> UploadResult<SyncRecord>? {
            let record = try JSONDecoder().decode(SyncRecord.self, from: Data(json.utf8))
            return try await server.upload(UploadBatch(typeName: "TeamNote", changes: [SyncChange(identifier: identifier, object: record, version: nil)]),
                                           access: access)[identifier]
        }
        guard case .failed(let other)? = try await upload("x", #"{"id":"x","team":"2","title":"t"}"#),
              case .failed(let missing)? = try await upload("y", #"{"id":"y","title":"t"}"#),
              case .failed(let mismatch)? = try await upload("z", #"{"id":"not z","team":"1","title":"t"}"#),
              case .failed(let long)? = try await upload("w", #"{"id":"w","team":"1","title":"\#(String(repeating: "x", count: 41))"}"#) else {
            Issue.record("expected refusals")
            return
        }
        #expect(other == missing)       // a scope not granted, whether named or not: one answer
        #expect(mismatch.contains("identifier"))
        #expect(long.contains("40 characters"))
        #expect(try await store.records(ofType: "TeamNote").isEmpty)
        // Integers stay exact, and what a record holds comes back as it was sent.
        guard case .accepted? = try await upload("big", #"{"id":"big","team":"1","title":"t","count":9007199254740993,"ratio":0.1,"tags":["a",null,true]}"#) else {
            Issue.record("expected the record to be taken")
            return
        }
        let batch = try await server.download(DownloadRequest<SyncRecord>(typeName: "TeamNote", cursor: nil), access: access)
        let stored = try #require(batch.changes.first?.object)
        #expect(stored["count"] == .integer(9_007_199_254_740_993))
        #expect(stored["ratio"] == .number(0.1))
        #expect(stored["tags"] == .array([.string("a"), .null, .bool(true)]))
        // A type name that can't name rows is refused when served.
        #expect(throws: SyncServerError.invalidTypeName("")) { try server.serveRecords(ofType: "", rules: SyncRules(scope: { _ in "" })) }
    }
}
