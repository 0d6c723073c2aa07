import Foundation

/// Which columns of a row a read needs: those are read strictly, the others are left at
/// their defaults, so that damage in a column a read does not use does not fail it.
package enum RowPurpose: Sendable {
    /// Decoding the object: data, encryption flag, sync status, revision (a ``Revisioned``
    /// object's), references (and the claim, which every purpose reads).
    case content
    /// Everything but the data and the references: ``ObjectMetadata``.
    case metadata
    /// Every column: rows that are changed or claimed.
    case all

    package var needsContent: Bool { self != .metadata }
    package var needsMetadata: Bool { self != .content }
}

/// One row of the object table, as read from the store.
///
/// A row read for one ``RowPurpose`` holds defaults in the columns it did not need: empty
/// data, `.distantPast` dates, revision 0.
package struct StoredRow: Sendable {
    package var key: ObjectKey
    /// The object's JSON, or the encryption delegate's output when `isEncrypted`.
    package var data: String
    package var isEncrypted: Bool
    package var syncStatus: SyncStatus
    package var creationDate: Date
    package var modificationDate: Date
    /// Increases by one on every write that changes `data`.
    package var revision: Int64
    /// Whether the object was ever parked directly, rather than only as a reference.
    package var isRoot: Bool
    /// The rows this row references, as a JSON array of `[type, identifier]` pairs.
    package var references: String
    /// The sync job's claim holding the row, and when it was taken.
    package var claim: String? = nil
    package var claimedAt: Date? = nil
    /// Whether the row is a tombstone: its object was deleted, and a sync job must tell the
    /// server. Only claims and `rowOrTombstone` see tombstones.
    package var isDeleted = false
    /// The failed uploads since the row last changed or synced, the last one's error, and
    /// until when claims skip the row.
    package var attempts: Int64 = 0
    package var lastError: String? = nil
    package var retryAt: Date? = nil
    /// Whether a copy may be on the server, so that deleting the object leaves a tombstone.
    /// Read by the record API only (``RowStatements/records(ofType:after:limit:)``).
    package var isRemote = false
    /// The key the row's data was encrypted for, when it is not `key`: a row of a type renamed
    /// by changes not written yet (read through the overlay).
    package var sealedFor: ObjectKey? = nil
    /// For a row an unsaved change (or a transaction's) parks, read through the overlay: the
    /// provisional revision copies get instead of `revision` (see ``ProvisionalRevisions``).
    package var provisional: Int64? = nil
    /// The *base* of a row with local changes the server has not seen: the data (in the row's
    /// encryption, for the row's key) of the last version both sides had, which a three-way
    /// merge compares both sides' edits with; `nil` when the row has no pending change, or the
    /// base is unknown. Read for ``RowPurpose/all`` only. See ``RowRules`` ("Bases").
    package var base: String? = nil
    /// The server's version this row is based on (``ObjectMetadata/serverVersion``): set by a
    /// download, a merge with one, or an accepted upload; kept by the app's edits and deletions.
    package var serverVersion: String? = nil
    /// The engine's mark of this version of the row, when it keeps one (PostgreSQL: the `xmin`
    /// of the version a claim wrote): a write conditioned on it applies only while nothing else
    /// wrote the row (``RowWriteStatements/endClaimsIfUnchanged(_:)``). Not a column.
    package var rowVersion: Int64? = nil
    /// Whether ``references`` are the object's own, as the garage encoded them: `false` for an
    /// object imported from GarageStorage, whose references are a guess (`Schema`'s version 3)
    /// that the check of dangling references leaves out, until the object is parked again.
    /// Read with every column (``RowStatements/record(_:)``); `true` elsewhere.
    package var referencesKnown = true

    /// A row with these columns (an engine's reader makes them).
    package init(key: ObjectKey, data: String, isEncrypted: Bool, syncStatus: SyncStatus, creationDate: Date,
                 modificationDate: Date, revision: Int64, isRoot: Bool, references: String, claim: String? = nil,
                 claimedAt: Date? = nil, isDeleted: Bool = false, attempts: Int64 = 0, lastError: String? = nil,
                 retryAt: Date? = nil, isRemote: Bool = false, sealedFor: ObjectKey? = nil, provisional: Int64? = nil,
                 base: String? = nil, serverVersion: String? = nil) {
        self.key = key
        self.data = data
        self.isEncrypted = isEncrypted
        self.syncStatus = syncStatus
        self.creationDate = creationDate
        self.modificationDate = modificationDate
        self.revision = revision
        self.isRoot = isRoot
        self.references = references
        self.claim = claim
        self.claimedAt = claimedAt
        self.isDeleted = isDeleted
        self.attempts = attempts
        self.lastError = lastError
        self.retryAt = retryAt
        self.isRemote = isRemote
        self.sealedFor = sealedFor
        self.provisional = provisional
        self.base = base
        self.serverVersion = serverVersion
    }

    /// The revision a copy of the object gets, and is checked against: the provisional one of
    /// an unsaved change, or the row's.
    package var copyRevision: Int64 { provisional ?? revision }

    /// A tombstone as the version it deleted: its content, at the revision it had before the
    /// deletion (a tombstone's is one more).
    package var deletedVersion: StoredRow {
        var row = self
        row.revision -= 1
        return row
    }
}

/// What changes in a row when its object changes: what a watch of other connections'
/// commits compares (see ``RowStatements/stamps(ofType:identifiers:)``).
///
/// A write that changes the data raises the revision and sets the modification date; a sync
/// job's changes set the status. A column that can't be read is `nil`.
package struct RowStamp: Sendable, Hashable {
    package var revision: Int64?
    package var modificationDate: Double?
    package var syncStatus: Int64?

    /// A stamp of these columns.
    package init(revision: Int64?, modificationDate: Double?, syncStatus: Int64?) {
        self.revision = revision
        self.modificationDate = modificationDate
        self.syncStatus = syncStatus
    }
}

/// One row of a GarageStorage store (`ZGSCOREDATAOBJECT`, read by `GarageStorageFile`), as stored: any column may be NULL, or of another type
/// (then `nil`, and the reason in `problems`).
package struct GarageStorageRow: Sendable {
    package var primaryKey: Int64
    package var type: String?
    package var identifier: String?
    package var data: String?
    package var syncStatus: Int64?
    /// Core Data timestamps: seconds since 2001-01-01 00:00:00 UTC.
    package var creationDate: Double?
    package var modificationDate: Double?
    /// Columns that held a value of the wrong type.
    package var problems: [String] = []

    /// Makes one of the given values, each stored as given.
    package init(
        primaryKey: Int64,
        type: String? = nil,
        identifier: String? = nil,
        data: String? = nil,
        syncStatus: Int64? = nil,
        creationDate: Double? = nil,
        modificationDate: Double? = nil,
        problems: [String] = []
    ) {
        self.primaryKey = primaryKey
        self.type = type
        self.identifier = identifier
        self.data = data
        self.syncStatus = syncStatus
        self.creationDate = creationDate
        self.modificationDate = modificationDate
        self.problems = problems
    }
}

/// A row brought from another store (``Garage/importGarageStorageStore(at:)-1ia5l``), with its
/// own dates and status, written only where there is no row yet.
package struct ImportedRow: Sendable {
    package var data: String
    package var isEncrypted: Bool
    package var syncStatus: SyncStatus
    package var creationDate: Date
    package var modificationDate: Date
    /// ``ReferenceList`` JSON.
    package var references: String
    /// Whether a copy may be on the server (a later delete then leaves a tombstone).
    package var isRemote: Bool

    /// Makes one of the given values, each stored as given.
    package init(
        data: String,
        isEncrypted: Bool,
        syncStatus: SyncStatus,
        creationDate: Date,
        modificationDate: Date,
        references: String,
        isRemote: Bool
    ) {
        self.data = data
        self.isEncrypted = isEncrypted
        self.syncStatus = syncStatus
        self.creationDate = creationDate
        self.modificationDate = modificationDate
        self.references = references
        self.isRemote = isRemote
    }
}

/// What a park writes into a row.
package struct RowPayload: Sendable {
    package var data: String
    package var isEncrypted: Bool
    /// The status of a `Syncable` object; `nil` keeps the row's status (`.undetermined` for a new row).
    package var syncStatus: SyncStatus?
    package var references: String
    package var isRoot: Bool
    /// Whether the row came from the server (`parkDownloaded`): its status is stored as it is.
    package var isDownloaded = false
    /// Whether an object that says `.syncing` is stored `.syncing`, whether a claim holds its
    /// row or not (``Garage/Compatibility/keepsParkedSyncingStatus``, GarageStorage's rule).
    package var keepsSyncing = false
    /// What a park checks against the row before writing it (``RevisionGuard``); `nil` for
    /// writes that are not checked (downloads, merges).
    package var revisionGuard: RevisionGuard?
    /// How many times the content changed between the parks of this row that pending changes
    /// folded into this payload (``ChangeSet``): written as one, the row's revision still counts
    /// each, as if each park had been written, so that a copy held from one of them is stale.
    package var foldedRevisions: Int64 = 0
    /// The data of the first of those parks, which the stored row's data is compared with;
    /// `nil` when nothing was folded.
    package var firstData: String?
    /// The provisional revision of a park recorded unsaved or in a transaction: what copies
    /// of the object get until it is saved (see ``ProvisionalRevisions``).
    package var provisional: Int64?
    /// The base to record (``StoredRow/base``), in place of what the rules would keep: the
    /// downloaded version's data, for a merge of it with a local edit. `nil`: the rules decide.
    package var base: String?
    /// The server's version of a downloaded (or merged) object, to record; `nil` keeps the row's.
    package var serverVersion: String?
    /// When the park was recorded: the modification date the row reads with while the change
    /// is unsaved (the save dates it as it writes it). A read's own time would date every
    /// unsaved row anew at each read, and pages by modification date after a cursor would
    /// repeat them without end.
    package var parkedAt: Date?

    /// A payload of these columns.
    package init(data: String, isEncrypted: Bool, syncStatus: SyncStatus?, references: String, isRoot: Bool,
                 isDownloaded: Bool = false, keepsSyncing: Bool = false, revisionGuard: RevisionGuard? = nil,
                 foldedRevisions: Int64 = 0, firstData: String? = nil, provisional: Int64? = nil, base: String? = nil) {
        self.data = data
        self.isEncrypted = isEncrypted
        self.syncStatus = syncStatus
        self.references = references
        self.isRoot = isRoot
        self.isDownloaded = isDownloaded
        self.keepsSyncing = keepsSyncing
        self.revisionGuard = revisionGuard
        self.foldedRevisions = foldedRevisions
        self.firstData = firstData
        self.provisional = provisional
        self.base = base
    }

    /// The row as it reads once this payload is written over `existing` (or into a new row):
    /// ``RowRules/parked(_:over:key:now:)``.
    package func applied(to existing: StoredRow?, key: ObjectKey, now: Date) -> StoredRow {
        RowRules.parked(self, over: existing, key: key, now: now).row
    }
}

extension ObjectMetadata {
    /// What `row` says of its object besides its content.
    package init(_ row: StoredRow) {
        typeName = row.key.typeName
        identifier = row.key.identifier
        creationDate = row.creationDate
        modificationDate = row.modificationDate
        revision = row.copyRevision
        syncStatus = row.syncStatus
        isEncrypted = row.isEncrypted
        isRoot = row.isRoot
        claimDate = row.claimedAt
        attempts = Int(row.attempts)
        lastError = row.attempts > 0 ? row.lastError : nil
        retryDate = row.retryAt
        serverVersion = row.serverVersion
    }
}

/// Re-encrypts the data of a row moved to another key (a renamed type), for a cipher that
/// binds each ciphertext to its row: `(data, old key, new key)` to the data for the new key.
package struct RowResealer: Sendable {
    package let reseal: @Sendable (String, ObjectKey, ObjectKey) throws -> String

    /// Makes one of the given values, each stored as given.
    package init(reseal: @escaping @Sendable (String, ObjectKey, ObjectKey) throws -> String) {
        self.reseal = reseal
    }
}
