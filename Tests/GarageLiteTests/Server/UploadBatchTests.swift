import Foundation
import GarageLite
import GarageLiteServer
import Testing

/// Issue 44: a `SyncServer` decides an upload's changes in memory and writes the batch with a
/// handful of calls; a batch answers as its changes taken one after the other would.
@Suite("Upload batches")
struct UploadBatchTests {
    typealias TeamNote = SyncServerTests.TeamNote

    static let access = SyncAccess(user: "u", scopes: ["team:1"])

    static func note(_ id: String, title: String = "", body: String = "") -> TeamNote {
        TeamNote(id: id, team: "1", title: title, body: body)
    }

    static func upload(_ server: SyncServer, _ changes: [SyncChange<TeamNote>]) async throws -> [String: UploadResult<TeamNote>] {
        try await server.upload(UploadBatch(typeName: "TeamNote", changes: changes), access: access).results
    }

    /// Every change of the feed after `cursor`, page after page: identifier, version, object.
    static func feed(_ server: SyncServer, after cursor: String? = nil) async throws -> (changes: [SyncChange<TeamNote>], cursor: String?) {
        var cursor = cursor, changes: [SyncChange<TeamNote>] = []
        while true {
            let page = try await server.download(DownloadRequest<TeamNote>(typeName: "TeamNote", cursor: cursor), access: access)
            changes += page.changes
            cursor = page.cursor ?? cursor
            if !page.hasMore { return (changes, cursor) }
        }
    }

    static func version(_ result: UploadResult<TeamNote>?) -> String? {
        switch result {
        case .accepted(let version)?: return version
        case .merged(_, let version)?: return version
        default: return nil
        }
    }

    @Test func aRefusedChangeFailsAloneAndTheOthersAreWrittenWhole() async throws {
        let garage = try TestEngine.garage()
        let server = try SyncServerTests.server(garage, pageSize: 2)
        let results = try await Self.upload(server, [
            SyncChange(identifier: "n1", object: Self.note("n1", title: "one"), version: nil),
            SyncChange(identifier: "n2", object: Self.note("n2", title: "a \u{0} in it"), version: nil),
            SyncChange(identifier: "n3", object: Self.note("n3", title: "three"), version: nil),
        ])
        #expect(Self.version(results["n1"]) == "1" && Self.version(results["n3"]) == "1")
        guard case .failed(let reason)? = results["n2"] else {
            Issue.record("n2: \(String(describing: results["n2"]))")
            return
        }
        #expect(reason.contains("refuses"), "\(reason)")
        #expect(try await garage.count(TeamNote.self) == 2)
        let (changes, cursor) = try await Self.feed(server)
        #expect(changes.map(\.identifier) == ["n1", "n3"])
        #expect(changes.map(\.object?.title) == ["one", "three"])
        // The feed goes on from there: nothing again, nothing skipped.
        _ = try await Self.upload(server, [SyncChange(identifier: "n4", object: Self.note("n4"), version: nil)])
        #expect(try await Self.feed(server, after: cursor).changes.map(\.identifier) == ["n4"])
    }

    @Test func aBatchChangingAnObjectTwiceEndsAtItsLastChange() async throws {
        let garage = try TestEngine.garage()
        let server = try SyncServerTests.server(garage, pageSize: 3)
        let device = "device-a"
        let results = try await Self.upload(server, [
            SyncChange(identifier: "n1", object: Self.note("n1", title: "first"), version: nil,
                       changeID: SyncChangeID(device: device, revision: 1)),
            SyncChange(identifier: "n2", object: Self.note("n2", title: "short-lived"), version: nil,
                       changeID: SyncChangeID(device: device, revision: 1)),
            SyncChange(identifier: "n1", object: Self.note("n1", title: "second"), version: "1",
                       changeID: SyncChangeID(device: device, revision: 2)),
            SyncChange(identifier: "n2", object: nil, version: "1", changeID: SyncChangeID(device: device, revision: 1)),
        ])
        #expect(Self.version(results["n1"]) == "2" && Self.version(results["n2"]) == "2")
        #expect(try await garage.retrieve(TeamNote.self, identifier: "n1")?.title == "second")
        #expect(try await garage.retrieve(TeamNote.self, identifier: "n2") == nil)
        // Each object once, at its last change, in the order of those changes.
        let changes = try await Self.feed(server).changes
        #expect(changes.map(\.identifier) == ["n1", "n2"])
        #expect(changes.map(\.version) == ["2", "2"])
        #expect(changes.map { $0.object?.title } == ["second", nil])
        // Sent again (its answer lost), the batch is answered as taken, and changes nothing.
        let again = try await Self.upload(server, [
            SyncChange(identifier: "n1", object: Self.note("n1", title: "second"), version: "1",
                       changeID: SyncChangeID(device: device, revision: 2)),
        ])
        #expect(Self.version(again["n1"]) == "2")
        #expect(try await Self.feed(server).changes.map(\.version) == ["2", "2"])
    }

    @Test func aMergeReadsTheBaseItsOwnBatchKept() async throws {
        let garage = try TestEngine.garage()
        let server = SyncServer(garage: garage)
        try server.serve(TeamNote.self, rules: SyncRules(scope: { "team:\($0.team)" }, merge: .fields()))
        let results = try await Self.upload(server, [
            SyncChange(identifier: "n1", object: Self.note("n1", title: "t", body: "b"), version: nil,
                       changeID: SyncChangeID(device: "a", revision: 1)),
            SyncChange(identifier: "n1", object: Self.note("n1", title: "title from A", body: "b"), version: "1",
                       changeID: SyncChangeID(device: "a", revision: 2)),
            // Based on version 1, kept by this batch: only its body changed since.
            SyncChange(identifier: "n1", object: Self.note("n1", title: "t", body: "body from B"), version: "1",
                       changeID: SyncChangeID(device: "b", revision: 1)),
        ])
        guard case .merged(let merged, let version)? = results["n1"] else {
            Issue.record("n1: \(String(describing: results["n1"]))")
            return
        }
        #expect(version == "3")
        #expect(merged.title == "title from A" && merged.body == "body from B")
        #expect(try await garage.retrieve(TeamNote.self, identifier: "n1").map { [$0.title, $0.body] } == ["title from A", "body from B"])
    }
}

extension UploadBatchTests {
    /// A state the server can't read fails its own change, as it did when each change read its
    /// own: the batch's other changes are written.
    @Test func aStateTheServerCantReadFailsItsChangeOnly() async throws {
        let garage = try TestEngine.garage()
        let server = try SyncServerTests.server(garage)
        _ = try await Self.upload(server, [SyncChange(identifier: "n1", object: Self.note("n1"), version: nil)])
        let key = ObjectKey(typeName: "GarageLiteServer.ObjectState", identifier: "TeamNote\u{1F}n1")
        try await garage.parkJSON(#"{"id":"TeamNote\u001fn1","typeName":"TeamNote","identifier":"n1","scope":17}"#, as: key)
        let outcome: Result<[String: UploadResult<TeamNote>], any Error>
        do {
            outcome = .success(try await Self.upload(server, [
                SyncChange(identifier: "n1", object: Self.note("n1", title: "edit"), version: "1"),
                SyncChange(identifier: "n2", object: Self.note("n2"), version: nil),
            ]))
        } catch {
            outcome = .failure(error)
        }
        switch outcome {
        case .success(let results):
            guard case .failed? = results["n1"] else { Issue.record("n1: \(String(describing: results["n1"]))"); return }
            #expect(Self.version(results["n2"]) == "1")
            #expect(try await Self.feed(server).changes.map(\.identifier) == ["n2"])
        case .failure(let error):
            // Not a refusal of the store (a decoding error): the request fails, naming the object.
            #expect("\(error)".contains("n1"), "\(error)")
            #expect(try await garage.retrieve(TeamNote.self, identifier: "n2") == nil, "nothing of the batch written")
        }
    }
}
