import Foundation
import GarageLiteCore

/// A change to one row, waiting to be written.
enum RowChange: Sendable {
    /// Insert the row, or update it keeping its creation date, status (when the payload has
    /// none), claim and revision history.
    case park(RowPayload)
    /// Delete whatever row is there, then insert this one.
    case replace(RowPayload)
    case delete
    case setSyncStatus(SyncStatus)
}

extension RowChange {
    /// Whether the change sets the sync status only, leaving the content as it is.
    var isStatusChange: Bool {
        if case .setSyncStatus = self { return true }
        return false
    }
}

/// A change to many rows at once, waiting to be written.
enum BulkChange: Sendable {
    /// Delete every row of the type, or every row when the type is `nil`.
    case deleteAll(type: String?)
    /// Move every row of `from` to `to`, replacing rows of `to` with the same identifier.
    case renameType(from: String, to: String)

    func affects(type: String) -> Bool {
        switch self {
        case .deleteAll(let deleted): return deleted == nil || deleted == type
        case .renameType(let from, let to): return from == type || to == type
        }
    }
}

/// Changes not written yet: the unsaved changes of a garage whose autosave is off, the
/// changes of a `transaction { }` in progress, or the changes of one call.
///
/// The changes are kept in call order as segments: each segment starts with at most one
/// bulk change, followed by the final state of each row changed after it. Writing the set
/// (``Store/apply(_:to:now:)``) runs the segments in order, so the result is the same as
/// running every call in sequence; within a segment, later changes to a row fold into
/// earlier ones.
struct ChangeSet: Sendable {
    struct Segment: Sendable {
        var bulk: BulkChange?
        /// For a ``BulkChange/renameType(from:to:)`` in a garage whose cipher binds each row's
        /// ciphertext to it: re-encrypts a moved row for its new key.
        var reseal: RowResealer?
        var rows: [ObjectKey: RowChange] = [:]
        /// What the row changes of this segment assumed of the committed store, by row: checked
        /// again in the transaction that writes them (``ChangeSet/checkedForWriting(in:)``).
        var checks: [ObjectKey: WriteCheck] = [:]
        /// The delete rules of this segment's deletions, by deleted row (or, for a deletion of
        /// every object of a type, by the type with an empty identifier): applied again, in the
        /// transaction that writes, to referrers that appeared since.
        var deletions: [ObjectKey: DeletionCheck] = [:]
    }

    private(set) var segments: [Segment] = []
    /// When set, the next change starts a new segment: the segments before it are being
    /// saved, and must stay as they were taken.
    private var isSealed = false

    var isEmpty: Bool { segments.isEmpty }

    /// These changes, then `later`'s, as segments in that order: read as ``merge(_:)`` would
    /// make them read (segments run in order), without copying these rows (a merge into a copy
    /// of a transaction's changes, at each call, made a transaction of n calls cost n²). For
    /// reading only.
    func followed(by later: ChangeSet) -> ChangeSet {
        var result = self
        result.segments += later.segments
        return result
    }

    /// Records `change` to the row `key`, made under `check` (what it assumed of the
    /// committed row, to check again when it is written), if any.
    mutating func record(_ change: RowChange, for key: ObjectKey, check: WriteCheck? = nil) {
        if segments.isEmpty || isSealed {
            segments.append(Segment())
            isSealed = false
        }
        let last = segments.count - 1
        let existingCheck = segments[last].checks[key]
        switch (existingCheck, check) {
        case (let existing?, let new?):
            segments[last].checks[key] = existing.followed(by: new)
        case (nil, let new?):
            // A rewrite the store made over the app's own park that no check guards (an object
            // that is not `Revisioned`): the app's write wins, as it would have alone.
            if new.rebuilds, let existing = segments[last].rows[key], !existing.isStatusChange { break }
            segments[last].checks[key] = new
        case (let existing?, nil):
            // A change no check guards (a park of an object that is not `Revisioned`) after a
            // rewrite the store made itself: the app's write wins, as it would have alone.
            if existing.rebuilds, case .park = change { segments[last].checks[key] = nil }
            if case .delete = change { segments[last].checks[key] = nil }
        case (nil, nil):
            break
        }
        guard let existing = segments[last].rows[key] else {
            segments[last].rows[key] = change
            return
        }
        segments[last].rows[key] = Self.fold(change, into: existing)
    }

    /// Records that the row `key` (or, with an empty identifier, every row of its type) is
    /// deleted under a delete rule, for the rule to be applied again when it is written.
    /// Call it after recording the deletion itself.
    mutating func recordDeletion(of key: ObjectKey, _ check: DeletionCheck) {
        guard !segments.isEmpty else { return }
        segments[segments.count - 1].deletions[key] = check
    }

    mutating func record(_ change: BulkChange, resealing reseal: RowResealer? = nil) {
        if case .deleteAll = change, !isSealed, var last = segments.popLast() {
            // Row changes the deletion overrides need not be written at all.
            last.rows = last.rows.filter { !change.affects(type: $0.key.typeName) }
            last.checks = last.checks.filter { !change.affects(type: $0.key.typeName) }
            last.deletions = last.deletions.filter { !change.affects(type: $0.key.typeName) }
            if last.bulk != nil || !last.rows.isEmpty { segments.append(last) }
        }
        segments.append(Segment(bulk: change, reseal: reseal))
        isSealed = false
    }

    /// Adds `check` to the last segment that changes the row `key`.
    mutating func addCheck(_ check: WriteCheck, for key: ObjectKey) {
        guard let index = segments.lastIndex(where: { $0.rows[key] != nil }) else { return }
        segments[index].checks[key] = segments[index].checks[key].map { $0.followed(by: check) } ?? check
    }

    /// Changes the change to the row `key` in segment `index` in place.
    mutating func updateRow(_ key: ObjectKey, inSegment index: Int, _ update: (inout RowChange) -> Void) {
        guard var change = segments[index].rows[key] else { return }
        update(&change)
        segments[index].rows[key] = change
    }

    /// This set without any change to the row `key`.
    mutating func forget(_ key: ObjectKey) {
        for index in segments.indices {
            segments[index].rows[key] = nil
            segments[index].checks[key] = nil
            segments[index].deletions[key] = nil
        }
    }

    /// Adds every change of `other`, as if its calls came after this set's.
    mutating func merge(_ other: ChangeSet) {
        for segment in other.segments {
            if let bulk = segment.bulk { record(bulk, resealing: segment.reseal) }
            for (key, change) in segment.rows { record(change, for: key, check: segment.checks[key]) }
            for (key, deletion) in segment.deletions { recordDeletion(of: key, deletion) }
        }
    }

    /// The set with each park dated `date` (``RowPayload/parkedAt``) unless dated already: a
    /// call's changes, recorded unsaved or in a transaction, read with the date of the call, all
    /// of its rows level (as a save dates them).
    func stamped(_ date: Date) -> ChangeSet {
        var stamped = self
        for index in stamped.segments.indices {
            for (key, change) in stamped.segments[index].rows {
                switch change {
                case .park(var payload) where payload.parkedAt == nil:
                    payload.parkedAt = date
                    stamped.segments[index].rows[key] = .park(payload)
                case .replace(var payload) where payload.parkedAt == nil:
                    payload.parkedAt = date
                    stamped.segments[index].rows[key] = .replace(payload)
                default:
                    break
                }
            }
        }
        return stamped
    }

    /// Makes the next change start a new segment, so that the segments taken now for a save
    /// can be removed once saved, without removing what was recorded meanwhile.
    mutating func seal() {
        isSealed = true
    }

    /// This set without its first segments, those of `saved`: a sealed copy taken earlier,
    /// now written.
    func removing(saved: ChangeSet) -> ChangeSet {
        var remaining = self
        remaining.segments.removeFirst(min(saved.segments.count, segments.count))
        if remaining.segments.isEmpty { remaining.isSealed = false }
        return remaining
    }

    /// Whether any change touches the row `key`: changes it, or changes every row of its type.
    func touches(_ key: ObjectKey) -> Bool {
        segments.contains { segment in
            (segment.bulk?.affects(type: key.typeName) ?? false) || segment.rows[key] != nil
        }
    }

    /// Whether any change touches rows of `type`.
    func touches(type: String) -> Bool {
        segments.contains { segment in
            (segment.bulk?.affects(type: type) ?? false) || segment.rows.keys.contains { $0.typeName == type }
        }
    }

    /// The change `new` made after `existing` to the same row, as one change.
    private static func fold(_ new: RowChange, into existing: RowChange) -> RowChange {
        switch (existing, new) {
        case (.park(let old), .park(var payload)):
            payload.isRoot = payload.isRoot || old.isRoot
            payload.syncStatus = payload.syncStatus ?? old.syncStatus
            payload.countRevisions(after: old)
            return .park(payload)
        case (.replace(let old), .park(var payload)):
            payload.isRoot = payload.isRoot || old.isRoot
            payload.syncStatus = payload.syncStatus ?? old.syncStatus
            payload.countRevisions(after: old)
            return .replace(payload)
        case (.setSyncStatus(let status), .park(var payload)):
            payload.syncStatus = payload.syncStatus ?? status
            return .park(payload)
        case (.delete, .park(let payload)):
            return .replace(payload)
        case (.park(var old), .setSyncStatus(let status)):
            old.syncStatus = status
            return .park(old)
        case (.replace(var old), .setSyncStatus(let status)):
            old.syncStatus = status
            return .replace(old)
        case (.delete, .setSyncStatus):
            return .delete // callers check that the row exists before changing its status
        default:
            return new
        }
    }
}

extension RowWriteStatements {
    /// Writes every change of `changes`, segment after segment: the result is the same as
    /// running every call in sequence. With `recording`, returns the changes that changed
    /// something (a park of an object as it was stored changes nothing), for observers.
    @discardableResult
    func apply(_ changes: ChangeSet, now: Date, recording: Bool = false) throws -> ChangeSet? {
        var written: ChangeSet? = recording ? ChangeSet() : nil
        for segment in changes.segments {
            let count: Int
            switch segment.bulk {
            case .deleteAll(let type)?:
                count = try deleteAll(ofType: type, now: now)
            case .renameType(let from, let to)?:
                count = try renameType(from: from, to: to, reseal: segment.reseal)
            case nil:
                count = 0
            }
            if let bulk = segment.bulk, count > 0 { written?.record(bulk) }
            // Runs of parks are written as batches (one round trip on an engine that pays per trip).
            var parks: [(key: ObjectKey, payload: RowPayload)] = []
            func writeParks() throws {
                guard !parks.isEmpty else { return }
                for (park, changed) in zip(parks, try park(parks, now: now)) where changed {
                    written?.record(.park(park.payload), for: park.key)
                }
                parks = []
            }
            for (key, change) in segment.rows {
                if case .park(let payload) = change {
                    parks.append((key, payload))
                    continue
                }
                try writeParks()
                let changed: Bool
                switch change {
                case .park:
                    preconditionFailure("parks are batched above")
                case .replace(let payload):
                    // A tombstone, which the park turns into an edit.
                    let deleted = try delete(key, now: now)
                    changed = try park(key, payload, now: now) || deleted
                case .delete:
                    changed = try delete(key, now: now)
                case .setSyncStatus(let status):
                    changed = try setSyncStatus(status, of: key)
                }
                if changed { written?.record(change, for: key) }
            }
            try writeParks()
        }
        return written
    }
}

extension RowPayload {
    /// Folds `earlier`, a park of the same row before this one, into this payload's count of
    /// revisions (see ``foldedRevisions``).
    fileprivate mutating func countRevisions(after earlier: RowPayload) {
        foldedRevisions = earlier.foldedRevisions + (earlier.data != data ? 1 : 0)
        firstData = earlier.firstData ?? earlier.data
    }
}
