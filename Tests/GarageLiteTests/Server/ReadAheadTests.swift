import Foundation
import GarageLite
@testable import GarageLiteServer
import Testing

/// Issue 44: a download with more to come reads the next page while the device applies this
/// one. The page read ahead goes only to the same type, access and cursor, once; a change made
/// meanwhile is not missed; the pages held are bounded.
@Suite("Pages read ahead")
struct ReadAheadTests {
    struct AheadNote: Codable, Identifiable, Equatable, Sendable {
        var id: String
        var team: String
        var text: String
    }

    static let typeName = "AheadNote"

    func upload(_ server: SyncServer, _ changes: [SyncChange<AheadNote>], scopes: Set<String>) async throws {
        let results = try await server.upload(UploadBatch(typeName: Self.typeName, changes: changes),
                                              access: SyncAccess(user: "writer", scopes: scopes))
        for (identifier, result) in results.results {
            guard case .accepted = result else { Issue.record("\(identifier): \(result)"); return }
        }
    }

    /// One page through the JSON route, as `HTTPSyncTransport` asks for it.
    func page(_ server: SyncServer, _ access: SyncAccess, after cursor: String?) async throws -> DownloadBatch<AheadNote> {
        let request = DownloadRequest<AheadNote>(typeName: Self.typeName, cursor: cursor)
        let json = try await server.download(typeName: Self.typeName, json: try JSONEncoder().encode(request), access: access)
        return try JSONDecoder().decode(DownloadBatch<AheadNote>.self, from: json)
    }

    /// Every page after `cursor`, applied as a device would: the notes it ends with.
    func downloadAll(_ server: SyncServer, _ access: SyncAccess, after cursor: String?,
                     into notes: inout [String: AheadNote]) async throws {
        var cursor = cursor
        while true {
            let batch = try await page(server, access, after: cursor)
            #expect(!batch.rebase)
            for change in batch.changes { notes[change.identifier] = change.object }
            cursor = batch.cursor
            if !batch.hasMore { break }
        }
    }

    func server(pageSize: Int) throws -> SyncServer {
        let server = SyncServer(garage: try TestEngine.garage(), pageSize: pageSize)
        try server.serve(AheadNote.self, rules: SyncRules(scope: { $0.team }))
        return server
    }

    /// A server of 3 changes a page holding notes n0…n7 of scope a, and a device's first page of them.
    func eightNotesAndTheirFirstPage() async throws
        -> (server: SyncServer, notes: [AheadNote], access: SyncAccess, first: DownloadBatch<AheadNote>) {
        let server = try server(pageSize: 3)
        let notes = (0..<8).map { AheadNote(id: "n\($0)", team: "a", text: "first") }
        try await upload(server, notes.map { SyncChange(identifier: $0.id, object: $0, version: nil) }, scopes: ["a"])
        let access = SyncAccess(user: "device", scopes: ["a"])
        return (server, notes, access, try await page(server, access, after: nil))
    }

    @Test func changesMadeAfterAPageWasReadAheadAreDownloadedAfterIt() async throws {
        let (server, notes, access, first) = try await eightNotesAndTheirFirstPage()
        #expect(first.hasMore && first.changes.count == 3)
        #expect(server.readAhead.count == 1, "the page after the first is read ahead")
        // Meanwhile: an edit of a note of the page read ahead, a deletion of another, a new note.
        try await upload(server, [
            SyncChange(identifier: "n4", object: AheadNote(id: "n4", team: "a", text: "edited"), version: "1"),
            SyncChange(identifier: "n5", object: nil, version: "1"),
            SyncChange(identifier: "late", object: AheadNote(id: "late", team: "a", text: "new"), version: nil),
        ], scopes: ["a"])
        var received = Dictionary(uniqueKeysWithValues: first.changes.map { ($0.identifier, $0.object) })
            .compactMapValues { $0 }
        try await downloadAll(server, access, after: first.cursor, into: &received)
        var expected = Dictionary(uniqueKeysWithValues: notes.map { ($0.id, $0) })
        expected["n4"]?.text = "edited"
        expected["n5"] = nil
        expected["late"] = AheadNote(id: "late", team: "a", text: "new")
        #expect(received == expected)
        #expect(server.readAhead.count == 0, "the last page has nothing after it: nothing is read ahead")
    }

    /// A device's download stops with a page read ahead for it; its next sync uploads an edit
    /// first, then downloads from the same cursor. The page read before the upload would send
    /// the version before the edit back as news (over the device's own change, or a local edit
    /// made since): it is read again.
    @Test func aPageReadBeforeACommitToItsScopesIsReadAgain() async throws {
        let (server, _, access, first) = try await eightNotesAndTheirFirstPage()
        await server.readAhead.settled()
        #expect(server.readAhead.count == 1, "the second page is read, before the edit")
        try await upload(server, [SyncChange(identifier: "n4", object: AheadNote(id: "n4", team: "a", text: "edited"), version: "1")],
                         scopes: ["a"])
        let second = try await page(server, access, after: first.cursor)
        #expect(second.changes.allSatisfy { $0.object?.text != "first" || $0.identifier != "n4" },
                "n4 as it was before the edit: \(second.changes.map(\.identifier))")
        #expect(second.changes.map(\.identifier) == ["n3", "n5", "n6"], "n4 moved to the end of the feed")
        await server.readAhead.settled()
        #expect(server.readAhead.count == 1, "the third page, read ahead after the edit")
        let third = try await page(server, access, after: second.cursor)
        #expect(third.changes.map(\.identifier) == ["n7", "n4"] && third.changes.last?.object?.text == "edited" && !third.hasMore)
        #expect(server.readAhead.count == 0, "taken, and the last page reads none ahead")
    }

    @Test func aPageReadAheadGoesOnlyToTheSameAccessAndCursor() async throws {
        let server = try server(pageSize: 2)
        let notes = (0..<3).map { AheadNote(id: "a\($0)", team: "a", text: "a") } + (0..<3).map { AheadNote(id: "b\($0)", team: "b", text: "b") }
        try await upload(server, notes.map { SyncChange(identifier: $0.id, object: $0, version: nil) }, scopes: ["a", "b"])
        let both = SyncAccess(user: "u", scopes: ["a", "b"])
        let first = try await page(server, both, after: nil)
        #expect(first.hasMore && server.readAhead.count == 1)
        // Another token with the same cursor: its own scopes' page, nothing of scope b.
        var onlyA: [String: AheadNote] = [:]
        try await downloadAll(server, SyncAccess(user: "u", scopes: ["a"]), after: first.cursor, into: &onlyA)
        #expect(onlyA.values.allSatisfy { $0.team == "a" })
        #expect(onlyA.keys.sorted() == ["a2"], "after a0 and a1, the first page's")
        // The first token still finds its page, and gets the rest of both scopes.
        var received = Dictionary(uniqueKeysWithValues: first.changes.compactMap { change in change.object.map { (change.identifier, $0) } })
        try await downloadAll(server, both, after: first.cursor, into: &received)
        #expect(received == Dictionary(uniqueKeysWithValues: notes.map { ($0.id, $0) }))
    }

    @Test func aPageIsTakenOnceAndThePagesHeldAreBounded() async throws {
        let readAhead = ReadAhead(capacity: 2, lifetime: .seconds(3_600))
        let page = ReadAhead.Page(json: Data("{}".utf8), changes: 1, rebase: false, next: nil)
        let access = SyncAccess(user: "u", scopes: ["a"])
        func key(_ cursor: String) -> ReadAhead.Key { ReadAhead.Key(typeName: "T", access: access, cursor: cursor) }
        readAhead.start(key("1")) { page }
        readAhead.start(key("2")) { page }
        readAhead.start(key("3")) { page }
        #expect(readAhead.count == 2, "a third page is not read: two are held")
        #expect(await readAhead.take(key("1"))?.changes == 1)
        #expect(await readAhead.take(key("1")) == nil, "taken once")
        #expect(await readAhead.take(key("3")) == nil, "never read")
        #expect(await readAhead.take(ReadAhead.Key(typeName: "T", access: SyncAccess(user: "v", scopes: ["a"]), cursor: "2")) == nil,
                "another user's request doesn't get it")
        #expect(readAhead.count == 1)
        struct Failed: Error {}
        readAhead.start(key("4")) { throw Failed() }
        #expect(await readAhead.take(key("4")) == nil, "a failed read is read again by its request")
    }

    @Test func aPageNotAskedForWithinItsLifetimeIsDropped() async throws {
        let readAhead = ReadAhead(capacity: 8, lifetime: .zero)
        let page = ReadAhead.Page(json: Data("{}".utf8), changes: 1, rebase: false, next: nil)
        let access = SyncAccess(user: "u", scopes: ["a"])
        readAhead.start(ReadAhead.Key(typeName: "T", access: access, cursor: "1")) { page }
        readAhead.start(ReadAhead.Key(typeName: "T", access: access, cursor: "2")) { page }
        #expect(readAhead.count == 1, "the first page's lifetime is over when the second starts")
        #expect(await readAhead.take(ReadAhead.Key(typeName: "T", access: access, cursor: "1")) == nil)
        #expect(await readAhead.take(ReadAhead.Key(typeName: "T", access: access, cursor: "2")) != nil)
    }
}
