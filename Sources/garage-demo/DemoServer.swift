import Foundation
import GarageLite
import GarageLiteServer
#if canImport(Hummingbird) && !GARAGE_DEMO_IN_PROCESS
import Hummingbird
#endif

/// The demo's server: a `SyncServer` (the `GarageLiteServer` product) on a garage of its own,
/// serving notes. Its rules: every note is in one scope, "notes", which the demo's token grants,
/// and a note needs a title. The versions, the conflicts and the feed are the library's.
struct DemoServer {
    /// The token the devices send, and the only one the server accepts.
    static let token = "demo-token"
    static let access = SyncAccess(user: "demo", scopes: ["notes"])

    let garage: Garage
    let sync: SyncServer

    init(garage: Garage) throws {
        self.garage = garage
        sync = SyncServer(garage: garage, pageSize: 3)
        try sync.serve(Note.self, rules: SyncRules(scope: { _ in "notes" }, validate: { _, note, _ in
            note?.title.isEmpty == true ? "a note needs a title" : nil
        }))
    }

    /// The notes the server holds now.
    func notes() async throws -> [Note] {
        try await garage.retrieveAll(Note.self)
    }

    #if canImport(Hummingbird) && !GARAGE_DEMO_IN_PROCESS
    /// The HTTP application that serves the sync routes on 127.0.0.1, on a port the system
    /// chooses: `onRunning` gets that port once it listens. Run it in a `ServiceGroup`, whose
    /// graceful shutdown stops it.
    func application(onRunning: @escaping @Sendable (_ port: Int) async -> Void) -> some ApplicationProtocol {
        let router = Router()
        sync.addRoutes(to: router) { request, _ in
            request.headers[.authorization] == "Bearer \(Self.token)" ? Self.access : nil
        }
        var app = Application(
            router: router,
            configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { channel in await onRunning(channel.localAddress?.port ?? 0) })
        app.logger.logLevel = .warning     // no line for each request
        return app
    }
    #endif
}

/// Where Hummingbird isn't built (see Package.swift): the devices call the server in this process,
/// with the JSON the routes would carry.
struct InProcessTransport: SyncTransport {
    let server: SyncServer

    func upload<Object: Codable>(_ batch: UploadBatch<Object>) async throws -> UploadResults<Object> {
        let answer = try await server.upload(typeName: batch.typeName, json: JSONEncoder().encode(batch), access: DemoServer.access)
        return try JSONDecoder().decode(UploadResults<Object>.self, from: answer)
    }

    func download<Object: Codable>(_ request: DownloadRequest<Object>) async throws -> DownloadBatch<Object> {
        let answer = try await server.download(typeName: request.typeName, json: JSONEncoder().encode(request), access: DemoServer.access)
        return try JSONDecoder().decode(DownloadBatch<Object>.self, from: answer)
    }
}
