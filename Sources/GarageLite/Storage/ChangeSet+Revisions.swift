import Foundation

extension RevisionGuard {
    /// Decides whether `key` is written over its row in `view`. A damaged row is written
    /// over, as always: that is how it is repaired.
    func decide(_ key: ObjectKey, storedIn view: StoreView) throws -> Decision {
        let stored: Int64?
        do {
            stored = try view.row(key, for: .metadata)?.revision
        } catch let error as GarageError {
            guard case .corruptData = error else { throw error }
            return .write
        }
        return try decide(key, stored: stored)
    }
}

extension ChangeSet {
    /// Checks every guarded row of this call's changes against `view`: throws to refuse them
    /// all, or returns the changes to write (without the rows to keep as stored) and the
    /// revisions the written ``Revisioned`` rows will have.
    func guardingRevisions(in view: StoreView) throws -> (changes: ChangeSet, revisions: [ObjectKey: Int64]) {
        var kept: [ObjectKey] = []
        var checked: [ObjectKey] = []
        for segment in segments {
            for (key, change) in segment.rows {
                guard case .park(let payload) = change, let check = payload.revisionGuard,
                      check.needsStoredRevision else { continue }
                switch try check.decide(key, storedIn: view) {
                case .write: if check.revision != nil { checked.append(key) }
                case .keep: kept.append(key)
                }
            }
        }
        var changes = self
        for key in kept { changes.forget(key) }
        guard !checked.isEmpty else { return (changes, [:]) }
        // The revisions as the store will read once these changes are written.
        var after = view.pending ?? ChangeSet()
        after.merge(changes)
        let written = StoreView(view.statements, pending: after)
        var revisions: [ObjectKey: Int64] = [:]
        for key in checked {
            revisions[key] = try written.row(key, for: .metadata)?.revision
        }
        return (changes, revisions)
    }

}
