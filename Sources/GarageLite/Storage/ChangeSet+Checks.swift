import Foundation
import GarageLiteCore

/// What a change recorded earlier assumed of its committed row: checked again in the
/// transaction that writes it, so that changes held for a while (unsaved changes, a
/// transaction's) can't write over what another garage or process committed meanwhile.
struct WriteCheck: Sendable {
    /// The committed row's revision when the change was first recorded; `nil`: there was no
    /// committed row.
    var revision: Int64?
    /// The revision the app's copy had (a ``Revisioned`` object's), named by the error.
    var parkedRevision: Int64
    /// What to do when the committed row changed since: refuse the write (the app's edit), or
    /// build the change again from the row committed now (a rewrite the store made itself).
    var rebuild: RowRebuild?

    /// Whether a change of the committed row is answered by building the change again.
    var rebuilds: Bool { rebuild != nil }

    /// The check of a row changed under this check, then under `later`: the first revision
    /// is the one the changes build on; a rewrite of a rewrite is rebuilt by both in turn.
    func followed(by later: WriteCheck) -> WriteCheck {
        var combined = self
        if let first = rebuild, let second = later.rebuild {
            combined.rebuild = RowRebuild { row, view, now in
                guard let payload = try first.build(row, view, now) else { return try second.build(row, view, now) }
                return try second.build(payload.applied(to: row, key: row.key, now: now), view, now) ?? payload
            }
        } else {
            combined.rebuild = nil
            combined.parkedRevision = later.parkedRevision
        }
        return combined
    }
}

/// Builds a change again from the row committed now (a delete rule's rewrite of a referrer):
/// the payload to write, or `nil` when there is nothing to change any more.
struct RowRebuild: Sendable {
    let build: @Sendable (_ row: StoredRow, _ view: StoreView, _ now: Date) throws -> RowPayload?
}

/// A deletion's delete rule, applied again in the transaction that writes the deletion to
/// the referrers it did not see when it was recorded: it throws to refuse the deletion, or
/// returns the changes to make to them.
struct DeletionCheck: Sendable {
    let applyRule: @Sendable (_ references: [(to: ObjectKey, from: ObjectKey)], _ view: StoreView) throws -> ChangeSet
}

extension RevisionGuard {
    /// Decides whether `key` is written over its row in `view`. A damaged row is written
    /// over, as always: that is how it is repaired.
    func decide(_ key: ObjectKey, storedIn view: StoreView) throws -> Decision {
        guard let stored = try view.revisionOrDamage(key) else { return .write }
        return try decide(key, stored: stored)
    }
}

extension StoreView {
    /// The revision of the row `key`: `.some(nil)` when there is none, `nil` when it can't be
    /// read (a damaged row, which a write repairs).
    fileprivate func revisionOrDamage(_ key: ObjectKey) throws -> Int64?? {
        do {
            return .some(try row(key, for: .metadata)?.copyRevision)
        } catch let error as GarageError {
            guard case .corruptData = error else { throw error }
            return nil
        }
    }
}

extension ChangeSet {
    /// Checks every guarded row of this call's changes against `view`: throws to refuse them
    /// all, or returns the changes to write (without the rows to keep as stored), each
    /// written guarded row with its ``WriteCheck``, the revisions the written ``Revisioned``
    /// rows will have, and the children left as stored whose parked copy differs from them.
    func guardingRevisions(in view: StoreView) throws -> GuardedChanges {
        var kept: [(key: ObjectKey, differs: Bool)] = []
        var checks: [(ObjectKey, WriteCheck)] = []
        var revised: [ObjectKey] = []
        let committed = StoreView(view.statements, pending: nil)
        for segment in segments {
            for (key, change) in segment.rows {
                guard case .park(let payload) = change, let guardian = payload.revisionGuard,
                      guardian.needsStoredRevision else { continue }
                guard let stored = try view.revisionOrDamage(key) else { continue } // damaged: repaired
                switch try guardian.decide(key, stored: stored) {
                case .write:
                    if guardian.revision != nil { revised.append(key) }
                    let base = view.pending?.touches(key) == true ? try committed.revisionOrDamage(key) : stored
                    if let base {
                        checks.append((key, WriteCheck(revision: base, parkedRevision: guardian.revision ?? 0)))
                    }
                case .keep:
                    // An encrypted copy can't be compared: its ciphertext differs every time.
                    let differs = try payload.isEncrypted || view.row(key, for: .content)?.data != payload.data
                    kept.append((key, differs))
                }
            }
        }
        var changes = self
        for (key, _) in kept { changes.forget(key) }
        let differing = kept.filter(\.differs).map(\.key).sorted()
        for (key, check) in checks { changes.addCheck(check, for: key) }
        guard !revised.isEmpty else { return GuardedChanges(changes: changes, revisions: [:], keptChildren: differing) }
        // The revisions as the store will read once these changes are written.
        let written = StoreView(view.statements, pending: (view.pending ?? ChangeSet()).followed(by: changes))
        var revisions: [ObjectKey: Int64] = [:]
        for key in revised {
            let revision = try written.row(key, for: .metadata)?.revision
            guard !view.isWriting else {
                revisions[key] = revision
                continue
            }
            // Recorded unsaved (or in a transaction), a park that moves a row's revision gives
            // copies a provisional one; one that doesn't keeps the revision copies have.
            let before = try view.row(key, for: .metadata)
            let provisional = revision != before?.revision ? ProvisionalRevisions.make() : before?.provisional
            if let provisional { changes.setProvisional(provisional, for: key) }
            revisions[key] = provisional ?? revision
        }
        return GuardedChanges(changes: changes, revisions: revisions, keptChildren: differing)
    }

    /// These changes as they may be written now, in the write transaction on `statements`:
    /// every ``WriteCheck`` holds against the committed rows (a rewrite the store made is
    /// built again over a row changed since), and every deletion's rule is applied to the
    /// referrers that appeared since it was recorded.
    ///
    /// - throws: ``GarageError/staleObject(typeName:identifier:parkedRevision:storedRevision:)``
    ///   for the first change whose row another writer changed since it was recorded; the
    ///   errors of a delete rule. Nothing may be written then.
    func checkedForWriting(in statements: any RowStatements, now: Date) throws -> ChangeSet {
        guard segments.contains(where: { !$0.checks.isEmpty || !$0.deletions.isEmpty }) else { return self }
        let committed = StoreView(statements, pending: nil)
        var result = self
        // Per row: its checks in order, and whether every segment that changes it was a rewrite.
        var checksByKey: [ObjectKey: [WriteCheck]] = [:]
        var onlyRewrites: [ObjectKey: Bool] = [:]
        for segment in segments {
            for (key, change) in segment.rows {
                let check = segment.checks[key]
                if let check { checksByKey[key, default: []].append(check) }
                var isRewrite = check?.rebuilds ?? false
                if case .setSyncStatus = change { isRewrite = true }
                onlyRewrites[key] = (onlyRewrites[key] ?? true) && isRewrite
            }
        }
        for key in checksByKey.keys.sorted() {
            let checks = checksByKey[key] ?? []
            guard let stored = try committed.revisionOrDamage(key) else { continue } // damaged: repaired
            guard checks.contains(where: { $0.revision != stored }) else { continue }
            // Only rewrites the store made are checked, over a park of the app's that no check
            // guards (not `Revisioned`): the app's write wins, as it would have alone.
            if onlyRewrites[key] != true, checks.allSatisfy(\.rebuilds) { continue }
            let combined = checks.dropFirst().reduce(checks[0]) { $0.followed(by: $1) }
            guard onlyRewrites[key] == true, let rebuild = combined.rebuild else {
                throw GarageError.staleObject(typeName: key.typeName, identifier: key.identifier,
                                              parkedRevision: checks[0].parkedRevision, storedRevision: stored ?? 0)
            }
            // A status the app set after the rewrite stays set over the rewrite made again.
            let status = result.lastStatusChange(of: key)
            result.forget(key)
            if let row = try committed.row(key), let payload = try rebuild.build(row, committed, now) {
                result.record(.park(payload), for: key)
            }
            if let status { result.record(.setSyncStatus(status), for: key) }
        }
        for segment in segments {
            for (key, deletion) in segment.deletions where key.identifier.isEmpty || isDeletedAtEnd(key) {
                let identifier = key.identifier.isEmpty ? nil : key.identifier
                let appeared = try statements.references(toType: key.typeName, identifier: identifier).filter {
                    $0.from != $0.to && !result.rewritesContent(of: $0.from)
                        && (identifier != nil || ($0.from.typeName != key.typeName && result.isDeletedAtEnd($0.to)))
                }
                if !appeared.isEmpty { result.merge(try deletion.applyRule(appeared, committed)) }
            }
        }
        return result
    }
}

extension ChangeSet {
    /// Whether these changes leave the row `key` with content of their own (a park, a
    /// deletion): its references are then theirs, which the rule saw when it was recorded. A
    /// status change, or a move of its type, leaves the content it has.
    fileprivate func rewritesContent(of key: ObjectKey) -> Bool {
        for segment in segments.reversed() {
            if let change = segment.rows[key], !change.isStatusChange { return true }
            if case .deleteAll(let type)? = segment.bulk, type == nil || type == key.typeName { return true }
        }
        return false
    }

    /// The status the last status change of the row `key` sets, if a status change is its
    /// last change.
    fileprivate func lastStatusChange(of key: ObjectKey) -> SyncStatus? {
        for segment in segments.reversed() {
            guard let change = segment.rows[key] else { continue }
            if case .setSyncStatus(let status) = change { return status }
            return nil
        }
        return nil
    }

    /// Whether the last of these changes to touch the row `key` deletes it: a deletion the
    /// object was parked again after is no deletion any more, and its rule has nothing to do.
    fileprivate func isDeletedAtEnd(_ key: ObjectKey) -> Bool {
        for segment in segments.reversed() {
            if let change = segment.rows[key] {
                if case .delete = change { return true }
                return false
            }
            if case .deleteAll(let type)? = segment.bulk, type == nil || type == key.typeName { return true }
            if segment.bulk?.affects(type: key.typeName) == true { return false }
        }
        return false
    }
}

/// A call's changes once checked against the store (``ChangeSet/guardingRevisions(in:)``).
struct GuardedChanges: Sendable {
    /// The changes to record, each guarded row with its ``WriteCheck``.
    var changes: ChangeSet
    /// The revisions the written ``Revisioned`` rows will have.
    var revisions: [ObjectKey: Int64]
    /// The children left as stored (``ChildParking/keepStored``, ``ChildParking/onlyNew``)
    /// whose parked copy differs from the stored one: edits the park did not write.
    var keptChildren: [ObjectKey]
}
