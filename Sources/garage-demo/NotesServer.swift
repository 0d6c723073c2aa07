import Foundation
import GarageLite
#if canImport(Hummingbird) && !GARAGE_DEMO_IN_PROCESS
import Hummingbird
#endif

/// The server's copy of one note, as its garage stores it: the note (`nil` once deleted, so that
/// the deletion reaches the devices), its version (a counter: the devices send back the version
/// their change is based on), and the sequence number of its last change (where the change
/// feed that downloads read stands).
struct ServerRecord: Codable, Identifiable {
    var id: String
    var note: Note?
    var version: Int
    var sequence: Int
}

/// The server's settings, kept in its garage.
enum ServerSettings: SettingsNamespace {
    static let id = "notes-server"
    /// The sequence number of the last change: the cursor of the change feed.
    static let sequence = SettingsKey<ServerSettings, Int>(id: "sequence", defaultValue: 0)
}

/// The notes server: its state in a garage of its own, and the rules of the sync routes.
///
/// An upload based on another version than the server's current one (another device's change
/// came first) is answered with a conflict and the current note, which the device merges and
/// uploads again. A download returns the notes changed after a cursor, `pageSize` at a time.
///
/// Each request runs whole on the actor: its garage calls are the synchronous ones, so that no
/// other request runs between its reads and its writes, and sequence numbers are monotonic.
actor NotesServer {
    /// The only type the routes serve: the devices' stored type name of `Note`.
    static let typeName = "Note"

    let garage: Garage
    /// How many changes one download returns at most; the devices ask again for the rest.
    let pageSize: Int

    init(garage: Garage, pageSize: Int = 3) {
        self.garage = garage
        self.pageSize = pageSize
    }

    /// Stores the changes of `batch` the server can take, and answers for each.
    func upload(_ batch: UploadBatch<Note>) throws -> UploadResults<Note> {
        var results = UploadResults<Note>()
        try garage.transaction {
            let lastSequence = try garage.value(for: ServerSettings.sequence)
            var sequence = lastSequence
            for change in batch.changes {
                let id = change.identifier
                if let note = change.object, note.title.isEmpty {
                    results[id] = .failed("a note needs a title")
                    continue
                }
                let record = try garage.retrieve(ServerRecord.self, identifier: id)
                // Based on another version than the server's: a conflict, with the server's note.
                if let record, let current = record.note, change.version != String(record.version) {
                    results[id] = .conflict(current, version: String(record.version))
                    continue
                }
                // A deletion of a note the server doesn't have (never had, or deleted already).
                if change.object == nil, record?.note == nil {
                    results[id] = .accepted(version: record.map { String($0.version) })
                    continue
                }
                sequence += 1
                var note = change.object
                note?.syncStatus = .undetermined    // the device's own status (an upload says .syncing)
                let stored = ServerRecord(id: id, note: note, version: (record?.version ?? 0) + 1, sequence: sequence)
                try garage.park(stored)
                // The note is a row of its own (it is `Identifiable`): gone with its deletion.
                if note == nil { try garage.delete(Note.self, identifier: id) }
                results[id] = .accepted(version: String(stored.version))
            }
            if sequence != lastSequence { try garage.set(sequence, for: ServerSettings.sequence) }
        }
        return results
    }

    /// The notes created, changed or deleted after `request.cursor`, oldest change first.
    func download(_ request: DownloadRequest<Note>) throws -> DownloadBatch<Note> {
        let after = request.cursor.flatMap { Int($0) } ?? 0
        let changed = try garage.retrieveAll(ServerRecord.self)
            .filter { $0.sequence > after }
            .sorted { $0.sequence < $1.sequence }
        let page = changed.prefix(pageSize)
        return DownloadBatch(
            changes: page.map { SyncChange(identifier: $0.id, object: $0.note, version: String($0.version)) },
            cursor: String(page.last?.sequence ?? after),
            hasMore: changed.count > page.count)
    }

    /// The notes the server holds now.
    func notes() throws -> [Note] {
        try garage.retrieveAll(ServerRecord.self).compactMap(\.note)
    }

    #if canImport(Hummingbird) && !GARAGE_DEMO_IN_PROCESS
    /// The HTTP application that serves the sync routes on 127.0.0.1, on a port the system
    /// chooses: `onRunning` gets that port once it listens. Run it in a `ServiceGroup`, whose
    /// graceful shutdown stops it.
    ///
    /// - `POST /sync/Note/upload`: an `UploadBatch<Note>`, answered with `UploadResults<Note>`.
    /// - `POST /sync/Note/download`: a `DownloadRequest<Note>`, answered with `DownloadBatch<Note>`.
    nonisolated func application(onRunning: @escaping @Sendable (_ port: Int) async -> Void) -> some ApplicationProtocol {
        let router = Router()
        router.post("sync/{typeName}/upload") { request, context -> Response in
            try Self.checkType(context)
            let batch = try await request.decode(as: UploadBatch<Note>.self, context: context)
            return try context.responseEncoder.encode(try await self.upload(batch), from: request, context: context)
        }
        router.post("sync/{typeName}/download") { request, context -> Response in
            try Self.checkType(context)
            let download = try await request.decode(as: DownloadRequest<Note>.self, context: context)
            return try context.responseEncoder.encode(try await self.download(download), from: request, context: context)
        }
        var app = Application(
            router: router,
            configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { channel in await onRunning(channel.localAddress?.port ?? 0) })
        app.logger.logLevel = .warning     // no line for each request
        return app
    }

    /// Throws "404 Not Found" for a type name the server doesn't sync.
    private static func checkType(_ context: some RequestContext) throws {
        guard context.parameters.get("typeName") == typeName else {
            throw HTTPError(.notFound, message: "this server syncs only \(typeName)")
        }
    }
    #endif
}

/// Where Hummingbird isn't built (see Package.swift): the devices call the server in this process,
/// through the same routes' functions, without HTTP.
struct InProcessTransport: SyncTransport {
    let server: NotesServer

    func upload<Object: Codable>(_ batch: UploadBatch<Object>) async throws -> UploadResults<Object> {
        let notes = try JSONDecoder().decode(UploadBatch<Note>.self, from: JSONEncoder().encode(batch))
        return try JSONDecoder().decode(UploadResults<Object>.self, from: JSONEncoder().encode(try await server.upload(notes)))
    }

    func download<Object: Codable>(_ request: DownloadRequest<Object>) async throws -> DownloadBatch<Object> {
        let answer = try await server.download(DownloadRequest<Note>(typeName: request.typeName, cursor: request.cursor))
        return try JSONDecoder().decode(DownloadBatch<Object>.self, from: JSONEncoder().encode(answer))
    }
}
