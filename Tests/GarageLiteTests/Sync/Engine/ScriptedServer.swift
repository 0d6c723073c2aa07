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
    /// The server's version: 0 until the server stores it.
    var version = 0
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
    private var log: [(sequence: Int, id: String)] = []
    private var sequence = 0
    /// How many times each note was stored from an upload.
    private(set) var stored: [String: Int] = [:]
    /// The next uploads that fail before doing anything.
    var failingUploads = 0
    /// The next uploads that are applied, then fail (the answer lost on the way).
    var losingAnswers = 0
    /// Notes the server refuses, with a reason.
    var refused: Set<String> = []
    /// How many changes one download returns at most.
    var pageSize = 100
    /// Uploads wait until this is open.
    private var gate: CheckedContinuation<Void, Never>?
    private var isGated = false
    private(set) var waitingUploads = 0

    func script(failing: Int = 0, losing: Int = 0, refused: Set<String>? = nil, pageSize: Int? = nil) {
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

    /// A change made on the server (by another client): a new version.
    func edit(_ id: String, _ change: (inout EngineNote) -> Void) {
        var note = notes[id] ?? EngineNote(id: id)
        change(&note)
        note.version += 1
        note.syncStatus = .synced
        notes[id] = note
        record(id)
    }

    func delete(_ id: String) {
        guard notes.removeValue(forKey: id) != nil else { return }
        record(id)
    }

    func upload(_ batch: UploadBatch<EngineNote>) async throws -> UploadResults<EngineNote> {
        if isGated {
            waitingUploads += 1
            await withCheckedContinuation { gate = $0 }
            waitingUploads -= 1
        }
        if failingUploads > 0 {
            failingUploads -= 1
            throw Failure(description: "the server is unavailable")
        }
        var results = UploadResults<EngineNote>()
        for note in batch.objects {
            if refused.contains(note.id) {
                results[note.id] = .failed("refused by the server")
                continue
            }
            let current = notes[note.id]
            if let current, current.version != note.version {
                results[note.id] = .conflict(current)
                continue
            }
            var new = note
            new.version = (current?.version ?? 0) + 1
            new.syncStatus = .synced
            notes[note.id] = new
            stored[note.id, default: 0] += 1
            record(note.id)
            results[note.id] = .accepted(new)
        }
        for (id, deleted) in zip(batch.deletions, batch.deletedVersions) {
            if let current = notes[id], let deleted, deleted.version != current.version {
                results[id] = .conflict(current)     // deleted an older version: the edit wins
                continue
            }
            delete(id)
            results[id] = .accepted(nil)
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
        var objects: [EngineNote] = [], deletions: [String] = [], seen: Set<String> = []
        for entry in page.reversed() where seen.insert(entry.id).inserted {
            if let note = notes[entry.id] { objects.append(note) } else { deletions.append(entry.id) }
        }
        return DownloadBatch(objects: objects.reversed(), deletions: deletions,
                             cursor: String(page.last?.sequence ?? after), hasMore: entries.count > page.count)
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
        try await server.download(after: request.cursor) as! DownloadBatch<Object>
    }
}

/// Waits until `condition` holds, checking every 10 ms, for at most `seconds` (a bound on a
/// hang, not a measure of speed): whether it held.
func eventually(within seconds: Double = 20, _ condition: () async throws -> Bool) async rethrows -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
        if try await condition() { return true }
        try? await Task.sleep(nanoseconds: 10_000_000)
    }
    return try await condition()
}
