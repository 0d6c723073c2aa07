#if canImport(JWTKit) && canImport(Hummingbird)
import Foundation
import GarageLite
import GarageLitePostgres
import GarageLiteServer
import GarageStressModels
import JWTKit
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Issue 44: a new device's first sync of a large scope, killed with SIGKILL in the middle,
/// resumes after the last page it applied: no page applied twice, none skipped, and an edit made
/// between the kill and the restart is kept and uploaded. The device is a process
/// (`garage-stress-worker … server-device`, which only syncs when its stop file is there); the
/// server a `garage-server` process, whose `/metrics` says how many objects it sent.
@Suite("A killed first sync", .serialized, .ownThreads, .acrossProcesses)
struct KilledFirstSyncTests {
    static let count = 2_000
    static let pageSize = 100

    /// How many ServerChaosNotes the device's store holds, read from outside its process
    /// (through `reader`, once the device has created its store).
    static func held(_ path: String, _ reader: inout Garage?) -> Int? {
        if reader == nil {
            // The device creates its store: a file that exists, or (elsewhere) a store it
            // may be creating now, which this process opens once the device has started.
            if TestEngine.hasFiles, !FileManager.default.fileExists(atPath: path) { return nil }
            reader = try? TestEngine.garage(path: path, busyTimeout: 30)
        }
        return try? reader?.count(ServerChaosNote.self)
    }

    @Test(.timeLimit(.minutes(5)))
    func aFirstSyncKilledMidwayResumesWithoutDuplicatesOrGaps() async throws {
        let folder = try TemporaryDirectory()
        let secret = "the killed sync test's secret, thirty-two bytes and more"
        let secretPath = folder.path("secret")
        try Data(secret.utf8).write(to: URL(fileURLWithPath: secretPath))
        let serverPath = folder.path("server.garage")
        let store = TestEngine.location(path: serverPath)

        // The scope's notes, through the server's own upload.
        do {
            let garage = try TestEngine.garage(path: serverPath)
            let server = SyncServer(garage: garage)
            try server.serve(ServerChaosNote.self, rules: SyncRules(scope: { $0.team }))
            for start in stride(from: 0, to: Self.count, by: 500) {
                let changes = (start..<start + 500).map { index in
                    SyncChange(identifier: "n\(index)", object: ServerChaosNote(id: "n\(index)", team: "1", title: "note \(index)", owner: nil),
                               version: nil)
                }
                _ = try await server.upload(UploadBatch(typeName: "ServerChaosNote", changes: changes),
                                            access: SyncAccess(user: "seed", scopes: ["1"]))
            }
        }

        let port = try ServerChaosTests.freePort()
        let instance = ServerChaosTests.Instance(port: port, store: store, secret: secretPath,
                                                 log: URL(fileURLWithPath: folder.path("instance.log")),
                                                 options: ["--page-size", "\(Self.pageSize)"])
        try instance.start()
        defer { instance.process?.kill() }
        let keys = JWTKeyCollection()
        await keys.add(hmac: HMACKey(from: secret), digestAlgorithm: .sha256)
        let token = try await keys.sign(SyncTokensTests.claims("device", scopes: ["1"], expiring: 7_200))
        let device = ServerChaosTests.Device(name: "d", folder: folder, teams: ["1"], token: token, urls: "http://127.0.0.1:\(port)")
        // With the stop file there, the device only syncs, until it has nothing left to move.
        _ = FileManager.default.createFile(atPath: device.stop, contents: nil)
        try device.start()
        defer { device.process?.kill() }

        // Killed once two pages are in: the next one is on its way, or being applied.
        var before = 0
        var reader: Garage?
        for _ in 0..<6_000 {
            before = Self.held(device.store, &reader) ?? 0
            if before >= 2 * Self.pageSize || device.process?.isRunning != true { break }
            try await Task.sleep(for: .milliseconds(5))
        }
        device.process?.kill()
        device.process?.waitUntilExit()
        let applied = try #require(Self.held(device.store, &reader))
        reader = nil
        try #require(applied >= 2 * Self.pageSize && applied < Self.count,
                     "the kill did not land in the middle of the first sync: \(applied) of \(Self.count) notes were in")
        // Whole pages only: a page and its cursor commit together.
        #expect(applied % Self.pageSize == 0, "\(applied) notes: part of a page was applied")

        // An edit while the device is down.
        do {
            let local = try TestEngine.garage(path: device.store)
            var note = try #require(try await local.retrieve(ServerChaosNote.self, identifier: "n3"))
            note.title = "edited between the kill and the restart"
            try await local.park(note)
        }

        try device.start()
        let process = try #require(device.process)
        let log = { (try? String(contentsOf: device.log, encoding: .utf8)) ?? "" }
        try #require(process.wait(timeout: 180) && process.exitedCleanly, "the device: \(log().suffix(3_000))")

        // Every note, once, and the edit on both sides.
        let local = try TestEngine.garage(path: device.store)
        let notes = try await local.retrieveAll(ServerChaosNote.self)
        #expect(notes.count == Self.count)
        #expect(Set(notes.map(\.id)) == Set((0..<Self.count).map { "n\($0)" }))
        #expect(notes.first { $0.id == "n3" }?.title == "edited between the kill and the restart")
        #expect(try await local.syncStatusCounts([.notSynced, .syncing]).isEmpty)

        // What the server sent: every note once, plus at most the page in flight at the kill
        // and the edit's echo. A first sync started again from nothing would send the pages
        // applied before the kill a second time (two or more: 200 notes).
        let (body, _) = try await URLSession.shared.data(from: URL(string: "http://127.0.0.1:\(port)/metrics")!)
        let metrics = String(decoding: body, as: UTF8.self)
        let line = try #require(metrics.split(separator: "\n").first { $0.hasPrefix(#"garage_sync_objects_downloaded_total{type="ServerChaosNote"}"#) })
        let sent = try #require(Int(line.split(separator: " ").last ?? ""))
        #expect(sent >= Self.count && sent <= Self.count + Self.pageSize + 1, "the server sent \(sent) notes for \(Self.count)")

        instance.process?.kill(SIGTERM)
        _ = instance.process?.wait(timeout: 60)
        let server = try TestEngine.garage(path: serverPath)
        #expect(try await server.retrieve(ServerChaosNote.self, identifier: "n3")?.title == "edited between the kill and the restart")
    }
}
#endif
