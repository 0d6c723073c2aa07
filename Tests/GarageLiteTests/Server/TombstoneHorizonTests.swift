import Foundation
import GarageLite
import GarageLiteServer
import Testing

/// Issue 44: tombstones that end. The server purges deletions past its horizon; a device whose
/// cursor is behind a purged one is answered "rebase", downloads everything again, keeps every
/// unsynced edit and deletion (uploaded after), and deletes what the server no longer has: no
/// deletion comes back, no local change is lost, whatever the device does meanwhile.
@Suite("Tombstones past the horizon")
struct TombstoneHorizonTests {
    typealias TeamNote = SyncServerTests.TeamNote

    /// The in-process transport, running `duringDownload` before each download it sends: the
    /// app's edits while a rebase is under way.
    final class EditingTransport: SyncTransport, @unchecked Sendable {
        let inner: SyncServerTests.InProcessTransport
        private let lock = NSLock()
        private var edit: (@Sendable () async throws -> Void)?
        private var rebases = 0

        init(_ inner: SyncServerTests.InProcessTransport) {
            self.inner = inner
        }

        func duringDownloads(_ edit: (@Sendable () async throws -> Void)?) { lock.withLock { self.edit = edit } }
        var rebasesAnswered: Int { lock.withLock { rebases } }

        func upload<Object: Codable>(_ batch: UploadBatch<Object>) async throws -> UploadResults<Object> {
            try await inner.upload(batch)
        }

        func download<Object: Codable>(_ request: DownloadRequest<Object>) async throws -> DownloadBatch<Object> {
            if let edit = lock.withLock({ self.edit }) { try await edit() }
            let batch = try await inner.download(request)
            if batch.rebase { lock.withLock { rebases += 1 } }
            return batch
        }
    }

    struct Device {
        let garage: Garage
        let engine: SyncEngine
        let transport: EditingTransport
    }

    static func device(_ server: SyncServer, pageSize: Int = 50) throws -> Device {
        let garage = try TestEngine.garage()
        let transport = EditingTransport(SyncServerTests.InProcessTransport(server: server, access: SyncAccess(user: "u", scopes: ["team:1"])))
        var configuration = SyncServerTests.quick
        configuration.batchSize = pageSize
        return Device(garage: garage, engine: SyncEngine(garage: garage, transport: transport, types: [.of(TeamNote.self)],
                                                         configuration: configuration), transport: transport)
    }

    static func server(pageSize: Int = 4) throws -> SyncServer {
        let server = SyncServer(garage: try TestEngine.garage(), pageSize: pageSize, tombstoneHorizon: 3600)
        try server.serve(TeamNote.self, rules: SyncServerTests.rules)
        return server
    }

    @Test func aDeviceAwayPastTheHorizonRebasesKeepingItsEditsAndDeletions() async throws {
        let server = try Self.server()
        let a = try Self.device(server), b = try Self.device(server)
        try await a.garage.parkAll((0..<10).map { TeamNote(id: "n\($0)", team: "1", title: "note \($0)") })
        _ = try await a.engine.sync()
        _ = try await b.engine.sync()
        #expect(try await SyncServerTests.notes(b.garage).count == 10)

        // B, offline: an edit, a deletion, a new note.
        var edited = try #require(try await b.garage.retrieve(TeamNote.self, identifier: "n1"))
        edited.body = "edited on B, offline"
        try await b.garage.park(edited)
        _ = try await b.garage.delete(TeamNote.self, identifier: "n2")
        try await b.garage.park(TeamNote(id: "b-new", team: "1", title: "made on B, offline"))
        // A deletes two notes and edits one; the server purges the deletions (past the horizon).
        _ = try await a.garage.delete(TeamNote.self, identifier: "n3")
        _ = try await a.garage.delete(TeamNote.self, identifier: "n4")
        var fromA = try #require(try await a.garage.retrieve(TeamNote.self, identifier: "n5"))
        fromA.body = "edited on A"
        try await a.garage.park(fromA)
        _ = try await a.engine.sync()
        #expect(try await server.purgeTombstones(deletedBefore: Date().addingTimeInterval(1)) == 2)
        let scopes = try await server.scopes()
        #expect(scopes.map(\.name) == ["team:1"])
        #expect(scopes.first?.objects == 8 && scopes.first?.tombstones == 0 && scopes.first?.position == 13)
        #expect((scopes.first?.horizon ?? 0) > 10)

        let report = try await b.engine.sync()
        #expect(report.rebased == ["TeamNote"])
        #expect(b.transport.rebasesAnswered == 1)
        let onB = try await SyncServerTests.notes(b.garage)
        #expect(onB["n1"]?.body == "edited on B, offline")
        #expect(onB["n2"] == nil)
        #expect(onB["n3"] == nil && onB["n4"] == nil)     // the purged deletions did not come back
        #expect(onB["n5"]?.body == "edited on A")
        #expect(onB["b-new"] != nil)
        // B's changes reached the server: A gets them.
        _ = try await a.engine.sync()
        #expect(try await SyncServerTests.notes(a.garage) == onB)
        // The rebase is over: the next sync downloads after its new cursor.
        _ = try await b.engine.sync()
        #expect(b.transport.rebasesAnswered == 1)
    }

    /// Random histories: A edits, deletes and creates; B does the same offline and while its
    /// rebase downloads (between its pages); the server purges A's deletions. Then both sync
    /// until quiet: they hold the same notes, every change of B's survives unless A's deletion
    /// or edit of the same note came first, and no note either deleted comes back.
    @Test(arguments: [1, 2, 3, 4, 5, 6])
    func randomChangesDuringARebaseAreKept(seed: UInt64) async throws {
        var random = SplitMix64(state: seed)
        let server = try Self.server(pageSize: 3)
        let a = try Self.device(server, pageSize: 5), b = try Self.device(server, pageSize: 5)
        let count = 30
        try await a.garage.parkAll((0..<count).map { TeamNote(id: "n\($0)", team: "1", title: "note \($0)") })
        _ = try await a.engine.sync()
        _ = try await b.engine.sync()

        let deletedByA = Set((0..<count).filter { _ in random.next() % 5 == 0 }.map { "n\($0)" })
        for identifier in deletedByA { _ = try await a.garage.delete(TeamNote.self, identifier: identifier) }
        _ = try await a.engine.sync()
        #expect(try await server.purgeTombstones(deletedBefore: Date().addingTimeInterval(1)) == deletedByA.count)

        // B's changes: some offline, the others during its rebase, each to a note A kept.
        let kept = (0..<count).map { "n\($0)" }.filter { !deletedByA.contains($0) }
        var editsByB: [String: String] = [:], deletionsByB: Set<String> = [], createdByB: Set<String> = []
        var plan: [@Sendable (Garage) async throws -> Void] = []
        for identifier in kept where random.next() % 3 == 0 {
            if random.next() % 2 == 0 {
                let body = "B's edit \(random.next() % 1000)"
                editsByB[identifier] = body
                plan.append { garage in
                    guard var note = try await garage.retrieve(TeamNote.self, identifier: identifier) else { return }
                    note.body = body
                    try await garage.park(note)
                }
            } else {
                deletionsByB.insert(identifier)
                plan.append { garage in _ = try await garage.delete(TeamNote.self, identifier: identifier) }
            }
        }
        for index in 0..<Int(random.next() % 4) {
            let identifier = "b\(seed)-\(index)"
            createdByB.insert(identifier)
            plan.append { garage in try await garage.park(TeamNote(id: identifier, team: "1", title: "new on B")) }
        }
        let offline = Int(random.next() % UInt64(plan.count + 1))
        for step in plan.prefix(offline) { try await step(b.garage) }
        let during = Array(plan.dropFirst(offline))
        let next = StepIndex()
        let garage = b.garage
        b.transport.duringDownloads {
            if let index = next.take(below: during.count) { try await during[index](garage) }
        }
        let report = try await b.engine.sync()
        #expect(report.rebased == ["TeamNote"])
        b.transport.duringDownloads(nil)
        for step in during[min(next.value, during.count)...] { try await step(b.garage) }     // any not yet made
        for _ in 0..<3 {
            _ = try await b.engine.sync()
            _ = try await a.engine.sync()
        }
        let onA = try await SyncServerTests.notes(a.garage), onB = try await SyncServerTests.notes(b.garage)
        #expect(onA == onB)
        for identifier in deletedByA { #expect(onB[identifier] == nil, "deleted on A, purged: \(identifier) came back") }
        for identifier in deletionsByB { #expect(onB[identifier] == nil, "deleted on B during the rebase: \(identifier) came back") }
        for (identifier, body) in editsByB { #expect(onB[identifier]?.body == body, "B's edit of \(identifier) was lost") }
        for identifier in createdByB { #expect(onA[identifier] != nil, "B's new \(identifier) was lost") }
        #expect(onB.count == count - deletedByA.count - deletionsByB.count + createdByB.count)
    }

    @Test func aForcedRebaseRebasesTheScopesReadersOnly() async throws {
        let server = try Self.server()
        let a = try Self.device(server), b = try Self.device(server)
        try await a.garage.parkAll((0..<3).map { TeamNote(id: "n\($0)", team: "1", title: "note \($0)") })
        _ = try await a.engine.sync()
        _ = try await b.engine.sync()
        let read = try await server.download(DownloadRequest<TeamNote>(typeName: "TeamNote", cursor: nil),
                                             access: SyncAccess(user: "u", scopes: ["team:1"]))
        let cursor = try #require(read.cursor)
        #expect(try await server.describe(cursor: cursor).map(\.rebases) == [false])
        #expect(try await server.forceRebase(of: "team:1") == 4)
        #expect(try await server.describe(cursor: cursor).map(\.rebases) == [true])
        // A device that read the scope rebases, and keeps its notes.
        let report = try await b.engine.sync()
        #expect(report.rebased == ["TeamNote"])
        #expect(try await SyncServerTests.notes(b.garage).count == 3)
        // One that begins reading it afterwards doesn't.
        let c = try Self.device(server)
        #expect(try await c.engine.sync().rebased.isEmpty)
        #expect(try await SyncServerTests.notes(c.garage).count == 3)
    }

    /// A purge leaves the object's state: created again, its versions go on, so that a device's
    /// edit based on the version before the deletion is still a conflict, not taken over it.
    @Test func anObjectCreatedAgainAfterAPurgeGoesOnFromItsLastVersion() async throws {
        let server = try Self.server()
        let a = try Self.device(server), b = try Self.device(server)
        try await a.garage.park(TeamNote(id: "n1", team: "1", title: "first"))
        _ = try await a.engine.sync()
        _ = try await b.engine.sync()
        _ = try await a.garage.delete(TeamNote.self, identifier: "n1")
        _ = try await a.engine.sync()
        #expect(try await server.purgeTombstones(deletedBefore: Date().addingTimeInterval(1)) == 1)
        try await a.garage.park(TeamNote(id: "n1", team: "1", title: "created again"))
        _ = try await a.engine.sync()
        #expect(try await a.garage.metadata(TeamNote.self, identifier: "n1")?.serverVersion == "3")
        // B, based on version 1, edits offline: after its rebase the edit is merged with the
        // object created again, not written over it as if based on its current version.
        var edit = try #require(try await b.garage.retrieve(TeamNote.self, identifier: "n1"))
        edit.body = "B's body"
        try await b.garage.park(edit)
        let report = try await b.engine.sync()
        #expect(report.rebased == ["TeamNote"])
        _ = try await a.engine.sync()
        let onA = try await SyncServerTests.notes(a.garage)
        #expect(onA["n1"]?.title == "created again" && onA["n1"]?.body == "B's body")
    }

    @Test func withoutAHorizonNothingIsPurged() async throws {
        let server = SyncServer(garage: try TestEngine.garage())
        try server.serve(TeamNote.self, rules: SyncServerTests.rules)
        let a = try Self.device(server)
        try await a.garage.park(TeamNote(id: "n1", team: "1"))
        _ = try await a.engine.sync()
        _ = try await a.garage.delete(TeamNote.self, identifier: "n1")
        _ = try await a.engine.sync()
        #expect(try await server.purgeTombstones() == 0)
        #expect(try await server.scopes().first?.tombstones == 1)
    }
}

/// The next index of a list of steps, taken once each, from any task.
final class StepIndex: Sendable {
    private let state = Protected(0)
    func take(below count: Int) -> Int? {
        state.write { value in
            guard value < count else { return nil }
            defer { value += 1 }
            return value
        }
    }
    var value: Int { state.read { $0 } }
}
