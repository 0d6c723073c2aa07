import Foundation
import Testing
@testable import GarageLite

/// Issue 26: the ready sync engine, against a server in the test process that versions its
/// notes and misbehaves on cue.
@Suite("The sync engine")
struct SyncEngineTests {
    let directory: TemporaryDirectory
    let server = ScriptedServer()

    init() throws {
        directory = try TemporaryDirectory()
    }

    func device(_ name: String = "device", configuration: SyncEngine.Configuration = Self.quick,
                merge: SyncMerge<EngineNote> = .fields()) throws -> (Garage, SyncEngine) {
        let garage = try TestEngine.garage(path: directory.path("\(name).garage"))
        let engine = SyncEngine(garage: garage, transport: ScriptedTransport(server: server),
                                types: [.of(EngineNote.self, merge: merge)], configuration: configuration)
        return (garage, engine)
    }

    /// No waiting between retries: every sync takes what failed before.
    static var quick: SyncEngine.Configuration {
        var configuration = SyncEngine.Configuration()
        configuration.retryAfter = 0
        configuration.debounce = 0.02
        configuration.pollInterval = nil
        return configuration
    }

    @Test func uploadsDownloadsAndKeepsItsCursor() async throws {
        let (garage, engine) = try device()
        try await garage.parkAll([EngineNote(id: "n1", a: "one"), EngineNote(id: "n2", a: "two")])
        let first = try await engine.sync()
        #expect(first.synced.sorted() == ["n1", "n2"])
        #expect(await server.notes["n1"]?.a == "one")
        // The server's version is what the device's note is based on.
        #expect(try await garage.metadata(EngineNote.self, identifier: "n1")?.serverVersion == "1")
        #expect(try await garage.count(EngineNote.self, withStatus: .synced) == 2)

        await server.edit("n3") { $0.s = "from the server" }
        await server.delete("n2")
        let second = try await engine.sync()
        #expect(try await garage.retrieve(EngineNote.self, identifier: "n3")?.s == "from the server")
        #expect(try await garage.retrieve(EngineNote.self, identifier: "n2") == nil)
        #expect(second.uploads.isEmpty)
        // The cursor is in the store: nothing comes twice.
        let third = try await engine.sync()
        #expect(third.downloads.flatMap(\.applied).isEmpty)
        #expect(engine.status.lastError == nil && engine.status.lastSync != nil)
    }

    @Test func downloadsPageAfterPage() async throws {
        let (garage, engine) = try device()
        await server.script(pageSize: 3)
        for index in 0..<10 { await server.edit("n\(index)") { $0.s = "\(index)" } }
        try await engine.sync()
        #expect(try await garage.count(EngineNote.self) == 10)
    }

    @Test func aRefusedObjectIsRetriedAloneThenHeld() async throws {
        let (garage, engine) = try device()
        await server.script(refused: ["bad"])
        try await garage.parkAll([EngineNote(id: "good"), EngineNote(id: "bad")])
        let report = try await engine.sync()
        #expect(report.synced == ["good"])
        #expect(report.refused == [ObjectKey(typeName: "EngineNote", identifier: "bad"): "refused by the server"])
        #expect(engine.status.refused == report.refused)
        #expect(engine.status.description == "idle, 1 refused")
        // What the server got says nothing of the device's status.
        #expect(await server.uploadedStatuses == [.undetermined])
        for _ in 1..<garage.maximumUploadAttempts { try await engine.sync() }
        let held = try #require(engine.status.held["EngineNote"])
        #expect(held.map(\.identifier) == ["bad"])
        #expect(held.first?.lastError == "refused by the server")
        #expect(engine.status.description.contains("1 held"))
    }

    /// A pending change that can't be decoded is left as it is, and named in the report and
    /// the status; the rest syncs. The last report is in the status too, with its conflicts.
    @Test func anUnreadableChangeIsNamedAndTheLastReportIsInTheStatus() async throws {
        let (garage, engine) = try device()
        try await garage.park(EngineNoteOfAnotherShape(id: "odd", a: 42))
        try await garage.park(EngineNote(id: "n1", a: "fine"))
        let report = try await engine.sync()
        #expect(report.synced == ["n1"])
        let odd = ObjectKey(typeName: "EngineNote", identifier: "odd")
        #expect(report.unreadable[odd] != nil)
        #expect(engine.status.unreadable[odd] != nil)
        #expect(engine.status.description.contains("1 unreadable"))
        #expect(engine.status.lastReport == report)
    }

    @Test func aFailedUploadGivesTheBatchBackAndTheNextSyncSendsIt() async throws {
        let (garage, engine) = try device()
        await server.script(failing: 1)
        try await garage.park(EngineNote(id: "n1", a: "one"))
        await #expect(throws: ScriptedServer.Failure.self) { try await engine.sync() }
        #expect(engine.status.lastError == "the server is unavailable")
        // Given back as it was: an outage counts against no object.
        #expect(try await garage.metadata(EngineNote.self, identifier: "n1")?.syncStatus == .notSynced)
        #expect(try await garage.metadata(EngineNote.self, identifier: "n1")?.attempts == 0)
        try await engine.sync()
        #expect(engine.status.lastError == nil)
        #expect(await server.notes["n1"]?.a == "one")
    }

    /// The server stored the batch, but its answer was lost: the next upload conflicts with the
    /// server's version of the device's own edit, merges, and ends as one version, the edit
    /// stored once more at most, nothing duplicated.
    @Test func anAnswerLostAfterTheServerStoredTheBatch() async throws {
        let (garage, engine) = try device()
        await server.script(losing: 1)
        try await garage.park(EngineNote(id: "n1", a: "one", tags: ["x"]))
        await #expect(throws: ScriptedServer.Failure.self) { try await engine.sync() }
        try await engine.sync()
        let local = try #require(try await garage.retrieve(EngineNote.self, identifier: "n1"))
        let remote = try #require(await server.notes["n1"])
        #expect(local.content == remote.content)
        #expect(remote.tags == ["x"] && remote.a == "one")
        #expect(local.syncStatus == .synced)
        // The server's version of the device's own edit is taken as it is: not uploaded again.
        #expect(await server.stored["n1"] == 1)
    }

    @Test func conflictsMergeThreeWaysAndReportWhatThePolicyDropped() async throws {
        let (garage, engine) = try device()
        try await garage.park(EngineNote(id: "n1", a: "a0", shared: "s0"))
        try await engine.sync()
        // Both sides change their own property: both kept, nothing dropped.
        var note = try #require(try await garage.retrieve(EngineNote.self, identifier: "n1"))
        note.a = "a1"
        try await garage.park(note)
        await server.edit("n1") { $0.s = "s1" }
        var report = try await engine.sync()
        var merged = try #require(try await garage.retrieve(EngineNote.self, identifier: "n1"))
        #expect(merged.a == "a1" && merged.s == "s1")
        #expect(report.conflicts.allSatisfy { $0.discardedFields.isEmpty })
        #expect(await server.notes["n1"]?.content == merged.content)
        // Both change `shared`: the local edit wins (it is written last), and the report says so.
        note = merged
        note.shared = "local"
        try await garage.park(note)
        await server.edit("n1") { $0.shared = "server" }
        report = try await engine.sync()
        merged = try #require(try await garage.retrieve(EngineNote.self, identifier: "n1"))
        #expect(merged.shared == "local")
        #expect(report.conflicts.map(\.discardedFields).contains(["shared"]))
        #expect(await server.notes["n1"]?.content == merged.content)
    }

    @Test func aServerWinsPolicy() async throws {
        let (garage, engine) = try device(merge: .fields(bothChanged: .serverWins))
        try await garage.park(EngineNote(id: "n1", shared: "s0"))
        try await engine.sync()
        var note = try #require(try await garage.retrieve(EngineNote.self, identifier: "n1"))
        note.shared = "local"
        note.a = "mine"
        try await garage.park(note)
        await server.edit("n1") { $0.shared = "server" }
        try await engine.sync()
        let merged = try #require(try await garage.retrieve(EngineNote.self, identifier: "n1"))
        #expect(merged.shared == "server" && merged.a == "mine")
        #expect(await server.notes["n1"]?.content == merged.content)
    }

    /// An edit made while its object's upload is in flight is based on that upload: it is not
    /// merged against the version before it (which would see the upload's changes as the
    /// server's, and the edit's as conflicting with them).
    @Test func anEditDuringTheUploadIsBasedOnTheUpload() async throws {
        let (garage, engine) = try device()
        try await garage.park(EngineNote(id: "n1", tags: ["x"]))
        try await engine.sync()
        var note = try #require(try await garage.retrieve(EngineNote.self, identifier: "n1"))
        note.tags.append("y")
        try await garage.park(note)
        await server.closeGate()
        let sync = Task { try await engine.sync() }
        #expect(await eventually { await server.waitingUploads == 1 })
        note.tags.append("z")                      // during the upload of [x, y]
        try await garage.park(note)
        await server.openGate()
        let report = try await sync.value
        #expect(report.conflicts.allSatisfy { $0.discardedFields.isEmpty })
        let local = try #require(try await garage.retrieve(EngineNote.self, identifier: "n1"))
        #expect(local.tags == ["x", "y", "z"])
        #expect(await server.notes["n1"]?.tags == ["x", "y", "z"])
        #expect(local.syncStatus == .synced)
    }

    @Test func deletionsGoBothWaysAndAnEditWinsOverADeletionOfAnOlderVersion() async throws {
        let (garage, engine) = try device()
        try await garage.parkAll([EngineNote(id: "gone"), EngineNote(id: "kept")])
        try await engine.sync()
        try await garage.delete(EngineNote.self, identifier: "gone")
        try await engine.sync()
        #expect(await server.notes["gone"] == nil)
        // The device deletes "kept", which another client edited meanwhile: the server refuses
        // the deletion of an older version, and the edit comes back.
        try await garage.delete(EngineNote.self, identifier: "kept")
        await server.edit("kept") { $0.s = "edited elsewhere" }
        try await engine.sync()
        #expect(try await garage.retrieve(EngineNote.self, identifier: "kept")?.s == "edited elsewhere")
        #expect(await server.notes["kept"]?.s == "edited elsewhere")
    }

    /// The server deleted a note the device edited meanwhile, and keeps the deletion's version:
    /// the edit wins, uploaded again as based on the deletion, which the server takes.
    @Test func anEditOfANoteTheServerDeletedIsUploadedOverTheDeletion() async throws {
        let (garage, engine) = try device()
        await server.script(keepsDeletions: true)
        try await garage.park(EngineNote(id: "n1", a: "first"))
        try await engine.sync()
        await server.delete("n1")
        var note = try #require(try await garage.retrieve(EngineNote.self, identifier: "n1"))
        note.a = "edited offline"
        try await garage.park(note)
        let report = try await engine.sync()
        #expect(report.conflicts.contains { $0.object.identifier == "n1" && $0.resolution == .keptLocal })
        #expect(await server.notes["n1"]?.a == "edited offline")
        let metadata = try #require(try await garage.metadata(EngineNote.self, identifier: "n1"))
        #expect(metadata.syncStatus == .synced && metadata.attempts == 0)
        #expect(metadata.serverVersion == (await server.versions["n1"]).map(String.init))
    }

    /// The server answers after the sync was cancelled: the claim completes (the server has
    /// the upload), then the sync stops.
    @Test func anAnswerAfterCancellationCompletesTheClaim() async throws {
        let (garage, engine) = try device()
        try await garage.park(EngineNote(id: "n1", a: "one"))
        await server.closeGate()
        let sync = Task { try await engine.sync() }
        #expect(await eventually { await server.waitingUploads == 1 })
        sync.cancel()
        await server.openGate()
        await #expect(throws: CancellationError.self) { try await sync.value }
        #expect(try await garage.metadata(EngineNote.self, identifier: "n1")?.syncStatus == .synced)
        #expect(try await garage.metadata(EngineNote.self, identifier: "n1")?.attempts == 0)
    }

    /// A transport that gives up when cancelled: the batch goes back as it was, no failure counted.
    @Test func aCancelledUploadGivesTheBatchBackWithoutAFailure() async throws {
        let garage = try TestEngine.garage(path: directory.path("cancel.garage"))
        let engine = SyncEngine(garage: garage, transport: HangingTransport(), types: [.of(EngineNote.self)])
        try await garage.park(EngineNote(id: "n1"))
        let sync = Task { try await engine.sync() }
        #expect(try await eventually { try await garage.count(EngineNote.self, withStatus: .syncing) == 1 })
        sync.cancel()
        await #expect(throws: CancellationError.self) { try await sync.value }
        let metadata = try #require(try await garage.metadata(EngineNote.self, identifier: "n1"))
        #expect(metadata.syncStatus == .notSynced && metadata.attempts == 0 && metadata.claimDate == nil)
        #expect(engine.status.lastError == nil)
    }

    @Test func runSyncsTheChangesItObserves() async throws {
        let (garage, engine) = try device()
        let running = Task { await engine.run() }
        defer { running.cancel() }
        try await garage.park(EngineNote(id: "n1", a: "observed"))
        #expect(await eventually { await server.notes["n1"]?.a == "observed" })
        #expect(try await eventually { try await garage.count(EngineNote.self, withStatus: .synced) == 1 })
        var updates = engine.statusUpdates().makeAsyncIterator()
        #expect(await updates.next() != nil)
        running.cancel()
        await running.value
    }

    /// Two engines on two garages of one file, syncing at once: each note is uploaded once.
    @Test func twoEnginesShareTheWork() async throws {
        let (first, firstEngine) = try device("shared")
        let (_, secondEngine) = try device("shared")
        try await first.parkAll((0..<120).map { EngineNote(id: "n\($0)", a: "\($0)") })
        async let one = firstEngine.sync()
        async let two = secondEngine.sync()
        let reports = try await [one, two]
        #expect(Set(reports.flatMap(\.synced)).count == 120)
        #expect(await server.stored.values.allSatisfy { $0 == 1 })
        #expect(await server.notes.count == 120)
    }

    /// One engine of a store downloads a type at a time: while another holds the download's
    /// lock, an engine leaves the download to it; a lock whose process ended, or whose lease
    /// ran out, is taken.
    @Test func oneEngineDownloadsATypeAtATime() async throws {
        let (garage, engine) = try device()
        await server.edit("n1") { $0.s = "from the server" }
        let lock = "sync-engine download EngineNote"
        let other = ClaimOwner.current.claimText()           // a live holder: this process, another engine
        #expect(try await garage.run(garage.store.takingLock(lock, owner: other, at: Date(), staleBefore: .distantPast)))
        try await engine.sync()
        #expect(try await garage.retrieve(EngineNote.self, identifier: "n1") == nil)
        try await garage.run(garage.store.releasingLock(lock, owner: other))
        try await engine.sync()
        #expect(try await garage.retrieve(EngineNote.self, identifier: "n1")?.s == "from the server")
        // A holder whose process ended: its lock is taken at once.
        let dead = ClaimOwner(processID: 999_999_999, startTime: 1, host: ClaimOwner.current.host).claimText()
        #expect(try await garage.run(garage.store.takingLock(lock, owner: dead, at: Date(), staleBefore: .distantPast)))
        await server.edit("n2") { $0.s = "later" }
        try await engine.sync()
        #expect(try await garage.retrieve(EngineNote.self, identifier: "n2")?.s == "later")
    }

    /// The lease: a working engine renews its claim, so that `releaseStaleClaims(olderThan:)`
    /// (another machine's engine) leaves it.
    @Test func aWorkingEngineRenewsItsClaim() async throws {
        var configuration = Self.quick
        configuration.lease = 0.15
        let (garage, engine) = try device(configuration: configuration)
        try await garage.park(EngineNote(id: "n1"))
        await server.closeGate()
        let sync = Task { try await engine.sync() }
        #expect(await eventually { await server.waitingUploads == 1 })
        let claimed = try #require(try await garage.metadata(EngineNote.self, identifier: "n1")?.claimDate)
        #expect(await eventually { (try? await garage.metadata(EngineNote.self, identifier: "n1")?.claimDate).flatMap { $0 }.map { $0 > claimed } ?? false })
        await server.openGate()
        _ = try await sync.value
        #expect(try await garage.metadata(EngineNote.self, identifier: "n1")?.syncStatus == .synced)
    }
}

/// A note of another shape, stored under `EngineNote`'s name: it can't be read as one.
struct EngineNoteOfAnotherShape: Codable, Identifiable, Syncable, StoredTypeNamed {
    static let storedTypeName = "EngineNote"
    static let sharesStoredTypeName = true
    var id: String
    var a: Int
    var syncStatus: SyncStatus = .notSynced
}

/// A transport whose uploads wait until cancelled, then throw `CancellationError`.
struct HangingTransport: SyncTransport {
    func upload<Object: Codable>(_ batch: UploadBatch<Object>) async throws -> UploadResults<Object> {
        while true { try await Task.sleep(nanoseconds: 5_000_000) }
    }

    func download<Object: Codable>(_ request: DownloadRequest<Object>) async throws -> DownloadBatch<Object> {
        DownloadBatch(changes: [], cursor: nil)
    }
}

/// `run()`: syncs by itself, on changes (a deletion alone too), through other garages, after failures.
@Suite("The sync engine's run loop")
struct SyncEngineRunTests {
    let directory: TemporaryDirectory
    let server = ScriptedServer()

    init() throws {
        directory = try TemporaryDirectory()
    }

    /// An engine on `garage`, whose `run()` syncs 20 ms after a change, and never polls.
    func engine(_ garage: Garage) -> SyncEngine {
        var configuration = SyncEngine.Configuration()
        configuration.debounce = 0.02
        configuration.pollInterval = nil
        return SyncEngine(garage: garage, transport: ScriptedTransport(server: server),
                          types: [.of(EngineNote.self)], configuration: configuration)
    }

    /// A deletion alone is uploaded (a count of the objects to upload doesn't show it).
    @Test func aDeletionAloneIsUploaded() async throws {
        let garage = try TestEngine.garage(path: directory.path("run.garage"))
        let engine = engine(garage)
        try await garage.park(EngineNote(id: "n1"))
        try await engine.sync()
        let running = Task { await engine.run() }
        try await garage.delete(EngineNote.self, identifier: "n1")
        #expect(await eventually { await server.notes["n1"] == nil })
        running.cancel()
        await running.value
    }

    /// A failed sync is tried again after a backoff (1 s, then 2 s), until the server answers.
    @Test func aFailedSyncIsRetriedAfterABackoff() async throws {
        let garage = try TestEngine.garage(path: directory.path("backoff.garage"))
        let engine = engine(garage)
        try await garage.park(EngineNote(id: "n1", a: "after two failures"))
        await server.script(failing: 2)
        var statuses = engine.statusUpdates().makeAsyncIterator()
        let running = Task { await engine.run() }
        while let status = await statuses.next(), status.lastSync == nil {}
        #expect(await server.uploadCalls == 3)
        #expect(await server.notes["n1"]?.a == "after two failures")
        #expect(engine.status.lastError == nil && engine.status.retryDate == nil)
        running.cancel()
        await running.value
    }

    /// The app edits through another garage on the same file (another process's, say): the
    /// engine observes its commits, and uploads them.
    @Test func anEditThroughAnotherGarageIsUploaded() async throws {
        let engineGarage = try TestEngine.garage(path: directory.path("shared.garage"))
        let appGarage = try TestEngine.garage(path: directory.path("shared.garage"))
        let engine = engine(engineGarage)
        let running = Task { await engine.run() }
        #expect(await eventually(within: 600) { engine.status.lastSync != nil })   // a first sync behind a full suite
        try await appGarage.park(EngineNote(id: "elsewhere", a: "from the app's garage"))
        #expect(await eventually { await server.notes["elsewhere"]?.a == "from the app's garage" })
        #expect(try await eventually { try await appGarage.metadata(EngineNote.self, identifier: "elsewhere")?.syncStatus == .synced })
        running.cancel()
        await running.value
    }
}

/// A transport behind a proxy that duplicates: each upload reaches the server twice (the device
/// gets the second answer, a conflict with its own first copy), and each download page comes
/// twice (the first time without its cursor).
struct DuplicatingTransport: SyncTransport {
    let server: ScriptedServer

    func upload<Object: Codable>(_ batch: UploadBatch<Object>) async throws -> UploadResults<Object> {
        guard let notes = batch as? UploadBatch<EngineNote> else { throw ScriptedServer.Failure(description: "not a note") }
        _ = try await server.upload(notes)
        return try await server.upload(notes) as! UploadResults<Object>
    }

    func download<Object: Codable>(_ request: DownloadRequest<Object>) async throws -> DownloadBatch<Object> {
        var page = await server.download(after: request.cursor)
        if !page.changes.isEmpty, await server.repeatPage(request.cursor) {
            page.cursor = request.cursor
            page.hasMore = true
        }
        return page as! DownloadBatch<Object>
    }
}

extension ScriptedServer {
    /// Whether the page after `cursor` is to be sent again: once per cursor.
    func repeatPage(_ cursor: String?) -> Bool {
        repeatedPages.insert(cursor ?? "").inserted
    }
}

@Suite("The sync engine behind a duplicating proxy")
struct SyncEngineDuplicateTests {
    @Test func duplicatedRequestsAndAnswersChangeNothing() async throws {
        let directory = try TemporaryDirectory()
        let server = ScriptedServer()
        let garage = try TestEngine.garage(path: directory.path("duplicates.garage"))
        let engine = SyncEngine(garage: garage, transport: DuplicatingTransport(server: server), types: [.of(EngineNote.self)])
        try await garage.parkAll([EngineNote(id: "n1", a: "one", tags: ["x"]), EngineNote(id: "n2", a: "two")])
        let report = try await engine.sync()
        #expect(report.conflicts.allSatisfy { $0.discardedFields.isEmpty })
        await server.edit("n1") { $0.s = "server" }
        try await engine.sync()
        let local = try await garage.retrieveAll(EngineNote.self).map(\.content).sorted { $0.id < $1.id }
        let remote = await server.notes.values.map(\.content).sorted { $0.id < $1.id }
        #expect(local == remote)
        #expect(local.first?.tags == ["x"] && local.first?.s == "server" && local.first?.a == "one")
        #expect(try await garage.count(EngineNote.self, withStatus: .synced) == 2)
        // The conflict with its own copy counted no failure that lasts: the server has the note.
        #expect(try await garage.metadata(EngineNote.self, identifier: "n2")?.attempts == 0)
    }
}
