import Foundation

/// What ``Garage/parkDownloaded(_:onConflict:)-74tja`` does with an object the server sent when
/// the app has an edit of it that the server has not seen: the row is `.notSynced`, or a sync
/// job's claim holds it.
///
/// ```swift
/// let report = try garage.parkDownloaded(notes, onConflict: .merge { local, downloaded in
///     var merged = downloaded
///     merged.tags = Array(Set(local.tags).union(downloaded.tags))
///     return merged
/// })
/// ```
public enum ConflictResolution<Object>: Sendable {
    /// Keeps the local version, which the next sync job uploads. The default.
    case keepLocal
    /// Replaces the local version with the server's, as `.synced`. A claim on it then completes
    /// as edited meanwhile (`.notSynced`), so its job does not mark the server's version as its
    /// own upload.
    case takeDownloaded
    /// Parks what `merge` returns for the local and the downloaded version, as `.notSynced`, so
    /// that the merge is uploaded. It runs inside the download's write transaction: it must not
    /// call the garage.
    ///
    /// When one side deleted the object there are not two versions to merge: the edit wins,
    /// whichever side made it, so that nothing is lost (a downloaded edit replaces a local
    /// deletion, as `.synced`; a local edit stays against a deletion from the server, and its
    /// upload re-creates the object). The report names the conflict. To decide deletions
    /// yourself, use ``resolve(_:)``.
    case merge(@Sendable (_ local: Object, _ downloaded: Object) throws -> Object)
    /// Decides every conflict, deletions included, from what each side did: the closure gets
    /// the local and the server's side (an edit, or a deletion with the version deleted when the
    /// store has it) and says what to keep. It runs inside the download's write transaction: it
    /// must not call the garage.
    ///
    /// ```swift
    /// try garage.parkDownloaded(notes, onConflict: .resolve { local, downloaded in
    ///     switch (local, downloaded) {
    ///     case (.deleted, .edited): return .takeDownloaded       // another device edited it: keep that
    ///     case (.edited(let mine), .edited(let theirs)): return .merged(mine.merging(theirs))
    ///     default: return .keepLocal
    ///     }
    /// })
    /// ```
    case resolve(@Sendable (_ local: ConflictSide<Object>, _ downloaded: ConflictSide<Object>) throws -> ConflictOutcome<Object>)
    /// Parks the three-way merge of the local and the downloaded version, as `.notSynced`, so
    /// that it is uploaded: `merge` also gets the *base*, the last version both sides had, which
    /// the store keeps for every object with local changes (`nil` when it has none: the change
    /// was made before the store kept bases, or the base no longer decodes). The merged object's
    /// base becomes the downloaded version. It runs inside the download's write transaction: it
    /// must not call the garage. ``SyncMerge/fields(bothChanged:)`` merges property by property;
    /// the properties whose change its policy dropped are in ``DownloadConflict/discardedFields``.
    ///
    /// ```swift
    /// try garage.parkDownloaded(notes, onConflict: .threeWay(.fields()))
    /// ```
    ///
    /// Deletions on either side are decided as ``merge(_:)`` decides them: the edit wins. A merge
    /// that throws keeps the local version, and the report says why
    /// (``DownloadConflict/mergeFailure``): one object can't stop a download.
    case threeWay(SyncMerge<Object>)
}

/// What one side of a download conflict did to the object (see ``ConflictResolution/resolve(_:)``).
public enum ConflictSide<Object> {
    /// It holds this version.
    case edited(Object)
    /// It deleted the object; the version deleted, when the store kept it (a local deletion
    /// keeps it until uploaded; the server sends none).
    case deleted(Object?)
}

extension ConflictSide: Sendable where Object: Sendable {}

/// What to keep of a download conflict (see ``ConflictResolution/resolve(_:)``).
public enum ConflictOutcome<Object> {
    /// The local edit or deletion, which the next sync job uploads.
    case keepLocal
    /// The server's version, as `.synced`, or its deletion.
    case takeDownloaded
    /// This version, as the app's edit (`.notSynced`), for the next sync job to upload.
    case merged(Object)
}

extension ConflictOutcome: Sendable where Object: Sendable {}

/// What a download did: the objects applied as `.synced` (or deleted), and each conflict with
/// a local edit and how it was resolved.
public struct DownloadReport: Sendable, Hashable {
    /// The identifiers of the objects parked as `.synced` (by ``Garage/parkDownloaded(_:onConflict:)-74tja``),
    /// in the order they came.
    public var applied: [String] = []
    /// The identifiers of the objects deleted (by ``Garage/deleteDownloaded(_:identifiers:onConflict:)-116er``).
    public var deleted: [String] = []
    /// The objects the app had edited, and what was done with each.
    public var conflicts: [DownloadConflict] = []

    /// An empty report.
    public init() {}
}

/// An object the server sent that the app had edited: see ``DownloadReport/conflicts``.
public struct DownloadConflict: Sendable, Hashable, CustomStringConvertible {
    /// How a conflict was resolved.
    public enum Resolution: Sendable, Hashable {
        /// The local version was kept, to be uploaded.
        case keptLocal
        /// The server's version replaced it (or, for a deletion, it was deleted).
        case tookDownloaded
        /// The merge of both was parked, to be uploaded.
        case merged
    }

    /// The object's type name and identifier.
    public var object: ObjectKey
    /// The local row's status: `.notSynced`, or `.syncing` when a sync job's claim held it.
    public var localStatus: SyncStatus
    /// Whether a sync job's claim held the local row.
    public var wasClaimed: Bool
    /// Whether the local side had deleted the object (its row is a tombstone to upload).
    public var wasDeletedLocally = false
    /// What was done with it.
    public var resolution: Resolution
    /// For a three-way merge (``ConflictResolution/threeWay(_:)``), the properties both sides
    /// changed whose local or downloaded change the merge's policy dropped, as coding-key paths
    /// ("title", "address.city"): what the app may show as overwritten.
    public var discardedFields: [String] = []
    /// For a deletion from the server, the local objects that still reference the object.
    /// When one of them has a change to upload (it may be what added the reference, made
    /// offline), the default resolutions keep the object, as an edit to upload that re-creates
    /// it on the server (``Resolution/keptLocal``), so that the referrer keeps it everywhere;
    /// otherwise (or with ``ConflictResolution/takeDownloaded``) it is deleted, and they read
    /// without it (``Resolution/tookDownloaded``). Empty for other conflicts.
    public var referencedBy: [ObjectKey] = []
    /// For a three-way merge that failed (its closure threw, or the merged JSON doesn't decode),
    /// why: the local version was kept, to be uploaded, and the server's version not applied.
    public var mergeFailure: String?

    /// "Note(n1): kept the local edit".
    public var description: String {
        if !referencedBy.isEmpty {
            let names = referencedBy.map(\.description).joined(separator: ", ")
            switch resolution {
            case .keptLocal: return "\(object): deleted on the server, kept to upload again (referenced by \(names))"
            case .tookDownloaded: return "\(object): deleted on the server (now read without it: \(names))"
            case .merged: return "\(object): deleted on the server, merged to upload again (referenced by \(names))"
            }
        }
        // What the policy dropped, where both sides changed a property.
        let dropped = discardedFields.isEmpty ? "" : " (both changed: \(discardedFields.joined(separator: ", ")))"
        switch resolution {
        case .keptLocal where mergeFailure != nil: return "\(object): kept the local edit, the merge failed: \(mergeFailure!)"
        case .keptLocal: return "\(object): kept the local \(wasDeletedLocally ? "deletion" : "edit")"
        case .tookDownloaded: return "\(object): took the server's version\(dropped)"
        case .merged: return "\(object): merged\(dropped)"
        }
    }

    /// Makes one of the given values, each stored as given.
    package init(
        object: ObjectKey,
        localStatus: SyncStatus,
        wasClaimed: Bool,
        resolution: Resolution,
        discardedFields: [String] = [],
        referencedBy: [ObjectKey] = [],
        mergeFailure: String? = nil
    ) {
        self.object = object
        self.localStatus = localStatus
        self.wasClaimed = wasClaimed
        self.resolution = resolution
        self.discardedFields = discardedFields
        self.referencedBy = referencedBy
        self.mergeFailure = mergeFailure
    }
}
