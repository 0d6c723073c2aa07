import Foundation
@testable import GarageLite

/// The note the sync engine's tests sync. Each side edits its own property (`a` on device A,
/// `b` on device B, `s` on the server), and all of them `shared`: a three-way merge never loses
/// a property only one side changed.
struct EngineNote: Codable, Identifiable, Syncable, Equatable, Sendable {
    var id: String
    var a = ""
    var b = ""
    var s = ""
    var shared = ""
    var tags: [String] = []
    var syncStatus: SyncStatus = .notSynced

    /// The note without what only one store says of it (its status).
    var content: EngineNote {
        var note = self
        note.syncStatus = .synced
        return note
    }
}

/// A server in the test process, with versions, a change log, and scripted misbehaviour.
actor ScriptedServer {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    private(set) var notes: [String: EngineNote] = [:]
    private(set) var versions: [String: Int] = [:]
    private var log: [(sequence: Int, id: String)] = []
    private var sequence = 0
    /// How many times each note was stored from an upload.
    private(set) var stored: [String: Int] = [:]
    /// The download pages a duplicating proxy sent twice, by cursor.
    var repeatedPages: Set<String> = []
    /// How many uploads came, failed ones too.
    private(set) var uploadCalls = 0
    /// The statuses the uploaded notes said.
    private(set) var uploadedStatuses: Set<SyncStatus> = []
    /// The next uploads that fail before doing anything.
    var failingUploads = 0
    /// The next uploads that are applied, then fail (the answer lost on the way).
    var losingAnswers = 0
    /// Notes the server refuses, with a reason.
    var refused: Set<String> = []
    /// How many changes one download returns at most.
    var pageSize = 100
    /// Whether a deleted note keeps its version: an edit based on an older one is a conflict
    /// with the deletion (`conflict(nil, version:)`), as with a note.
    var keepsDeletions = false
    /// Uploads wait until this is open.
    private var gate: CheckedContinuation<Void, Never>?
    private var isGated = false
    private(set) var waitingUploads = 0

    func script(failing: Int = 0, losing: Int = 0, refused: Set<String>? = nil, pageSize: Int? = nil,
                keepsDeletions: Bool? = nil) {
        if let keepsDeletions { self.keepsDeletions = keepsDeletions }
        failingUploads = failing
        losingAnswers = losing
        if let refused { self.refused = refused }
        if let pageSize { self.pageSize = pageSize }
    }

    func closeGate() { isGated = true }

    func openGate() {
        isGated = false
        gate?.resume()
        gate = nil
    }

    private func record(_ id: String) {
        sequence += 1
        log.append((sequence, id))
    }

    private func store(_ note: EngineNote) {
        var note = note
        note.syncStatus = .synced
        notes[note.id] = note
        versions[note.id, default: 0] += 1
        record(note.id)
    }

    /// A change made on the server (by another client): a new version.
    func edit(_ id: String, _ change: (inout EngineNote) -> Void) {
        var note = notes[id] ?? EngineNote(id: id)
        change(&note)
        store(note)
    }

    func delete(_ id: String) {
        guard notes.removeValue(forKey: id) != nil else { return }
        versions[id, default: 0] += 1
        record(id)
    }

    func upload(_ batch: UploadBatch<EngineNote>) async throws -> UploadResults<EngineNote> {
        if isGated {
            waitingUploads += 1
            await withCheckedContinuation { gate = $0 }
            waitingUploads -= 1
        }
        uploadCalls += 1
        if failingUploads > 0 {
            failingUploads -= 1
            throw Failure(description: "the server is unavailable")
        }
        var results = UploadResults<EngineNote>()
        for change in batch.changes {
            let id = change.identifier
            if let status = change.object?.syncStatus { uploadedStatuses.insert(status) }
            if refused.contains(id) {
                results[id] = .failed("refused by the server")
                continue
            }
            // Based on another version than the server's: a conflict, with the server's.
            let current = notes[id] != nil || keepsDeletions ? versions[id].map(String.init) : nil
            if let current, change.version != current {
                results[id] = .conflict(notes[id], version: current)
                continue
            }
            if let note = change.object {
                store(note)
                stored[id, default: 0] += 1
            } else {
                delete(id)
            }
            results[id] = .accepted(version: versions[id].map(String.init))
        }
        if losingAnswers > 0 {
            losingAnswers -= 1
            throw Failure(description: "the connection was lost")
        }
        return results
    }

    func download(after cursor: String?) -> DownloadBatch<EngineNote> {
        let after = cursor.flatMap { Int($0) } ?? 0
        let entries = log.filter { $0.sequence > after }
        let page = entries.prefix(pageSize)
        var changes: [SyncChange<EngineNote>] = [], seen: Set<String> = []
        for entry in page.reversed() where seen.insert(entry.id).inserted {
            changes.append(SyncChange(identifier: entry.id, object: notes[entry.id], version: versions[entry.id].map(String.init)))
        }
        return DownloadBatch(changes: changes.reversed(), cursor: String(page.last?.sequence ?? after),
                             hasMore: entries.count > page.count)
    }
}

/// The transport of a device, in the same process as its server.
struct ScriptedTransport: SyncTransport {
    let server: ScriptedServer

    func upload<Object: Codable>(_ batch: UploadBatch<Object>) async throws -> UploadResults<Object> {
        guard let notes = batch as? UploadBatch<EngineNote> else { throw ScriptedServer.Failure(description: "not a note") }
        return try await server.upload(notes) as! UploadResults<Object>
    }

    func download<Object: Codable>(_ request: DownloadRequest<Object>) async throws -> DownloadBatch<Object> {
        await server.download(after: request.cursor) as! DownloadBatch<Object>
    }
}

/// Waits until `condition` holds, checking every 10 ms, for at most `seconds` (a bound on a
/// hang, not a measure of speed): whether it held. Five minutes: in CI, the whole suite starts
/// at once on two pool threads, and an engine's first steps have waited over two minutes
/// behind the synchronous tests before them.
func eventually(within seconds: Double = 300, _ condition: () async throws -> Bool) async rethrows -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
        if try await condition() { return true }
        try? await Task.sleep(nanoseconds: 10_000_000)
    }
    return try await condition()
}
