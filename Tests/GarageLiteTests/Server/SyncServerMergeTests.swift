import Foundation
import Synchronization
import GarageLite
import GarageLiteServer
import Testing

/// Issue 43: conflicts decided where the app wants — on the device (the default: the server
/// answers `conflict`) or on the server (`SyncRules.merge`: answered `merged`) — and either way
/// both devices learn what of their edits the merge holds otherwise.
@Suite("Sync server merges")
struct SyncServerMergeTests {
    typealias TeamNote = SyncServerTests.TeamNote
    typealias Device = SyncServerTests.Device

    static func server(merge: SyncMerge<TeamNote>?, keptVersions: Int = 16) throws -> SyncServer {
        let server = SyncServer(garage: try TestEngine.garage(), keptVersions: keptVersions)
        try server.serve(TeamNote.self, rules: SyncRules(scope: { "team:\($0.team)" }, merge: merge))
        return server
    }

    /// Two devices holding `n1`, synced.
    static func twoDevices(_ server: SyncServer) async throws -> (Device, Device) {
        let a = try SyncServerTests.device(server, teams: ["1"]), b = try SyncServerTests.device(server, teams: ["1"])
        try await a.garage.park(TeamNote(id: "n1", team: "1", title: "first", body: "body"))
        _ = try await a.engine.sync()
        _ = try await b.engine.sync()
        return (a, b)
    }

    static func edit(_ device: Device, _ change: (inout TeamNote) -> Void) async throws {
        var note = try #require(try await device.garage.retrieve(TeamNote.self, identifier: "n1"))
        change(&note)
        try await device.garage.park(note)
    }

    static func note(_ device: Device) async throws -> TeamNote? {
        try await SyncServerTests.notes(device.garage)["n1"]
    }

    @Test func onTheDeviceTheLoserOfASameFieldEditLearnsIt() async throws {
        let (a, b) = try await Self.twoDevices(try Self.server(merge: nil))
        try await Self.edit(a) { $0.title = "title from A" }
        try await Self.edit(b) { $0.title = "title from B" }
        _ = try await a.engine.sync()
        let onB = try await b.engine.sync()
        // B's merge kept its own title (last writer wins) and says it dropped A's.
        #expect(onB.conflicts.flatMap(\.discardedFields) == ["title"])
        let onA = try await a.engine.sync()
        #expect(onA.replaced.map(\.object.identifier) == ["n1"])
        #expect(onA.replaced.first?.fields == ["title"])
        #expect(try await Self.note(a)?.title == "title from B")
        #expect(try await Self.note(a) == (try await Self.note(b)))
    }

    @Test func onTheServerEditsOfOtherPropertiesAreKeptWithTheBase() async throws {
        let server = try Self.server(merge: .fields())
        let (a, b) = try await Self.twoDevices(server)
        try await Self.edit(a) { $0.title = "title from A" }
        try await Self.edit(b) { $0.body = "body from B" }
        _ = try await a.engine.sync()
        let onB = try await b.engine.sync()
        #expect(onB.conflicts.isEmpty && onB.replaced.isEmpty)
        #expect(try await Self.note(b) == TeamNote(id: "n1", team: "1", title: "title from A", body: "body from B", syncStatus: .undetermined))
        let onA = try await a.engine.sync()
        #expect(onA.replaced.isEmpty)
        #expect(try await Self.note(a) == (try await Self.note(b)))
        #expect(try await b.garage.count(TeamNote.self, withStatus: .notSynced) == 0)
    }

    @Test func onTheServerTheLoserOfASameFieldEditLearnsItWhicheverItIs() async throws {
        // Last writer wins: the later upload's title, and the earlier device is told.
        let (a, b) = try await Self.twoDevices(try Self.server(merge: .fields()))
        try await Self.edit(a) { $0.title = "title from A" }
        try await Self.edit(b) { $0.title = "title from B" }
        _ = try await a.engine.sync()
        let onB = try await b.engine.sync()
        #expect(onB.replaced.isEmpty)
        let onA = try await a.engine.sync()
        #expect(onA.replaced.map(\.fields) == [["title"]])
        #expect(try await Self.note(a)?.title == "title from B")
        // The server's value wins: the later upload's device is told, at once.
        let (c, d) = try await Self.twoDevices(try Self.server(merge: .fields(bothChanged: .serverWins)))
        try await Self.edit(c) { $0.title = "title from C" }
        try await Self.edit(d) { $0.title = "title from D"; $0.body = "body from D" }
        _ = try await c.engine.sync()
        let onD = try await d.engine.sync()
        #expect(onD.replaced.map(\.fields) == [["title"]])
        #expect(try await Self.note(d) == TeamNote(id: "n1", team: "1", title: "title from C", body: "body from D", syncStatus: .undetermined))
        let onC = try await c.engine.sync()
        #expect(onC.replaced.isEmpty)
        #expect(try await Self.note(c) == (try await Self.note(d)))
    }

    /// Without the base (the server keeps one version here), every property the two sides hold
    /// otherwise is changed by both: the policy picks, and the report names it.
    @Test func aChangeBasedOnAVersionNoLongerKeptIsMergedWithoutABase() async throws {
        let (a, b) = try await Self.twoDevices(try Self.server(merge: .fields(bothChanged: .serverWins), keptVersions: 1))
        try await Self.edit(a) { $0.title = "title from A" }
        try await Self.edit(b) { $0.body = "body from B" }
        _ = try await a.engine.sync()
        let onB = try await b.engine.sync()
        #expect(onB.replaced.map(\.fields) == [["body"]])
        #expect(try await Self.note(b) == TeamNote(id: "n1", team: "1", title: "title from A", body: "body", syncStatus: .undetermined))
    }

    /// The answer of a merged upload lost: sent again, it is answered as merged (no second
    /// version), and an edit made meanwhile is merged again, with nothing of the other device's
    /// lost.
    @Test func aMergedUploadWhoseAnswerWasLost() async throws {
        let server = try Self.server(merge: .fields())
        let (a, b) = try await Self.twoDevices(server)
        try await Self.edit(a) { $0.title = "title from A" }
        try await Self.edit(b) { $0.body = "body from B" }
        _ = try await a.engine.sync()
        b.transport.loseNextAnswers(1)
        await #expect(throws: (any Error).self) { _ = try await b.engine.sync() }
        _ = try await b.engine.sync()
        let access = SyncAccess(user: "u", scopes: ["team:1"])
        let feed = try await server.download(DownloadRequest<TeamNote>(typeName: "TeamNote", cursor: nil), access: access)
        #expect(feed.changes.map(\.version) == ["3"])
        #expect(try await Self.note(b) == TeamNote(id: "n1", team: "1", title: "title from A", body: "body from B", syncStatus: .undetermined))
        // Lost again, then edited again before the next sync: the later change is merged too.
        try await Self.edit(a) { $0.title = "title from A, again" }
        _ = try await a.engine.sync()
        try await Self.edit(b) { $0.body = "body from B, again" }
        b.transport.loseNextAnswers(1)
        await #expect(throws: (any Error).self) { _ = try await b.engine.sync() }
        try await Self.edit(b) { $0.team = "1"; $0.body = "body from B, third" }
        _ = try await b.engine.sync()
        _ = try await a.engine.sync()
        let expected = TeamNote(id: "n1", team: "1", title: "title from A, again", body: "body from B, third", syncStatus: .undetermined)
        let onB = try await Self.note(b), onA = try await Self.note(a)
        #expect(onB == expected, "\(String(describing: onB))")
        #expect(onA == expected, "\(String(describing: onA))")
    }

    /// An edit made on the device while its upload is merged on the server is merged with the
    /// server's merge: neither the edit nor the other device's change is lost.
    @Test func anEditMadeWhileTheServerMergesIsKept() async throws {
        let server = try Self.server(merge: .fields())
        let (a, _) = try await Self.twoDevices(server)
        let garage = try TestEngine.garage()
        let transport = EditingTransport(inner: SyncServerTests.InProcessTransport(server: server, access: SyncAccess(user: "b", scopes: ["team:1"])),
                                         garage: garage)
        let b = SyncEngine(garage: garage, transport: transport, types: [.of(TeamNote.self)], configuration: SyncServerTests.quick)
        _ = try await b.sync()
        try await Self.edit(a) { $0.title = "title from A" }
        _ = try await a.engine.sync()
        var onB = try #require(try await garage.retrieve(TeamNote.self, identifier: "n1"))
        onB.body = "body from B"
        try await garage.park(onB)
        transport.editDuringNextUpload { $0.body += ", and more" }
        _ = try await b.sync()
        _ = try await b.sync()
        _ = try await a.engine.sync()
        let expected = TeamNote(id: "n1", team: "1", title: "title from A", body: "body from B, and more", syncStatus: .undetermined)
        #expect(try await SyncServerTests.notes(garage)["n1"] == expected)
        #expect(try await Self.note(a) == expected)
    }

    /// A transport that edits the note `n1` in `garage` while the server answers an upload.
    final class EditingTransport: SyncTransport, Sendable {
        let inner: SyncServerTests.InProcessTransport
        let garage: Garage
        private let edit = Mutex<(@Sendable (inout TeamNote) -> Void)?>(nil)

        init(inner: SyncServerTests.InProcessTransport, garage: Garage) {
            self.inner = inner
            self.garage = garage
        }

        func editDuringNextUpload(_ change: @escaping @Sendable (inout TeamNote) -> Void) { edit.withLock { $0 = change } }

        func upload<Object: Codable>(_ batch: UploadBatch<Object>) async throws -> UploadResults<Object> {
            let answer = try await inner.upload(batch)
            if let change = edit.withLock({ value in defer { value = nil }; return value }),
               var note = try await garage.retrieve(TeamNote.self, identifier: "n1") {
                change(&note)
                try await garage.park(note)
            }
            return answer
        }

        func download<Object: Codable>(_ request: DownloadRequest<Object>) async throws -> DownloadBatch<Object> {
            try await inner.download(request)
        }
    }
}
