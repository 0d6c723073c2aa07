#if canImport(Hummingbird)
import Foundation
import GarageLite
import GarageLiteClient
import GarageLiteServer
import Prometheus
import Testing

/// Issue 44: live changes. A device whose engine runs with the ready transport and no polling
/// hears the server's news of its feeds and downloads at once, from whichever instance of the
/// store made the change; a connection dropped and made again misses nothing (the cursor, not
/// the news, is the truth); a busy server's `Retry-After` is honoured.
@Suite("Live sync")
struct LiveSyncTests {
    typealias TeamNote = SyncServerTests.TeamNote
    typealias RunningServer = SyncServerHTTPTests.RunningServer

    /// Waits until `condition` holds, checking every 20 ms, for at most `seconds` (a bound on a
    /// hang, not a measure of speed).
    static func eventually(_ seconds: Double = 30, _ condition: () async throws -> Bool) async throws -> Bool {
        let end = Date().addingTimeInterval(seconds)
        while Date() < end {
            if try await condition() { return true }
            try await Task.sleep(nanoseconds: 20_000_000)
        }
        return try await condition()
    }

    /// Two instances of one server store (two garages on one file, or one schema), each
    /// serving the routes on loopback.
    struct Deployment {
        let directory: TemporaryDirectory
        let servers: [SyncServer]
        let running: [RunningServer]

        /// Heartbeats every 0.2 s: a listener gone is noticed at the next one.
        static var limits: SyncServer.Limits {
            var limits = SyncServer.Limits()
            limits.heartbeat = 0.2
            return limits
        }

        init(instances: Int = 2, limits: SyncServer.Limits = Deployment.limits, metrics: PrometheusCollectorRegistry? = nil) async throws {
            directory = try TemporaryDirectory()
            let path = directory.path("server.garage")
            var servers: [SyncServer] = [], running: [RunningServer] = []
            for _ in 0..<instances {
                let server = SyncServer(garage: try TestEngine.garage(path: path), limits: limits,
                                        metrics: metrics.map { PrometheusMetricsFactory(registry: $0) })
                try server.serve(TeamNote.self, rules: SyncServerTests.rules)
                servers.append(server)
                running.append(try await RunningServer(server, tokens: SyncServerHTTPTests.tokens))
            }
            self.servers = servers
            self.running = running
        }

        func stop() async {
            for server in running { await server.stop() }
        }
    }

    /// A device that syncs with `run()`, through the ready transport to `urls`, never polling.
    static func device(_ urls: [URL]) throws -> (Garage, SyncEngine) {
        let garage = try TestEngine.garage()
        var configuration = SyncEngineTests.quick
        configuration.pollInterval = nil
        let transport = HTTPSyncTransport(servers: urls) { "token-1" }
        return (garage, SyncEngine(garage: garage, transport: transport, types: [.of(TeamNote.self)], configuration: configuration))
    }

    @Test func aChangeMadeThroughOneInstanceReachesADeviceListeningToAnother() async throws {
        let deployment = try await Deployment()
        let (a, engineA) = try Self.device([deployment.running[0].url])
        let (b, engineB) = try Self.device([deployment.running[1].url])
        let listening = Task { await engineB.run() }
        defer { listening.cancel() }
        #expect(try await Self.eventually { engineB.status.isListening })
        #expect(deployment.servers[1].listeners == 1)
        try await a.park(TeamNote(id: "n1", team: "1", title: "from A"))
        _ = try await engineA.sync()
        // B never polls: only the news from instance 1 (made through instance 0) brings it.
        #expect(try await Self.eventually { try await b.retrieve(TeamNote.self, identifier: "n1") != nil })
        listening.cancel()
        _ = await listening.value
        // The server lets the listener go at its next heartbeat.
        #expect(try await Self.eventually { deployment.servers[1].listeners == 0 })
        await deployment.stop()
    }

    @Test func aDeviceThatLostItsConnectionGetsWhatMovedMeanwhileWhenItConnectsAgain() async throws {
        let deployment = try await Deployment()
        let (a, engineA) = try Self.device([deployment.running[0].url])
        // B listens to instance 1, then to instance 0 once instance 1 is gone.
        let (b, engineB) = try Self.device([deployment.running[1].url, deployment.running[0].url])
        let listening = Task { await engineB.run() }
        defer { listening.cancel() }
        #expect(try await Self.eventually { engineB.status.isListening })
        // Instance 1 stops: B's connection drops; A's changes meanwhile send B no news.
        await deployment.running[1].stop()
        for index in 0..<5 { try await a.park(TeamNote(id: "n\(index)", team: "1", title: "while B was away")) }
        _ = try await engineA.sync()
        // B connects to instance 0 (after its backoff), and downloads what it missed. Within 2
        // minutes, not 30 s: in the PostgreSQL pass of a loaded 2-core machine (CI's), B took
        // longer than 30 s twice (not yet explained; likely a request that met instance 1 as it
        // stopped, waiting out its timeout, 45 s for the live connection, then the backoff); alone
        // it takes 2 s. What is asserted is that B gets every change, not how soon.
        #expect(try await Self.eventually(120) { try await b.retrieveAll(TeamNote.self).count == 5 })
        // And listens again once its download ends (it may still be downloading when the notes are in).
        #expect(try await Self.eventually(120) { engineB.status.isListening })
        listening.cancel()
        _ = await listening.value
        await deployment.stop()
    }

    @Test func aBusyServerIsAnsweredWithRetryAfterWhichTheTransportReports() async throws {
        var limits = Deployment.limits
        limits.requestsPerUser = 0          // every request of a user is one too many
        limits.retryAfter = 7
        let deployment = try await Deployment(instances: 1, limits: limits)
        let transport = HTTPSyncTransport(servers: [deployment.running[0].url]) { "token-1" }
        let busy = await #expect(throws: SyncServerBusy.self) {
            _ = try await transport.download(DownloadRequest<TeamNote>(typeName: "TeamNote", cursor: nil))
        }
        #expect(busy?.retryAfter == 7)
        // The engine waits what the server asked: its retry date is 7 s away, not its 1 s backoff.
        let (_, engine) = try Self.device([deployment.running[0].url])
        let started = Date()
        let running = Task { await engine.run() }
        defer { running.cancel() }
        #expect(try await Self.eventually { engine.status.retryDate != nil })
        // From before the engine ran: however long the test took to look, the date is 7 s after the refusal.
        let wait = try #require(engine.status.retryDate).timeIntervalSince(started)
        #expect(wait > 5)
        running.cancel()
        _ = await running.value
        await deployment.stop()
    }

    @Test func theMetricsCountWhatTheServerDid() async throws {
        let registry = PrometheusCollectorRegistry()
        var limits = Deployment.limits
        limits.requests = 1_000
        let deployment = try await Deployment(instances: 1, limits: limits, metrics: registry)
        let (a, engine) = try Self.device([deployment.running[0].url])
        try await a.parkAll((0..<3).map { TeamNote(id: "m\($0)", team: "1", title: "counted") })
        _ = try await engine.sync()
        // A refused request: an unknown token.
        let stranger = HTTPSyncTransport(servers: [deployment.running[0].url]) { "forged" }
        await #expect(throws: HTTPSyncTransport.StatusError.self) {
            _ = try await stranger.download(DownloadRequest<TeamNote>(typeName: "TeamNote", cursor: nil))
        }
        let text = registry.emitToString()
        #expect(text.contains(#"garage_sync_objects_uploaded_total{type="TeamNote",result="accepted"} 3"#))
        #expect(text.contains(#"garage_sync_objects_downloaded_total{type="TeamNote"} 3"#))
        #expect(text.contains(#"garage_sync_requests_total{route="upload",status="200"} 1"#))
        #expect(text.contains(#"garage_sync_requests_total{route="download",status="401"} 1"#))
        #expect(text.contains("garage_sync_requests_in_progress 0"))
        // The store's pool of connections, on PostgreSQL (SQLite keeps none).
        if TestEngine.isPostgres {
            #expect(text.contains("garage_store_connections_in_use "))
            #expect(text.contains("garage_store_connections_open "))
            #expect(text.contains("garage_store_connections_maximum "))
        } else {
            #expect(!text.contains("garage_store_connections"))
        }
        // Nothing of the objects is in the metrics.
        #expect(!text.contains("counted") && !text.contains("m0"))
        await deployment.stop()
    }
}
#endif
