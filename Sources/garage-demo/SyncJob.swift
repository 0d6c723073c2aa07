import Foundation
import GarageLite

/// A background sync job, as an app would write one: it uploads what is not synced yet, in
/// batches, while the app keeps parking edits.
///
/// - A batch is *claimed*: its rows become `.syncing`, and no other job takes them. It holds
///   the objects changed and the identifiers of those deleted since the server got them.
/// - After a successful upload, `complete` marks each row `.synced` — unless the app parked
///   an edit of it meanwhile: that row goes back to `.notSynced`, and the next batch takes it.
/// - After a failed upload, `release` puts the batch back to `.notSynced`.
/// - At start, `releaseStaleClaims` recovers the batches of a job that crashed.
struct SyncJob {
    let garage: Garage
    /// Sends changed objects, and the identifiers of deleted ones, to the web service; throws
    /// when the upload fails.
    let upload: (_ changed: [Person], _ deleted: [String]) throws -> Void
    var batchSize = 50
    /// A claim older than this belongs to a job that died.
    var staleAfter: TimeInterval = 15 * 60

    /// Runs until nothing is left to upload, or an upload fails. Returns what it did.
    func run() throws -> [String] {
        var log: [String] = []
        let recovered = try garage.releaseStaleClaims(olderThan: staleAfter)
        if recovered > 0 {
            log.append("recovered \(recovered) object(s) from a crashed job")
        }
        while true {
            let claim = try garage.claim(Person.self, limit: batchSize)
            if claim.isEmpty { break }
            do {
                try upload(claim.objects, claim.deletions)
            } catch {
                try garage.release(claim)
                log.append("upload of \(claim.identifiers.joined(separator: ", ")) failed (\(error)); released for the next run")
                return log
            }
            let report = try garage.complete(claim)
            log.append("uploaded \(claim.identifiers.joined(separator: ", ")): synced \(report.synced.count)"
                + (report.notSynced.isEmpty ? "" : ", edited meanwhile: \(report.notSynced.joined(separator: ", "))"))
        }
        return log
    }
}
