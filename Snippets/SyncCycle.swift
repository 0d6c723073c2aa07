// One run of a sync job, in short: upload the local changes under a claim, then apply the
// server's changes. The whole job, with its report, conflicts and second round, is SyncJob.

import GarageLite

// snippet.hide
/// A stand-in for the web service: it takes every upload, and has no changes of its own.
struct NotesServer {
    func upload(_ notes: [Note], deleting identifiers: [String]) async throws -> [String: any Error] { [:] }
    func changes(since cursor: Int) async throws -> (notes: [Note], deleted: [String], cursor: Int) { ([], [], cursor) }
}
// snippet.show
struct Note: Mappable, Syncable {
    var id: String
    var title: String
    var syncStatus: SyncStatus = .notSynced
}

/// Uploads the local changes, then applies the server's; returns the next cursor.
func sync(_ garage: Garage, with server: NotesServer, since cursor: Int) async throws -> Int {
    try await garage.releaseStaleClaims(olderThan: 15 * 60)             // a crashed job's claims
    let claim = try await garage.claim(Note.self, limit: 50)            // .syncing: no other job takes them
    do {
        let rejected = try await server.upload(claim.objects, deleting: claim.deletions)
        try await garage.complete(claim, rejected: rejected, retryAfter: 60)   // .synced, unless parked again meanwhile
    } catch {
        try await garage.release(claim, retryAfter: 60, error: error)          // .notSynced, retried after a minute
    }
    let changes = try await server.changes(since: cursor)
    try await garage.parkDownloaded(changes.notes, onConflict: .keepLocal)     // .synced; a local edit stays
    try await garage.deleteDownloaded(Note.self, identifiers: changes.deleted)
    return changes.cursor                                                      // kept in a setting, say
}
// snippet.hide

let garage = try Garage.inMemory()
try garage.park(Note(id: "groceries", title: "Groceries"))
_ = try await sync(garage, with: NotesServer(), since: 0)
print(try garage.count(Note.self, withStatus: .synced))   // 1
