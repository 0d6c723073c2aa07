import Foundation
@testable import GarageLite

/// The notebook the chaos test syncs: a class, as a view model holds it, not `Revisioned`.
final class ChaosNotebook: Codable, Identifiable, Syncable, @unchecked Sendable {
    var id: String
    var name: String
    var syncStatus: SyncStatus = .notSynced

    init(id: String, name: String) {
        self.id = id
        self.name = name
    }
}

/// The note the chaos test syncs: each side's own property (`a`, `b`, `s` for the server),
/// `shared` that all write, and the notebook it is filed in, a row of its own.
struct ChaosNote: Codable, Identifiable, Syncable, @unchecked Sendable {
    var id: String
    var a = ""
    var b = ""
    var s = ""
    var shared = ""
    var notebook: ChaosNotebook?
    var syncStatus: SyncStatus = .notSynced

    init(id: String, notebook: ChaosNotebook? = nil) {
        self.id = id
        self.notebook = notebook
    }
}

/// A note as the server stores it: the notebook by identifier (a foreign key, not a copy).
struct ServerNote: Equatable, Sendable, CustomStringConvertible {
    var a = "", b = "", s = "", shared = ""
    var notebook: String?

    var description: String { "a=\(a) b=\(b) s=\(s) shared=\(shared) notebook=\(notebook ?? "-")" }
}

/// What travels for a notebook (the JSON of `ChaosNotebook`).
struct WireNotebook: Codable, Sendable {
    var id: String
    var name: String
    var syncStatus: SyncStatus = .undetermined
}

/// What travels for a note (the JSON of `ChaosNote`, its notebook inside).
struct WireNote: Codable, Sendable {
    var id: String
    var a = "", b = "", s = "", shared = ""
    var notebook: WireNotebook?
    var syncStatus: SyncStatus = .undetermined
}

/// A server of notes and notebooks in the test process, with versions, one change log for both
/// types, and scripted misbehaviour (as ``ScriptedServer``). A note names its notebook by
/// identifier; a download sends it with the server's notebook of that identifier inside (none
/// when the server has no such notebook), and a notebook that comes (back) into existence
/// sends the notes that name it again, so that every device reads them in it.
actor ChaosServer {
    static let noteType = "ChaosNote"
    static let notebookType = "ChaosNotebook"

    private(set) var notes: [String: ServerNote] = [:]
    private(set) var notebooks: [String: String] = [:]
    private var versions: [String: Int] = [:]            // by "type/id"
    private var log: [(sequence: Int, type: String, id: String)] = []
    private var sequence = 0
    var failingUploads = 0
    var losingAnswers = 0
    /// Whether a deleted object keeps its version (an edit of an older one is a conflict).
    var keepsDeletions = false

    func script(failing: Int = 0, losing: Int = 0, keepsDeletions: Bool? = nil) {
        failingUploads = failing
        losingAnswers = losing
        if let keepsDeletions { self.keepsDeletions = keepsDeletions }
    }

    private func record(_ type: String, _ id: String) {
        sequence += 1
        log.append((sequence, type, id))
    }

    private func bump(_ type: String, _ id: String) {
        versions["\(type)/\(id)", default: 0] += 1
        record(type, id)
    }

    private func version(_ type: String, _ id: String) -> String? {
        versions["\(type)/\(id)"].map(String.init)
    }

    // MARK: - The server's own changes (another client's)

    func storeNotebook(_ id: String, name: String) {
        let isNew = notebooks[id] == nil
        notebooks[id] = name
        bump(Self.notebookType, id)
        // The notes that name it read it again (a join that found nothing before).
        if isNew { for (noteID, note) in notes.sorted(by: { $0.key < $1.key }) where note.notebook == id { record(Self.noteType, noteID) } }
    }

    func deleteNotebook(_ id: String) {
        guard notebooks.removeValue(forKey: id) != nil else { return }
        bump(Self.notebookType, id)
    }

    func editNote(_ id: String, _ change: (inout ServerNote) -> Void) {
        var note = notes[id] ?? ServerNote()
        change(&note)
        notes[id] = note
        bump(Self.noteType, id)
    }

    func deleteNote(_ id: String) {
        guard notes.removeValue(forKey: id) != nil else { return }
        bump(Self.noteType, id)
    }

    // MARK: - Wire

    private func wireNote(_ id: String) -> WireNote? {
        guard let note = notes[id] else { return nil }
        let notebook = note.notebook.flatMap { nid in notebooks[nid].map { WireNotebook(id: nid, name: $0) } }
        return WireNote(id: id, a: note.a, b: note.b, s: note.s, shared: note.shared, notebook: notebook)
    }

    private func wireNotebook(_ id: String) -> WireNotebook? {
        notebooks[id].map { WireNotebook(id: id, name: $0) }
    }

    func uploadNotes(_ batch: UploadBatch<WireNote>) throws -> UploadResults<WireNote> {
        try upload(batch, type: Self.noteType, current: wireNote) { id, note in
            if let note {
                notes[id] = ServerNote(a: note.a, b: note.b, s: note.s, shared: note.shared, notebook: note.notebook?.id)
                bump(Self.noteType, id)
            } else {
                deleteNote(id)
            }
        }
    }

    func uploadNotebooks(_ batch: UploadBatch<WireNotebook>) throws -> UploadResults<WireNotebook> {
        try upload(batch, type: Self.notebookType, current: wireNotebook) { id, notebook in
            if let notebook { storeNotebook(id, name: notebook.name) } else { deleteNotebook(id) }
        }
    }

    private func upload<Object>(_ batch: UploadBatch<Object>, type: String, current: (String) -> Object?,
                                store: (String, Object?) -> Void) throws -> UploadResults<Object> {
        if failingUploads > 0 {
            failingUploads -= 1
            throw ScriptedServer.Failure(description: "the server is unavailable")
        }
        var results = UploadResults<Object>()
        for change in batch.changes {
            let id = change.identifier
            let object = current(id)
            let serverVersion = object != nil || keepsDeletions ? version(type, id) : nil
            if let serverVersion, change.version != serverVersion {
                results[id] = .conflict(object, version: serverVersion)
                continue
            }
            store(id, change.object)
            results[id] = .accepted(version: version(type, id))
        }
        if losingAnswers > 0 {
            losingAnswers -= 1
            throw ScriptedServer.Failure(description: "the connection was lost")
        }
        return results
    }

    func download<Object: Codable>(_ type: String, after cursor: String?, _ object: (String) -> Object?) -> DownloadBatch<Object> {
        let after = cursor.flatMap { Int($0) } ?? 0
        let entries = log.filter { $0.sequence > after && $0.type == type }
        var changes: [SyncChange<Object>] = [], seen: Set<String> = []
        for entry in entries.reversed() where seen.insert(entry.id).inserted {
            changes.append(SyncChange(identifier: entry.id, object: object(entry.id), version: version(type, entry.id)))
        }
        return DownloadBatch(changes: changes.reversed(), cursor: String(sequence), hasMore: false)
    }

    func downloadNotes(after cursor: String?) -> DownloadBatch<WireNote> { download(Self.noteType, after: cursor, wireNote) }
    func downloadNotebooks(after cursor: String?) -> DownloadBatch<WireNotebook> {
        download(Self.notebookType, after: cursor, wireNotebook)
    }
}

/// A device's transport to a ``ChaosServer``: every call through JSON, as over a network.
struct ChaosTransport: SyncTransport {
    let server: ChaosServer

    private static func convert<In: Encodable, Out: Decodable>(_ value: In, to type: Out.Type) throws -> Out {
        try JSONDecoder().decode(Out.self, from: JSONEncoder().encode(value))
    }

    func upload<Object: Codable>(_ batch: UploadBatch<Object>) async throws -> UploadResults<Object> {
        switch batch.typeName {
        case ChaosServer.noteType:
            return try Self.convert(try await server.uploadNotes(Self.convert(batch, to: UploadBatch<WireNote>.self)),
                                    to: UploadResults<Object>.self)
        case ChaosServer.notebookType:
            return try Self.convert(try await server.uploadNotebooks(Self.convert(batch, to: UploadBatch<WireNotebook>.self)),
                                    to: UploadResults<Object>.self)
        default:
            throw ScriptedServer.Failure(description: "no type \(batch.typeName)")
        }
    }

    func download<Object: Codable>(_ request: DownloadRequest<Object>) async throws -> DownloadBatch<Object> {
        switch request.typeName {
        case ChaosServer.noteType:
            return try Self.convert(await server.downloadNotes(after: request.cursor), to: DownloadBatch<Object>.self)
        case ChaosServer.notebookType:
            return try Self.convert(await server.downloadNotebooks(after: request.cursor), to: DownloadBatch<Object>.self)
        default:
            throw ScriptedServer.Failure(description: "no type \(request.typeName)")
        }
    }
}
