#if canImport(Hummingbird)
import Foundation
import GarageLite
import GarageLiteClient
import GarageLiteServer
import Hummingbird
import ServiceLifecycle
import Testing

/// Issue 43: the server's routes in a Hummingbird app on loopback, and devices whose engines
/// use the ready `HTTPSyncTransport` (0 lines of transport): tokens, refusals, and a server list
/// whose first instance is down.
@Suite("Sync server over HTTP")
struct SyncServerHTTPTests {
    typealias TeamNote = SyncServerTests.TeamNote

    /// A running app serving `server`'s routes on 127.0.0.1; stopped by `stop()`.
    final class RunningServer: Sendable {
        let url: URL
        private let group: ServiceGroup
        private let task: Task<Void, any Error>

        init(_ server: SyncServer, tokens: [String: SyncAccess]) async throws {
            let router = Router()
            server.addRoutes(to: router) { request, _ in
                guard let header = request.headers[.authorization], header.hasPrefix("Bearer ") else { return nil }
                return tokens[String(header.dropFirst(7))]
            }
            let (ports, continuation) = AsyncStream.makeStream(of: Int.self)
            var app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
                                  onServerRunning: { channel in continuation.yield(channel.localAddress?.port ?? 0) })
            app.logger.logLevel = .warning
            let group = ServiceGroup(services: [app], logger: app.logger)
            self.group = group
            task = Task {
                defer { continuation.finish() }
                try await group.run()
            }
            let port = await ports.first { _ in true } ?? 0
            url = URL(string: "http://127.0.0.1:\(port)")!
        }

        func stop() async {
            await group.triggerGracefulShutdown()
            _ = await task.result
        }
    }

    static let tokens = ["token-1": SyncAccess(user: "ada", scopes: ["team:1"]), "token-2": SyncAccess(user: "bob", scopes: ["team:2"])]

    @Test func devicesSyncThroughTheRoutesWithTheReadyTransport() async throws {
        let server = try SyncServerTests.server(try TestEngine.garage(), pageSize: 2)
        let running = try await RunningServer(server, tokens: Self.tokens)
        defer { Task { await running.stop() } }
        // The first server of the list can't be reached: the transport goes on to the next.
        let servers = [URL(string: "http://127.0.0.1:1")!, running.url]
        func device(_ token: String) throws -> (Garage, SyncEngine) {
            let garage = try TestEngine.garage()
            let transport = HTTPSyncTransport(servers: servers) { token }
            return (garage, SyncEngine(garage: garage, transport: transport, types: [.of(TeamNote.self)],
                                       configuration: SyncEngineTests.quick))
        }
        let (a, engineA) = try device("token-1")
        let (b, engineB) = try device("token-1")
        for index in 0..<5 { try await a.park(TeamNote(id: "n\(index)", team: "1", title: "note \(index)")) }
        _ = try await engineA.sync()
        _ = try await engineB.sync()
        #expect(try await b.retrieveAll(TeamNote.self).count == 5)
        // Another team's token reads none of them.
        let (c, engineC) = try device("token-2")
        _ = try await engineC.sync()
        #expect(try await c.retrieveAll(TeamNote.self).isEmpty)
        await running.stop()
    }

    @Test func aRequestWithoutAnAcceptedTokenIsRefusedAndReadsNothing() async throws {
        let garage = try TestEngine.garage()
        let server = try SyncServerTests.server(garage)
        let running = try await RunningServer(server, tokens: Self.tokens)
        for token in [nil, "forged", "token-10", "Token-1"] as [String?] {
            let transport = HTTPSyncTransport(servers: [running.url]) { token }
            let error = await #expect(throws: HTTPSyncTransport.StatusError.self) {
                _ = try await transport.download(DownloadRequest<TeamNote>(typeName: "TeamNote", cursor: nil))
            }
            #expect(error?.status == 401)
            await #expect(throws: HTTPSyncTransport.StatusError.self) {
                _ = try await transport.upload(UploadBatch(typeName: "TeamNote", changes: [
                    SyncChange(identifier: "x", object: TeamNote(id: "x", team: "1"), version: nil)]))
            }
        }
        #expect(try await garage.retrieveAll(TeamNote.self).isEmpty)
        // A type the server doesn't serve, and a body that isn't the call's JSON.
        let transport = HTTPSyncTransport(servers: [running.url]) { "token-1" }
        let unknown = await #expect(throws: HTTPSyncTransport.StatusError.self) {
            _ = try await transport.download(DownloadRequest<TeamNote>(typeName: "Secret", cursor: nil))
        }
        #expect(unknown?.status == 404)
        await running.stop()
    }
}
#endif
