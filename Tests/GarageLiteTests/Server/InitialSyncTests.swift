import Foundation
import GarageLite
import GarageLiteServer
import Testing

/// Issue 44: a new device's first download, page by page into its garage: a page and the cursor
/// after it commit together, so a download stopped at any page (a kill, a dropped connection)
/// resumes after the last page applied, none applied twice, none skipped, and the edits made
/// meanwhile stay.
@Suite("A large initial sync resumes")
struct InitialSyncTests {
    typealias TeamNote = SyncServerTests.TeamNote

    /// The in-process transport, which fails every download after `pagesBeforeFailure` pages
    /// and records the cursor of each download it was asked for.
    final class StoppingTransport: SyncTransport, @unchecked Sendable {
        let inner: SyncServerTests.InProcessTransport
        private let lock = NSLock()
        private var pagesLeft: Int?
        private(set) var cursors: [String?] = []

        init(_ inner: SyncServerTests.InProcessTransport, pagesBeforeFailure: Int?) {
            self.inner = inner
            pagesLeft = pagesBeforeFailure
        }

        struct Dropped: Error {}

        func stop(after pages: Int?) { lock.withLock { pagesLeft = pages } }
        var askedCursors: [String?] { lock.withLock { cursors } }

        func upload<Object: Codable>(_ batch: UploadBatch<Object>) async throws -> UploadResults<Object> {
            try await inner.upload(batch)
        }

        func download<Object: Codable>(_ request: DownloadRequest<Object>) async throws -> DownloadBatch<Object> {
            try lock.withLock {
                if let left = pagesLeft {
                    guard left > 0 else { throw Dropped() }
                    pagesLeft = left - 1
                }
                cursors.append(request.cursor)
            }
            return try await inner.download(request)
        }
    }

    @Test func aDownloadStoppedAtAPageResumesAfterItWithoutDuplicatesOrGaps() async throws {
        let count = 600, pageSize = 50
        let server = try SyncServerTests.server(try TestEngine.garage(), pageSize: pageSize)
        let writer = try SyncServerTests.device(server, teams: ["1"])
        try await writer.garage.parkAll((0..<count).map { TeamNote(id: String(format: "n%04d", $0), team: "1", title: "note \($0)") })
        _ = try await writer.engine.sync()

        let garage = try TestEngine.garage()
        let access = SyncAccess(user: "new", scopes: ["team:1"])
        let transport = StoppingTransport(SyncServerTests.InProcessTransport(server: server, access: access), pagesBeforeFailure: 5)
        let engine = SyncEngine(garage: garage, transport: transport, types: [.of(TeamNote.self)], configuration: SyncServerTests.quick)
        await #expect(throws: StoppingTransport.Dropped.self) { try await engine.sync() }
        // Five pages, each with its cursor: exactly their objects.
        let firstPart = try await garage.identifiers(of: TeamNote.self)
        #expect(firstPart.count == 5 * pageSize)

        // Edits made while the download is stopped: one of a downloaded note, one new note.
        let downloaded = try #require(firstPart.first)
        var edited = try #require(try await garage.retrieve(TeamNote.self, identifier: downloaded))
        edited.body = "edited during the initial sync"
        try await garage.park(edited)
        try await garage.park(TeamNote(id: "local", team: "1", title: "made during the initial sync"))

        transport.stop(after: nil)
        let report = try await engine.sync()
        // Each page was asked once: the resumed download asked after the fifth page, not again.
        let cursors = transport.askedCursors
        #expect(Set(cursors.map { $0 ?? "" }).count == cursors.count)
        #expect(cursors.count == count / pageSize + 1)      // 12 pages, then 1 after the edits went up
        // No object applied twice: the second sync applied the rest, once each.
        let applied = report.downloads.flatMap(\.applied)
        #expect(Set(applied).count == applied.count)
        #expect(applied.filter { $0.hasPrefix("n") }.count >= count - 5 * pageSize)
        let notes = try await SyncServerTests.notes(garage)
        #expect(notes.count == count + 1)
        #expect(notes[downloaded]?.body == "edited during the initial sync")
        #expect(notes["local"] != nil)
        // The edits reached the server.
        _ = try await writer.engine.sync()
        let onWriter = try await SyncServerTests.notes(writer.garage)
        #expect(onWriter[downloaded]?.body == "edited during the initial sync")
        #expect(onWriter["local"] != nil)
    }

    @Test func manyObjectsAreRetrievedByIdentifierInOneCall() async throws {
        let garage = try TestEngine.garage()
        try await garage.parkAll([TeamNote(id: "a", team: "1", title: "A"), TeamNote(id: "c", team: "1", title: "C")])
        let found = try await garage.retrieve(TeamNote.self, identifiers: ["c", "b", "a"])
        #expect(found.map { $0?.title } == ["C", nil, "A"])
        let blocking = try { () throws -> [TeamNote?] in try garage.retrieve(TeamNote.self, identifiers: ["a"]) }()
        #expect(blocking.map { $0?.id } == ["a"])
        // Inside a transaction, its changes are read too.
        try await garage.transaction {
            try await garage.park(TeamNote(id: "b", team: "1", title: "B"))
            #expect(try await garage.retrieve(TeamNote.self, identifiers: ["b"]).map { $0?.title } == ["B"])
        }
    }
}
