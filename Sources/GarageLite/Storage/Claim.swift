import Foundation
import GarageLiteCore

/// A batch of objects a sync job has claimed: their rows are `.syncing` and no other job can
/// claim them until ``Garage/complete(_:)-26tgn`` or ``Garage/release(_:)-2mefx`` ends the claim.
///
/// See ``Garage/claim(_:limit:status:)-8fs3h``.
public struct Claim<Object> {
    /// Identifies the claim in the store: an opaque text (a unique identifier, and the process
    /// that took the claim), to compare, log or show, not to parse.
    public let id: String
    /// The type name of the claimed objects.
    public let typeName: String
    /// When the objects were claimed.
    public let date: Date
    /// The claimed objects, as they were when claimed, oldest change first.
    public let objects: [Object]
    /// The identifiers of `objects`, in the same order.
    public let identifiers: [String]
    /// The revision of each object's row when it was claimed.
    let revisions: [Int64]
    /// Each object's data as it was stored when claimed (what is uploaded), whether it was
    /// encrypted, and the row's base once claimed: the data becomes the base of an edit made
    /// during the upload once it completes, if that base is still the row's (a rewrite of the
    /// rows' encryption meanwhile changes it, and the data is then in a retired key); and
    /// whether the object was sent as new (`sentAsNew`: no server version, and a base some
    /// claim gave it), whose base a conflict answer then takes back.
    var uploaded: [Uploaded] = []
    /// The rows of `objects` as the claim left them, when the engine gave each its version
    /// (``StoredRow/rowVersion``): their claim then ends without reading them, if nothing wrote them
    /// since. Empty otherwise.
    var claimedRows: [StoredRow] = []
    /// The server's version each object is based on (``ObjectMetadata/serverVersion``), in
    /// the order of ``identifiers``.
    var serverVersions: [String?] = []
    /// The identifiers of the objects deleted since the server may have got them, oldest
    /// deletion first: tell the server to delete them. Completing the claim forgets them;
    /// releasing it keeps them for the next claim. An object deleted and parked again is an
    /// edit, in ``objects``, never a deletion.
    public var deletions: [String] = []
    /// The revision of each deletion's tombstone when it was claimed.
    var deletionRevisions: [Int64] = []
    /// The server's version each deletion deleted, in the order of ``deletions``.
    var deletionVersions: [String?] = []
    /// What each of ``deletions`` deleted, in the same order: the version the app deleted and
    /// its revision, so that the server can refuse a deletion based on a version older than
    /// its own (another device's edit).
    ///
    /// ```swift
    /// for deletion in claim.deletedVersions {
    ///     try server.delete(deletion.identifier, ifVersion: deletion.object?.serverVersion)
    /// }
    /// ```
    public var deletedVersions: [DeletedVersion<Object>] = []
    /// The objects that could have been claimed but can't be decoded: they were left unclaimed,
    /// with their status. Park a valid object under the same identifier, or delete it.
    public var failures: [RetrievalFailure] = []
    /// For a claim that asked for them (the sync engine's), each object's version before the
    /// edit uploaded, in the order of ``objects``: `nil` for a new object, or a base that no
    /// longer decodes. Empty otherwise.
    var bases: [Object?] = []

    /// Whether nothing was claimed: there is nothing to upload, and nothing to delete.
    public var isEmpty: Bool { objects.isEmpty && deletions.isEmpty }

    /// How many objects were claimed, not counting ``deletions`` (the claim's `limit` counts both).
    public var count: Int { objects.count }

    var keys: [ObjectKey] { (identifiers + deletions).map { ObjectKey(typeName: typeName, identifier: $0) } }

    /// What ending the claim needs: everything but the objects.
    var ticket: ClaimTicket {
        ClaimTicket(id: id, typeName: typeName, identifiers: identifiers + deletions,
                    revisions: revisions + deletionRevisions, uploaded: uploaded, claimedRows: claimedRows)
    }
}

extension Claim: Sendable where Object: Sendable {}

/// An object deleted since the server may have got it, as a claim hands it to its sync job
/// (``Claim/deletedVersions``): what the deletion was based on.
public struct DeletedVersion<Object> {
    /// The object's identifier.
    public var identifier: String
    /// The revision of the version deleted: its row's revision when the app deleted it.
    public var revision: Int64
    /// The version deleted, as it was stored; `nil` when the store kept no content for it (a
    /// deletion made before GarageLite kept it) or it no longer decodes. Its `Identifiable`
    /// children are read as they are now: those deleted too are left out, or missing.
    public var object: Object?
}

extension DeletedVersion: Sendable where Object: Sendable {}

/// What a claim uploads of one object: see ``Claim``.
struct Uploaded: Sendable {
    var data: String
    var isEncrypted: Bool
    var base: String?
    var sentAsNew: Bool
}

struct ClaimTicket: Sendable {
    var id: String
    var typeName: String
    var identifiers: [String]
    var revisions: [Int64]
    /// The data of the first `uploaded.count` identifiers (the objects, not the deletions)
    /// when claimed: see ``Claim``.
    var uploaded: [Uploaded]
    /// See ``Claim/claimedRows``.
    var claimedRows: [StoredRow] = []
}

/// What ending a claim did to each of its objects, by identifier.
public struct ClaimReport: Sendable, Hashable {
    /// Now `.synced`: the content uploaded is the content stored.
    public var synced: [String] = []
    /// The claimed ``Claim/deletions`` the server now has: their tombstones are gone.
    public var deletionsUploaded: [String] = []
    /// Now `.notSynced`: when completing, their content changed (or they were deleted) during
    /// the upload; when releasing, or rejected, the upload failed. The next claim takes them
    /// again.
    public var notSynced: [String] = []
    /// Released with the status the app gave them during the claim.
    public var keptByApp: [String] = []
    /// The objects that counted a failed upload (``Garage/release(_:retryAfter:error:)-8n7ea``,
    /// or rejected by ``Garage/complete(_:rejected:retryAfter:)-7nkru``), which are in
    /// ``notSynced`` or ``keptByApp`` too: what tells a rejected object from one edited
    /// during its upload.
    public var failedUploads: [String] = []
    /// Gone during the claim without a deletion to upload (``Garage/deleteAllObjects()-6s113``,
    /// garbage collection, a deletion downloaded from the server): nothing was done. An object
    /// the app deleted during the claim is in ``notSynced``: its deletion is uploaded next.
    public var deleted: [String] = []
    /// No longer under this claim (released as stale, or deleted and parked again): nothing
    /// was done.
    public var lost: [String] = []

    public init() {}

    /// Adds an object ended as `end` says.
    mutating func record(_ identifier: String, _ end: Store.RowEnd) {
        if end.failure != nil { failedUploads.append(identifier) }
        switch end.status {
        case .synced?: synced.append(identifier)
        case .notSynced?: notSynced.append(identifier)
        default: keptByApp.append(identifier)
        }
    }

    /// Adds what `other` did.
    mutating func merge(_ other: ClaimReport) {
        synced += other.synced
        deletionsUploaded += other.deletionsUploaded
        notSynced += other.notSynced
        keptByApp += other.keptByApp
        failedUploads += other.failedUploads
        deleted += other.deleted
        lost += other.lost
    }
}

/// An object held back from sync jobs after too many failed uploads: see
/// ``Garage/heldObjects(_:)-1a0n``.
public struct HeldObject: Sendable, Hashable, CustomStringConvertible {
    /// The object's identifier.
    public var identifier: String
    /// How many uploads of it failed since it last changed or synced.
    public var attempts: Int
    /// The error of the last failed upload, as its job gave it to ``Garage/release(_:retryAfter:error:)-8n7ea``.
    public var lastError: String?

    /// "n1: 10 failed uploads, last: HTTP 422".
    public var description: String {
        "\(identifier): \(attempts) failed uploads" + (lastError.map { ", last: \($0)" } ?? "")
    }
}
