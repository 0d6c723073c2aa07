// The sync job of `swift run garage-demo` (Sources/garage-demo/SyncJob.swift, the same code):
// it uploads the local changes under claims, then downloads the server's, and merges a note
// edited on both sides.

import Foundation
import GarageLite

struct Note: Mappable, Syncable, Equatable {
    var id: String
    var title: String
    var items: [String]
    /// The server's revision this version is based on (0: never uploaded).
    var serverRevision = 0
    var syncStatus: SyncStatus = .notSynced
}

/// Your web service (the demo's is FakeServer.swift).
protocol NotesServer: Sendable {
    /// Stores the notes and deletes the identifiers; returns the notes it rejected, by
    /// identifier: those based on an older revision than its own, as a `NoteConflict`.
    func upload(_ notes: [Note], deleting identifiers: [String]) async throws -> [String: any Error]
    /// The notes changed and the identifiers deleted since `cursor`, and the next cursor.
    func changes(since cursor: Int) async throws -> (notes: [Note], deleted: [String], cursor: Int)
}

/// The server's answer to an edit based on an older revision than its own: its version.
struct NoteConflict: Error, CustomStringConvertible {
    var current: Note
    var description: String { "conflict: the server has revision \(current.serverRevision)" }
}

/// How far the downloads got: a setting, kept in the same garage.
enum NotesSync: SettingsNamespace {
    static let id = "notes-sync"
    static let cursor = SettingsKey<NotesSync, Int>(id: "cursor", defaultValue: 0)
}

/// What one run did.
struct SyncReport {
    var uploads: [ClaimReport] = []          // one per batch
    var rejected: [String: any Error] = [:]  // by the server, as conflicts
    var failure: (any Error)?                // the upload that failed: its batch waits retryAfter
    var downloads: [DownloadReport] = []     // notes parked (with the conflicts), and deleted
    var held: [HeldObject] = []              // failed too often: claims skip them

    /// The conflicts merged so far, to upload.
    var mergedCount: Int { downloads.flatMap(\.conflicts).filter { $0.resolution == .merged }.count }
}

struct SyncJob {
    let garage: Garage
    let server: any NotesServer
    var batchSize = 50
    var retryAfter: TimeInterval = 60       // after a failed or rejected upload
    var staleAfter: TimeInterval = 15 * 60  // a claim older than this belongs to a dead job
    /// A note edited on both sides: the server's version, plus the items only the local one has.
    var onConflict = ConflictResolution<Note>.merge { local, downloaded in
        var merged = downloaded
        merged.items += local.items.filter { !downloaded.items.contains($0) }
        return merged
    }

    /// Uploads the local changes, then downloads the server's.
    func run() async throws -> SyncReport {
        var report = SyncReport()
        try await garage.releaseStaleClaims(olderThan: staleAfter)   // a crashed job's claims
        // A conflict merged by the upload or the download is uploaded by a second round.
        for _ in 1...2 {
            let merged = report.mergedCount
            guard try await upload(&report) else { break }
            try await download(&report)
            if report.mergedCount == merged { break }
        }
        report.held = try await garage.heldObjects(Note.self)
        return report
    }

    /// Uploads batches until none is left; false when an upload failed.
    private func upload(_ report: inout SyncReport) async throws -> Bool {
        while true {
            // The oldest edits, and the deletions: their rows are .syncing, and no other job
            // can claim them until this claim ends.
            let claim = try await garage.claim(Note.self, limit: batchSize)
            if claim.isEmpty { return true }
            let rejected: [String: any Error]
            do {
                rejected = try await server.upload(claim.objects, deleting: claim.deletions)
            } catch {
                // Back to .notSynced, one failed attempt more, not claimed for retryAfter seconds.
                try await garage.release(claim, retryAfter: retryAfter, error: error)
                report.failure = error
                return false
            }
            // .synced, except a note parked again during the upload, and the rejected ones:
            // those stay .notSynced.
            report.uploads.append(try await garage.complete(claim, rejected: rejected, retryAfter: retryAfter))
            report.rejected.merge(rejected) { $1 }
            // A rejected edit is merged with the server's version at once: the change feed
            // may be past it already (the edit was unsaved during a download, say).
            let current = rejected.values.compactMap { ($0 as? NoteConflict)?.current }
            if !current.isEmpty {
                report.downloads.append(try await garage.parkDownloaded(current, onConflict: onConflict))
            }
        }
    }

    /// Applies what changed on the server since the last download.
    private func download(_ report: inout SyncReport) async throws {
        let cursor = try await garage.value(for: NotesSync.cursor)
        let changes = try await server.changes(since: cursor)
        // .synced; a note with a local edit the server hasn't seen is a conflict: onConflict.
        let parked = try await garage.parkDownloaded(changes.notes, onConflict: onConflict)
        report.downloads.append(parked)
        report.downloads.append(try await garage.deleteDownloaded(Note.self, identifiers: changes.deleted))
        try await garage.set(changes.cursor, for: NotesSync.cursor)
    }
}
// snippet.hide

// A stand-in for the web service, so that the snippet runs without one: the notes with their
// revisions, and a change feed (the demo's is FakeServer.swift).
actor StandInServer: NotesServer {
    private var notes: [String: Note] = [:]
    private var deleted: [String: Int] = [:]
    private var revision = 0

    func upload(_ uploaded: [Note], deleting identifiers: [String]) -> [String: any Error] {
        var rejected: [String: any Error] = [:]
        for var note in uploaded {
            if let current = notes[note.id], current.serverRevision != note.serverRevision {
                rejected[note.id] = NoteConflict(current: current)
                continue
            }
            revision += 1
            note.serverRevision = revision
            note.syncStatus = .undetermined
            notes[note.id] = note
        }
        for id in identifiers where notes.removeValue(forKey: id) != nil {
            revision += 1
            deleted[id] = revision
        }
        return rejected
    }

    func changes(since cursor: Int) -> (notes: [Note], deleted: [String], cursor: Int) {
        (notes.values.filter { $0.serverRevision > cursor }.sorted { $0.serverRevision < $1.serverRevision },
         deleted.filter { $0.value > cursor }.map(\.key).sorted(),
         revision)
    }
}

/// Two devices, each with its garage, edit one note while offline; the second to sync merges.
func demo() async throws {
    let server = StandInServer()
    let phone = try Garage.inMemory()
    let laptop = try Garage.inMemory()
    try await phone.park(Note(id: "books", title: "Books", items: ["Dune"]))
    _ = try await SyncJob(garage: phone, server: server).run()
    _ = try await SyncJob(garage: laptop, server: server).run()

    // Both add a book while offline; the phone syncs first, and the laptop's job merges.
    var onPhone = try await phone.retrieve(Note.self, identifier: "books")!
    onPhone.items.append("Emma")
    try await phone.park(onPhone)
    var onLaptop = try await laptop.retrieve(Note.self, identifier: "books")!
    onLaptop.items.append("Ulysses")
    try await laptop.park(onLaptop)
    _ = try await SyncJob(garage: phone, server: server).run()
    let report = try await SyncJob(garage: laptop, server: server).run()
    print("merged: \(report.mergedCount), rejected: \(report.rejected.keys.sorted())")
    print(try await laptop.retrieve(Note.self, identifier: "books")?.items ?? [])   // ["Dune", "Emma", "Ulysses"]
}

try await demo()
