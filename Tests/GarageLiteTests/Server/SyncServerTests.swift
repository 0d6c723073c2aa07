import Foundation
import GarageLite
import GarageLiteServer
import Testing

/// Issue 43: the server half of sync, `SyncServer` on a garage of the engine the suite runs on,
/// answering real `SyncEngine`s through an in-process transport that sends JSON both ways (as
/// HTTP would): versions, conflicts, tombstones in the feed, re-sent changes, scopes.
@Suite("Sync server")
struct SyncServerTests {
    struct TeamNote: Codable, Identifiable, Syncable, Sendable, Equatable {
        var id: String
        var team: String
        var title: String = ""
        var body: String = ""
        var syncStatus: SyncStatus = .notSynced
    }

    /// A device's way to the server: the batch as JSON to `server`, its answer back as JSON, for
    /// a request granted `access`. `losingAnswers` answers drop after the server took the batch.
    final class InProcessTransport: SyncTransport, @unchecked Sendable {
        let server: SyncServer
        let access: SyncAccess
        private let lock = NSLock()
        private var answersToLose = 0

        init(server: SyncServer, access: SyncAccess) {
            self.server = server
            self.access = access
        }

        func loseNextAnswers(_ count: Int) { lock.withLock { answersToLose = count } }

        struct AnswerLost: Error {}

        func upload<Object: Codable>(_ batch: UploadBatch<Object>) async throws -> UploadResults<Object> {
            let answer = try await server.upload(typeName: batch.typeName, json: try JSONEncoder().encode(batch), access: access)
            if lock.withLock({ () -> Bool in
                guard answersToLose > 0 else { return false }
                answersToLose -= 1
                return true
            }) { throw AnswerLost() }
            return try JSONDecoder().decode(UploadResults<Object>.self, from: answer)
        }

        func download<Object: Codable>(_ request: DownloadRequest<Object>) async throws -> DownloadBatch<Object> {
            let answer = try await server.download(typeName: request.typeName, json: try JSONEncoder().encode(request), access: access)
            return try JSONDecoder().decode(DownloadBatch<Object>.self, from: answer)
        }
    }

    static let rules = SyncRules<TeamNote>(scope: { "team:\($0.team)" }, validate: { _, note, _ in
        note.map { $0.title.count > 40 ? "a title has at most 40 characters" : nil } ?? nil
    })

    static func server(_ garage: Garage, pageSize: Int = 500) throws -> SyncServer {
        let server = SyncServer(garage: garage, pageSize: pageSize)
        try server.serve(TeamNote.self, rules: rules)
        return server
    }

    static var quick: SyncEngine.Configuration { SyncEngineTests.quick }

    struct Device {
        let garage: Garage
        let engine: SyncEngine
        let transport: InProcessTransport
    }

    static func device(_ server: SyncServer, teams: Set<String>, user: String = "user") throws -> Device {
        let garage = try TestEngine.garage()
        let transport = InProcessTransport(server: server, access: SyncAccess(user: user, scopes: Set(teams.map { "team:\($0)" })))
        return Device(garage: garage, engine: SyncEngine(garage: garage, transport: transport,
                                                         types: [.of(TeamNote.self)], configuration: quick), transport: transport)
    }

    static func notes(_ garage: Garage) async throws -> [String: TeamNote] {
        var notes: [String: TeamNote] = [:]
        for var note in try await garage.retrieveAll(TeamNote.self) {
            note.syncStatus = .undetermined
            notes[note.id] = note
        }
        return notes
    }

    @Test func twoDevicesMeetThroughTheServerCreationsEditsAndDeletions() async throws {
        let server = try Self.server(try TestEngine.garage(), pageSize: 3)
        let a = try Self.device(server, teams: ["1"]), b = try Self.device(server, teams: ["1"])
        for index in 0..<7 { try await a.garage.park(TeamNote(id: "n\(index)", team: "1", title: "note \(index)")) }
        _ = try await a.engine.sync()
        _ = try await b.engine.sync()
        #expect(try await Self.notes(b.garage).count == 7)
        var edited = try #require(try await b.garage.retrieve(TeamNote.self, identifier: "n2"))
        edited.body = "edited on B"
        try await b.garage.park(edited)
        _ = try await b.garage.delete(TeamNote.self, identifier: "n5")
        _ = try await b.engine.sync()
        _ = try await a.engine.sync()
        let onA = try await Self.notes(a.garage)
        #expect(onA["n2"]?.body == "edited on B")
        #expect(onA["n5"] == nil)
        #expect(onA == (try await Self.notes(b.garage)))
    }

    /// Edits the note `identifier` on both devices before either syncs: its title on `a`, its
    /// body on `b`.
    static func editApart(_ a: Device, _ b: Device, _ identifier: String) async throws {
        var onA = try #require(try await a.garage.retrieve(TeamNote.self, identifier: identifier))
        onA.title = "title from A"
        try await a.garage.park(onA)
        var onB = try #require(try await b.garage.retrieve(TeamNote.self, identifier: identifier))
        onB.body = "body from B"
        try await b.garage.park(onB)
    }

    @Test func concurrentEditsAreMergedAndEachSideLearnsIt() async throws {
        let server = try Self.server(try TestEngine.garage())
        let a = try Self.device(server, teams: ["1"]), b = try Self.device(server, teams: ["1"])
        try await a.garage.park(TeamNote(id: "n1", team: "1", title: "first"))
        _ = try await a.engine.sync()
        _ = try await b.engine.sync()
        try await Self.editApart(a, b, "n1")
        _ = try await a.engine.sync()
        let report = try await b.engine.sync()
        #expect(report.conflicts.map(\.object.identifier) == ["n1"])
        _ = try await a.engine.sync()
        let merged = try await Self.notes(a.garage)["n1"]
        #expect(merged?.title == "title from A" && merged?.body == "body from B")
        #expect(try await Self.notes(a.garage) == (try await Self.notes(b.garage)))
    }

    /// The trial's `lost-ack-delete`: an edit the server took, its answer lost, then a local
    /// deletion. The server knows the edit was the device's own: the deletion is taken, not
    /// answered with the device's own edit (which undid the user's deletion).
    @Test func aDeletionAfterAnEditWhoseAnswerWasLostIsTaken() async throws {
        let server = try Self.server(try TestEngine.garage())
        let a = try Self.device(server, teams: ["1"]), b = try Self.device(server, teams: ["1"])
        try await a.garage.park(TeamNote(id: "n1", team: "1", title: "first"))
        _ = try await a.engine.sync()
        _ = try await b.engine.sync()
        var note = try #require(try await a.garage.retrieve(TeamNote.self, identifier: "n1"))
        note.title = "edited"
        try await a.garage.park(note)
        a.transport.loseNextAnswers(1)
        await #expect(throws: (any Error).self) { _ = try await a.engine.sync() }
        _ = try await a.garage.delete(TeamNote.self, identifier: "n1")
        let report = try await a.engine.sync()
        #expect(report.conflicts.isEmpty)
        #expect(try await a.garage.retrieve(TeamNote.self, identifier: "n1") == nil)
        _ = try await b.engine.sync()
        #expect(try await b.garage.retrieve(TeamNote.self, identifier: "n1") == nil)
        // A change sent again after its answer was lost is answered as taken, not as a conflict.
        try await a.garage.park(TeamNote(id: "n2", team: "1", title: "once"))
        a.transport.loseNextAnswers(1)
        await #expect(throws: (any Error).self) { _ = try await a.engine.sync() }
        #expect(try await a.engine.sync().conflicts.isEmpty)
        _ = try await b.engine.sync()
        #expect(try await Self.notes(b.garage)["n2"]?.title == "once")
    }

    /// A device's deletion of its own last edit names that edit's revision (a deletion doesn't
    /// bump it): the server takes it as the deletion that follows the edit, not as the edit sent
    /// again (the chaos test found deletions answered as taken and never applied). And the
    /// device's own edit, downloaded after it deleted the note, doesn't bring the note back.
    @Test func aDeviceDeletesWhatItLastEditedAndItStaysDeleted() async throws {
        let server = try Self.server(try TestEngine.garage())
        let a = try Self.device(server, teams: ["1"]), b = try Self.device(server, teams: ["1"])
        try await a.garage.park(TeamNote(id: "n1", team: "1", title: "first"))
        _ = try await a.engine.sync()
        var note = try #require(try await a.garage.retrieve(TeamNote.self, identifier: "n1"))
        note.title = "edited"
        try await a.garage.park(note)
        _ = try await a.engine.sync()
        _ = try await a.garage.delete(TeamNote.self, identifier: "n1")
        _ = try await a.engine.sync()
        _ = try await b.engine.sync()
        #expect(try await b.garage.retrieve(TeamNote.self, identifier: "n1") == nil)
        #expect(try await a.garage.retrieve(TeamNote.self, identifier: "n1") == nil)
        // Its edit's answer lost, then the deletion, then a download before the deletion's upload.
        try await a.garage.park(TeamNote(id: "n2", team: "1", title: "second"))
        _ = try await a.engine.sync()
        var second = try #require(try await a.garage.retrieve(TeamNote.self, identifier: "n2"))
        second.title = "second, edited"
        try await a.garage.park(second)
        a.transport.loseNextAnswers(1)
        await #expect(throws: (any Error).self) { _ = try await a.engine.sync() }
        _ = try await a.garage.delete(TeamNote.self, identifier: "n2")
        _ = try await a.engine.sync()
        _ = try await a.engine.sync()
        _ = try await b.engine.sync()
        #expect(try await a.garage.retrieve(TeamNote.self, identifier: "n2") == nil)
        #expect(try await b.garage.retrieve(TeamNote.self, identifier: "n2") == nil)
    }

    /// A device's edit that reaches the server after its own deletion at the same revision (a
    /// request that outlived its answer, sent again to another instance) doesn't bring the
    /// object back: a deletion follows the edit of its revision, not the other way round.
    @Test func anEditArrivingAfterItsOwnDeletionDoesNotBringTheObjectBack() async throws {
        let server = try Self.server(try TestEngine.garage())
        let access = SyncAccess(user: "u", scopes: ["team:1"])
        let device = SyncChangeID(device: "phone", revision: 2)
        let note = TeamNote(id: "z", team: "1", title: "edited")
        func upload(_ object: TeamNote?, version: String?) async throws -> UploadResult<TeamNote>? {
            try await server.upload(UploadBatch(typeName: "TeamNote", changes: [
                SyncChange(identifier: "z", object: object, version: version, changeID: device)]), access: access)["z"]
        }
        guard case .accepted(let created)? = try await upload(note, version: nil),
              case .accepted? = try await upload(nil, version: created) else {
            Issue.record("expected the creation and the deletion to be taken")
            return
        }
        let late = try await upload(note, version: created)
        if case .accepted? = late { Issue.record("the late edit was taken: \(String(describing: late))") }
        let batch = try await server.download(DownloadRequest<TeamNote>(typeName: "TeamNote", cursor: nil), access: access)
        #expect(batch.changes.map(\.identifier) == ["z"] && batch.changes.first?.object == nil)
    }

    /// The chaos test's deletion undone: a device's creation, its request slow to reach the
    /// server, then its deletion, taken first (the server never had the object). The creation,
    /// arriving after, is not taken; the object stays unknown to the devices, and a later
    /// creation (the device's, or another's) is taken as new.
    @Test func aCreationArrivingAfterItsOwnDeletionDoesNotBringTheObjectBack() async throws {
        let server = try Self.server(try TestEngine.garage())
        let access = SyncAccess(user: "u", scopes: ["team:1"])
        func upload(_ identifier: String, _ object: TeamNote?, _ device: String, _ revision: Int64) async throws -> UploadResult<TeamNote>? {
            try await server.upload(UploadBatch(typeName: "TeamNote", changes: [
                SyncChange(identifier: identifier, object: object, version: nil, changeID: SyncChangeID(device: device, revision: revision)),
            ]), access: access)[identifier]
        }
        func feed() async throws -> [String] {
            try await server.download(DownloadRequest<TeamNote>(typeName: "TeamNote", cursor: nil), access: access).changes
                .map { "\($0.identifier) \($0.object?.title ?? "deleted") \($0.version ?? "-")" }
        }
        guard case .accepted? = try await upload("y", nil, "phone", 1) else { Issue.record("the deletion was not taken"); return }
        let late = try await upload("y", TeamNote(id: "y", team: "1", title: "late"), "phone", 1)
        if case .accepted? = late { Issue.record("the late creation was taken: \(String(describing: late))") }
        #expect(try await feed() == [])
        // Sent again, the deletion is answered as taken.
        guard case .accepted? = try await upload("y", nil, "phone", 1) else { Issue.record("the deletion sent again was not taken"); return }
        // Another device's creation of the identifier is new; so is the phone's next one.
        guard case .accepted? = try await upload("y", TeamNote(id: "y", team: "1", title: "tablet's"), "tablet", 1),
              case .accepted? = try await upload("x", nil, "phone", 3),
              case .accepted? = try await upload("x", TeamNote(id: "x", team: "1", title: "again"), "phone", 4) else {
            Issue.record("a later creation was not taken")
            return
        }
        #expect(try await feed() == ["y tablet's 1", "x again 1"])
    }

    @Test func aDeviceReadsAndWritesItsScopesOnly() async throws {
        let server = try Self.server(try TestEngine.garage())
        let one = try Self.device(server, teams: ["1"]), two = try Self.device(server, teams: ["2"])
        let both = try Self.device(server, teams: ["1", "2"])
        try await one.garage.park(TeamNote(id: "a", team: "1", title: "team 1"))
        try await two.garage.park(TeamNote(id: "b", team: "2", title: "team 2"))
        _ = try await one.engine.sync()
        _ = try await two.engine.sync()
        _ = try await one.engine.sync()
        _ = try await both.engine.sync()
        #expect(Set(try await Self.notes(one.garage).keys) == ["a"])
        #expect(Set(try await Self.notes(two.garage).keys) == ["b"])
        #expect(Set(try await Self.notes(both.garage).keys) == ["a", "b"])
        // A write into a scope the device isn't granted is refused, and nothing is written;
        // so is one over an object of another scope, with the same answer whether it exists or not.
        try await one.garage.park(TeamNote(id: "c", team: "2", title: "intruder"))
        try await one.garage.park(TeamNote(id: "b", team: "1", title: "taking b"))
        _ = try await one.engine.sync()
        let batch = UploadBatch(typeName: "TeamNote", changes: [
            SyncChange(identifier: "b", object: TeamNote(id: "b", team: "1", title: "x"), version: "1"),
            SyncChange(identifier: "zz", object: TeamNote(id: "zz", team: "2", title: "x"), version: nil),
        ])
        let answers = try await server.upload(batch, access: SyncAccess(user: "u", scopes: ["team:1"]))
        guard case .failed(let existing)? = answers["b"], case .failed(let absent)? = answers["zz"] else {
            Issue.record("expected refusals, got \(answers.results)")
            return
        }
        #expect(existing == absent)
        _ = try await two.engine.sync()
        #expect(try await Self.notes(two.garage)["b"]?.title == "team 2")
        #expect(try await Self.notes(two.garage)["c"] == nil)
        // The rules' refusal is the reason of a failed answer.
        let long = try await server.upload(UploadBatch(typeName: "TeamNote", changes: [
            SyncChange(identifier: "d", object: TeamNote(id: "d", team: "1", title: String(repeating: "x", count: 41)), version: nil),
        ]), access: SyncAccess(user: "u", scopes: ["team:1"]))
        guard case .failed(let reason)? = long["d"] else { Issue.record("expected a refusal"); return }
        #expect(reason.contains("40 characters"))
    }

    /// An object moved to another scope leaves the feed of the one it left as a deletion.
    @Test func anObjectMovedToAnotherScopeIsDeletedForTheDevicesOfTheOne() async throws {
        let server = try Self.server(try TestEngine.garage())
        let one = try Self.device(server, teams: ["1"]), admin = try Self.device(server, teams: ["1", "2"])
        try await admin.garage.park(TeamNote(id: "m", team: "1", title: "moving"))
        _ = try await admin.engine.sync()
        _ = try await one.engine.sync()
        #expect(try await Self.notes(one.garage)["m"] != nil)
        var note = try #require(try await admin.garage.retrieve(TeamNote.self, identifier: "m"))
        note.team = "2"
        try await admin.garage.park(note)
        _ = try await admin.engine.sync()
        _ = try await one.engine.sync()
        #expect(try await Self.notes(one.garage)["m"] == nil)
    }

    /// Two server instances on one store: a device may ask either, any cursor works on both,
    /// and positions taken at once by both never repeat nor hide a change.
    @Test func twoInstancesServeOneFeedWhateverTheOrder() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("server.garage")
        let first = try Self.server(try TestEngine.garage(path: path), pageSize: 4)
        let second = try Self.server(try TestEngine.garage(path: path), pageSize: 4)
        let writers = try (0..<4).map { index in try Self.device(index % 2 == 0 ? first : second, teams: ["1"]) }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (index, writer) in writers.enumerated() {
                group.addTask {
                    for note in 0..<6 {
                        try await writer.garage.park(TeamNote(id: "w\(index)-\(note)", team: "1", title: "t"))
                        _ = try await writer.engine.sync()
                    }
                }
            }
            try await group.waitForAll()
        }
        for writer in writers { _ = try await writer.engine.sync() }
        let reader = try Self.device(first, teams: ["1"])
        _ = try await reader.engine.sync()
        #expect(try await Self.notes(reader.garage).count == 24)
        for writer in writers { #expect(try await Self.notes(writer.garage).count == 24) }
    }
}
