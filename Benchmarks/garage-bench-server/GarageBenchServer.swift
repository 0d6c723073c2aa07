import ArgumentParser
import Foundation
import GarageLite
import GarageLiteClient
import GarageLitePostgres
import GarageLiteServer
import Histogram
#if canImport(Hummingbird)
import Hummingbird
import ServiceLifecycle
#endif

/// The sync server's bench (issue 43): SyncServer instances behind Hummingbird on loopback, and
/// devices with SyncEngine and HTTPSyncTransport, in one process. Rows: uploads at 1 and 3
/// instances, a fresh device's download, a first sync among 10,000 other scopes, and an edit's
/// trip from one device to another (polling), p50/p99; the same trip to a device listening
/// through another instance (live push). Issue 44's scale rows (ScaleRows.swift), run only when
/// named: a million objects to a fresh device (`--only million`), a thousand idle live
/// connections (`--only idle`), a hundred devices uploading at once (`--only devices`).
///
///     swift run -c release garage-bench-server                       # SQLite, 100,000 objects
///     swift run -c release garage-bench-server --quick               # 10,000
///     swift run -c release garage-bench-server --only million --objects 100000
///     swift run -c release garage-bench-server --postgres postgres://garage@127.0.0.1:5432/garage
@main
struct GarageBenchServer: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "garage-bench-server", abstract: "Benchmarks the sync server on loopback.")

    @Flag(help: "10,000 objects downloaded and 2,000 uploaded, instead of 100,000 and 20,000.")
    var quick = false

    @Option(help: "A PostgreSQL server's URL: the server's store is a schema of its own there (SQLite files otherwise).")
    var postgres: String?

    @Option(help: "How many edits travel from one device to another.")
    var trips = 200

    @Option(help: "Only these rows (uploads, download, scopes, trips, live; and, only when named, million, idle, devices); repeatable. Default: all but the last three.")
    var only: [String] = []

    @Option(help: "How many objects the million row sends to a fresh device (default 1,000,000; --quick: 100,000).")
    var objects: Int?

    @Option(help: "How many changes a batch of the million row's seeding holds.")
    var seedBatch = 50

    @Option(help: "How many uploads at once seed the million row's server (each to a scope of its own, all the device's).")
    var seedTasks = 1

    @Option(help: "A SQLite file for the million row's server store, kept after the run: seeded when it doesn't exist, reused (unseeded, as it is) when it does. For measuring the sync again without seeding again.")
    var seededStore: String?

    @Option(help: "How many idle live connections the idle row opens.")
    var connections = 1_000

    @Option(help: "How many devices the devices row runs at once.")
    var devices = 100

    @Option(help: "How many seconds the devices row's devices upload.")
    var seconds = 30.0

    @Option(help: "Seconds from one upload of a device of the devices row to its next (default: at once when answered).")
    var pace: Double?

    func run() async throws {
        #if canImport(Hummingbird)
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("garage-bench-server-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let bench = Bench(folder: folder, postgres: postgres)
        let downloads = quick ? 10_000 : 100_000
        let uploads = quick ? 2_000 : 20_000
        // Each row as soon as it is measured (a full run takes minutes).
        func line(_ text: String) { FileHandle.standardOutput.write(Data((text + "\n").utf8)) }     // unbuffered
        func row(_ name: String, _ value: String) { line("| \(name) | \(value) |") }
        line("| garage-bench-server (\(postgres == nil ? "SQLite" : "PostgreSQL"), loopback) | |")
        line("|---|---:|")
        func runs(_ name: String) -> Bool { only.isEmpty || only.contains(name) }
        func named(_ name: String) -> Bool { only.contains(name) }     // the long rows: only when asked for
        if runs("uploads") {
            for instances in [1, 3] {
                let rate = try await bench.uploads(uploads, instances: instances)
                row("uploads, \(instances) instance\(instances == 1 ? "" : "s") (\(uploads) objects)", "\(Int(rate)) objects/s")
            }
        }
        if runs("download") {
            let download = try await bench.download(downloads)
            row("a fresh device downloads \(downloads) objects", "\(Int(download)) objects/s")
        }
        if runs("scopes") {
            let (alone, crowded) = try await bench.firstSyncAmongScopes(others: 10_000, objects: 1_000)
            row("first sync of 1,000 objects, no other scope", String(format: "%.2f s", alone))
            row("first sync of 1,000 objects, 10,000 other scopes", String(format: "%.2f s", crowded))
        }
        if runs("trips") {
            let (p50, p99) = try await bench.trips(trips)
            row("an edit's trip to another device, polling (\(trips) edits)", String(format: "p50 %.1f ms, p99 %.1f ms", p50, p99))
        }
        if runs("live") {
            let (p50, p99) = try await bench.liveTrips(trips)
            row("an edit's trip to a listening device, through 3 instances, live push (\(trips) edits)",
                String(format: "p50 %.1f ms, p99 %.1f ms", p50, p99))
        }
        if named("million") {
            let count = objects ?? (quick ? 100_000 : 1_000_000)
            let result = try await bench.million(count, seedBatch: seedBatch, seedTasks: seedTasks, seededStore: seededStore)
            row("a fresh device syncs \(count) objects, end to end (seeding, untimed: \(String(format: "%.0f", result.seedingSeconds)) s)",
                String(format: "%.0f objects/s (%.1f s); PowerSync publishes 27.6k rows/s into a desktop client", result.rate, result.syncSeconds))
            row("peak RSS during that sync (server and device in one process); RSS before",
                String(format: "%@ MB; %.0f MB", result.peakRSSMB.map { String(format: "%.0f", $0) } ?? "–", result.rssBeforeMB))
        }
        if named("idle") {
            let result = try await bench.idle(connections)
            row("\(connections) idle live connections on one instance (\(result.listeners) listeners counted)",
                String(format: "%.1f KB a connection (RSS %.1f → %.1f MB); PowerSync self-hosted: 200 connections a container, "
                       + "Supabase Realtime: 32k users at p95 28 ms", result.kilobytesPerConnection, result.rssBeforeMB, result.rssAfterMB))
        }
        if named("devices") {
            let result = try await bench.devices(devices, duration: seconds, pace: pace)
            let paced = pace.map { String(format: "a batch every %.1f s each", $0) } ?? "each as soon as answered"
            row("\(devices) devices uploading batches of 50 (\(paced)), 1 instance, \(String(format: "%.0f", result.seconds)) s (\(result.requests) uploads)",
                String(format: "%.0f objects/s, answer p50 %.1f ms, p99 %.1f ms (max %.1f); PowerSync publishes 2–20k operations/s a client",
                       result.rate, result.p50, result.p99, result.max))
        }
        #else
        throw ValidationError("the server bench runs where Hummingbird builds: on Linux")
        #endif
    }
}

#if canImport(Hummingbird)
struct BenchNote: Codable, Identifiable, Syncable, Sendable {
    var id: String
    var scope: String
    var title: String
    var body = "A note of an ordinary length: a sentence or two of text, as a team's notes app would hold."
    var tags = ["work", "draft", "2026"]
    var syncStatus: SyncStatus = .notSynced
}

/// Opens stores and servers for one row, and closes them after it.
struct Bench {
    let folder: URL
    let postgres: String?

    /// A new, empty server store: a file, or a schema of its own.
    func serverStore() throws -> (open: () throws -> Garage, name: String) {
        let name = "s\(UUID().uuidString.prefix(8).lowercased())"
        if let postgres {
            let separator = postgres.contains("?") ? "&" : "?"
            let url = postgres + separator + "schema=bench_\(name)"
            return ({ try Garage(postgresURL: url) }, name)
        }
        let path = folder.appendingPathComponent("\(name).garage").path
        return ({ try Garage(path: path) }, name)
    }

    static let access = SyncAccess(user: "bench", scopes: [])

    static func server(_ garage: Garage) throws -> SyncServer {
        let server = SyncServer(garage: garage)
        try server.serve(BenchNote.self, rules: SyncRules(scope: { $0.scope }))
        return server
    }

    /// Runs `body` with `count` instances serving the store, each its own garage and port.
    func withInstances<T: Sendable>(_ count: Int, store: () throws -> Garage,
                                   _ body: ([URL], [SyncServer]) async throws -> T) async throws -> T {
        var apps: [any Service] = []
        var servers: [SyncServer] = []
        let (ports, continuation) = AsyncStream.makeStream(of: Int.self)
        for _ in 0..<count {
            let server = try Self.server(try store())
            servers.append(server)
            let router = Router()
            // Every token is the list of scopes it reads and writes, separated by commas.
            // The token is the user too: each device of the devices row has its own requests' limit.
            server.addRoutes(to: router) { request, _ in
                guard let header = request.headers[.authorization], header.hasPrefix("Bearer ") else { return nil }
                return SyncAccess(user: String(header.dropFirst(7)), scopes: Set(header.dropFirst(7).split(separator: ",").map(String.init)))
            }
            var app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
                                  onServerRunning: { channel in continuation.yield(channel.localAddress?.port ?? 0) })
            app.logger.logLevel = .error
            apps.append(app)
        }
        let group = ServiceGroup(services: apps, logger: .init(label: "bench"))
        let running = Task { try await group.run() }
        var urls: [URL] = []
        for await port in ports {
            urls.append(URL(string: "http://127.0.0.1:\(port)")!)
            if urls.count == count { break }
        }
        defer { running.cancel() }
        let result = try await body(urls, servers)
        await group.triggerGracefulShutdown()
        _ = await running.result
        return result
    }

    func device(_ server: URL, scopes: [String]) throws -> (Garage, SyncEngine) {
        let garage = try Garage(path: folder.appendingPathComponent("device-\(UUID().uuidString).garage").path)
        let token = scopes.joined(separator: ",")
        let transport = HTTPSyncTransport(servers: [server]) { token }
        return (garage, SyncEngine(garage: garage, transport: transport, types: [.of(BenchNote.self)]))
    }

    /// Syncs until the engine has nothing left to upload or download.
    func syncAll(_ engine: SyncEngine) async throws {
        _ = try await engine.sync()
    }

    /// Objects per second the instances take from devices uploading `count` objects in all, one
    /// device per instance, each in a scope of its own.
    func uploads(_ count: Int, instances: Int) async throws -> Double {
        let store = try serverStore()
        return try await withInstances(instances, store: store.open) { urls, _ in
            var devices: [(Garage, SyncEngine)] = []
            for (index, url) in urls.enumerated() {
                let device = try device(url, scopes: ["team\(index)"])
                try await device.0.parkAll((0..<(count / instances)).map {
                    BenchNote(id: "d\(index)-\($0)", scope: "team\(index)", title: "note \($0)")
                })
                devices.append(device)
            }
            let start = ContinuousClock.now
            try await withThrowingTaskGroup(of: Void.self) { group in
                for device in devices { group.addTask { try await syncAll(device.1) } }
                try await group.waitForAll()
            }
            return Double(count / instances * instances) / seconds(since: start)
        }
    }

    /// Objects per second a fresh device downloads from a server holding `count` objects of its scope.
    func download(_ count: Int) async throws -> Double {
        let store = try serverStore()
        let garage = try store.open()
        try await seed(garage, count: count, scope: "team")
        return try await withInstances(1, store: { garage }) { urls, _ in
            let (device, engine) = try device(urls[0], scopes: ["team"])
            let start = ContinuousClock.now
            try await syncAll(engine)
            let rate = Double(count) / seconds(since: start)
            let received = try await device.count(BenchNote.self)
            guard received == count else { throw ValidationError("the device holds \(received) notes of \(count)") }
            return rate
        }
    }

    /// Parks `count` notes of `scope` through the server's upload, in-process, in batches.
    func seed(_ garage: Garage, count: Int, scope: String, scopes: Int = 1) async throws {
        let server = try Self.server(garage)
        var next = 0
        while next < count {
            let end = min(count, next + 50)       // as an engine uploads: 50 a batch
            let changes = (next..<end).map { index in
                let scope = scopes == 1 ? scope : "\(scope)\(index % scopes)"
                return SyncChange(identifier: "\(scope)-\(index)", object: BenchNote(id: "\(scope)-\(index)", scope: scope, title: "n"), version: nil)
            }
            let access = SyncAccess(user: "seed", scopes: Set(changes.compactMap { $0.object?.scope }))
            _ = try await server.upload(UploadBatch(typeName: "BenchNote", changes: changes), access: access)
            next = end
        }
    }

    /// Seconds a device's first sync of `objects` notes takes on a server without other scopes,
    /// then on one with `others` other scopes of one note each.
    func firstSyncAmongScopes(others: Int, objects: Int) async throws -> (Double, Double) {
        var times: [Double] = []
        for crowd in [0, others] {
            let store = try serverStore()
            let garage = try store.open()
            if crowd > 0 { try await seed(garage, count: crowd, scope: "other", scopes: crowd) }
            try await seed(garage, count: objects, scope: "mine")
            times.append(try await withInstances(1, store: { garage }) { urls, _ in
                let (_, engine) = try device(urls[0], scopes: ["mine"])
                let start = ContinuousClock.now
                try await syncAll(engine)
                return seconds(since: start)
            })
        }
        return (times[0], times[1])
    }

    /// p50 and p99, in milliseconds, of the time from a park on one device to the moment
    /// another device, syncing again and again, holds the edit.
    func trips(_ count: Int) async throws -> (Double, Double) {
        let store = try serverStore()
        return try await withInstances(2, store: store.open) { urls, _ in
            let (a, engineA) = try device(urls[0], scopes: ["team"])
            let (b, engineB) = try device(urls[1], scopes: ["team"])
            try await a.park(BenchNote(id: "trip", scope: "team", title: "start"))
            try await syncAll(engineA)
            try await syncAll(engineB)
            return try await percentiles(count) { title in
                try await a.park(BenchNote(id: "trip", scope: "team", title: title))
                try await syncAll(engineA)
                while try await b.retrieve(BenchNote.self, identifier: "trip")?.title != title {
                    try await syncAll(engineB)
                }
            }
        }
    }

    /// p50 and p99, in milliseconds, of `count` runs of `trip`, each given the title of its edit.
    func percentiles(_ count: Int, _ trip: (String) async throws -> Void) async throws -> (Double, Double) {
        var histogram = Histogram<UInt64>(highestTrackableValue: 60_000_000)
        for index in 0..<count {
            let start = ContinuousClock.now
            try await trip("edit \(index)")
            _ = histogram.record(UInt64(seconds(since: start) * 1_000_000))
        }
        return (Double(histogram.valueAtPercentile(50)) / 1_000, Double(histogram.valueAtPercentile(99)) / 1_000)
    }

    /// p50 and p99, in milliseconds, of the time from a park on device A (syncing through
    /// instance 1 of 3) to the moment device B, whose engine runs and listens to instance 3
    /// without polling, holds the edit: the server's news crosses instances through the store.
    func liveTrips(_ count: Int) async throws -> (Double, Double) {
        let store = try serverStore()
        return try await withInstances(3, store: store.open) { urls, _ in
            let (a, engineA) = try device(urls[0], scopes: ["team"])
            let garage = try Garage(path: folder.appendingPathComponent("device-\(UUID().uuidString).garage").path)
            var configuration = SyncEngine.Configuration()
            configuration.pollInterval = nil
            let engineB = SyncEngine(garage: garage, transport: HTTPSyncTransport(servers: [urls[2]]) { "team" },
                                     types: [.of(BenchNote.self)], configuration: configuration)
            let listening = Task { await engineB.run() }
            defer { listening.cancel() }
            while !engineB.status.isListening { try await Task.sleep(nanoseconds: 1_000_000) }
            let result = try await percentiles(count) { title in
                try await a.park(BenchNote(id: "trip", scope: "team", title: title))
                try await syncAll(engineA)
                while try await garage.retrieve(BenchNote.self, identifier: "trip")?.title != title {
                    try await Task.sleep(nanoseconds: 200_000)
                }
            }
            listening.cancel()
            _ = await listening.value
            return result
        }
    }

    func seconds(since start: ContinuousClock.Instant) -> Double {
        let elapsed = ContinuousClock.now - start
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    }
}
#endif
