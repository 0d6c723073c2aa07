import Foundation
import GarageLiteCore

/// What a ``SyncEngine`` is doing, for the app to show: see ``SyncEngine/status`` and
/// ``SyncEngine/statusUpdates()``.
public struct SyncEngineStatus: Sendable, Hashable, CustomStringConvertible {
    /// What the engine does now.
    public enum Activity: Sendable, Hashable {
        /// Waiting for a change, or for its next download.
        case idle
        /// Uploading the changes of `typeName`: `done` of the `total` counted when it began
        /// (changes made meanwhile are uploaded too, so `done` may pass `total`).
        case uploading(typeName: String, done: Int, total: Int)
        /// Downloading the server's changes of `typeName`: `received` so far.
        case downloading(typeName: String, received: Int)
    }

    /// What the engine does now.
    public var activity: Activity = .idle
    /// Why the last sync failed (the transport's or the store's error, as text); `nil` once a
    /// sync succeeds.
    public var lastError: String?
    /// When ``SyncEngine/run()`` tries again after that failure.
    public var retryDate: Date?
    /// When a sync last succeeded.
    public var lastSync: Date?
    /// Whether ``SyncEngine/run()`` hears the server's news of its feeds now (a
    /// ``LiveSyncTransport`` connected): it downloads as soon as they move, and doesn't poll.
    public var isListening = false
    /// The objects held back after too many failed uploads (see ``Garage/heldObjects(_:)-1a0n``),
    /// by type name: they wait for the app (``Garage/retryHeld(_:identifiers:)-5l9ef``, or a new edit).
    public var held: [String: [HeldObject]] = [:]
    /// The objects the server refused in the last sync (``UploadResult/failed(_:)``), with its
    /// reason: retried after ``SyncEngine/Configuration/retryAfter``, or at once when edited.
    public var refused: [ObjectKey: String] = [:]
    /// The objects with changes to upload that can't be read or decoded (see
    /// ``Garage/retrieveAllLossy(_:)-2impn``), with why: no claim takes them until the app parks
    /// a valid object under their identifier, or deletes them.
    public var unreadable: [ObjectKey: String] = [:]
    /// This device's uploads that the last sync's downloads replaced before the device saw them
    /// again (``SyncEngineReport/replaced``): what its user may want to look at again.
    public var replaced: [ReplacedUpload] = []
    /// What the last sync that succeeded did: its conflicts, and what their merges dropped
    /// (``DownloadConflict/discardedFields``), for the app that lets ``SyncEngine/run()`` sync.
    public var lastReport: SyncEngineReport?

    /// An idle status.
    public init() {}

    /// "uploading Note 50 of 120", "idle, failing: …", "idle, 1 refused, 2 held".
    public var description: String {
        var text: String
        switch activity {
        case .idle: text = "idle"
        case let .uploading(typeName, done, total): text = "uploading \(typeName) \(done) of \(total)"
        case let .downloading(typeName, received): text = "downloading \(typeName): \(received) received"
        }
        if isListening { text += ", listening" }
        if let lastError { text += ", failing: \(lastError)" }
        if !refused.isEmpty { text += ", \(refused.count) refused" }
        if !unreadable.isEmpty { text += ", \(unreadable.count) unreadable" }
        if !replaced.isEmpty { text += ", \(replaced.count) replaced by the server" }
        let heldCount = held.values.reduce(0) { $0 + $1.count }
        if heldCount > 0 { text += ", \(heldCount) held" }
        return text
    }
}

/// What one ``SyncEngine/sync()`` did.
public struct SyncEngineReport: Sendable, Hashable {
    /// How each uploaded batch ended, in order.
    public var uploads: [ClaimReport] = []
    /// The server's changes applied, in order, with their conflicts (the device's own uploads
    /// come back in its downloads: ``DownloadReport/applied`` lists them too).
    public var downloads: [DownloadReport] = []
    /// The objects the server refused (``UploadResult/failed(_:)``), with its reason: retried later.
    public var refused: [ObjectKey: String] = [:]
    /// The objects held back after too many failed uploads, by type name.
    public var held: [String: [HeldObject]] = [:]
    /// The objects with changes to upload that can't be read or decoded, with why
    /// (``Claim/failures``): left as they are, not uploaded.
    public var unreadable: [ObjectKey: String] = [:]
    /// This device's uploads that a download replaced (or deleted) before the device saw them
    /// come back: what the device changed that the server's version holds otherwise. The other
    /// side of a conflict another device's merge decided (see ``ReplacedUpload``).
    public var replaced: [ReplacedUpload] = []
    /// The types whose download started again from no cursor (the server answered
    /// ``DownloadBatch/rebase``: it purged deletions this device had not downloaded yet). The
    /// unsynced changes stayed; the objects the server no longer has were deleted here.
    public var rebased: [String] = []
    /// How many deletions the server has, which no object referenced any more, this sync
    /// forgot (see ``SyncEngine/Configuration/tombstonePurgeInterval``).
    public var tombstonesPurged = 0

    /// An empty report.
    public init() {}

    /// Every conflict with a local edit, and how it was resolved.
    public var conflicts: [DownloadConflict] { downloads.flatMap(\.conflicts) }
    /// The identifiers uploaded and now `.synced`.
    public var synced: [String] { uploads.flatMap(\.synced) }
}
