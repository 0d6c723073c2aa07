// The work behind the entry points of Garage+Deleting.swift (the façade, at the root): the store
// calls they run and their helpers. Nothing here is public; the root files hold the API.
import Foundation
import GarageLiteCore

extension Garage {
    func key<T, ID: GarageIdentifier>(_ type: T.Type, identifier: ID) throws -> DeletionTarget {
        .object(ObjectKey(typeName: try storedTypeName(T.self), identifier: try Identity.string(fromID: identifier)),
                mustExist: false, revision: nil)
    }

    /// What a delete deletes: one object (which, for GarageStorage's `delete(_:)`, must
    /// exist; a ``Revisioned`` copy's revision, which must be its row's), or every object of a type.
    enum DeletionTarget: Sendable {
        case object(ObjectKey, mustExist: Bool, revision: Int64?)
        case type(String)
    }

    /// Deletes `target` under `rule`; returns how many objects it deleted. Sealed again when
    /// this garage's own rekey changed the key meanwhile (the rule's rewrites are sealed).
    func delete(_ target: DeletionTarget, rule: DeleteRule) throws -> Int {
        try run(deleting(target, rule: rule))
    }

    /// Deletes `target` under `rule` (see the synchronous variant) without blocking the calling thread.
    nonisolated(nonsending) func delete(_ target: DeletionTarget, rule: DeleteRule) async throws -> Int {
        try await run(deleting(target, rule: rule))
    }

    func deleting(_ target: DeletionTarget, rule: DeleteRule) -> StoreCall<Int> {
        sealingWithCurrentKey { self.recording(self.deletion(target, rule: rule)) }
    }

    /// Deletes the object of type `T` parked under `identifier` with the garage's
    /// ``deleteRule``; returns whether there was one (see ``delete(_:identifier:rule:)-14x5x``).
    func deleting<T, ID: GarageIdentifier>(_ type: T.Type, identifier: ID) -> StoreCall<Bool> {
        .starting { deleting(try key(T.self, identifier: identifier), rule: deleteRule).map { $0 > 0 } }
    }

    /// The work of one delete: its name, and what prepares its changes on the store as the
    /// call sees it (inside the write transaction when it writes to the store): the rule's
    /// changes to the referrers, then the deletion. Its result is how many objects it deletes.
    func deletion(
        _ target: DeletionTarget, rule: DeleteRule
    ) -> (String, @Sendable (StoreView) throws -> (ChangeSet, Int)) {
        let configuration = configuration()
        switch target {
        case let .object(key, mustExist, revision):
            return ("delete \(key)", { view in
                guard try view.exists(key) else {
                    if mustExist { throw GarageError.failedToRetrieveObject(key.typeName, key.identifier) }
                    return (ChangeSet(), 0)
                }
                var check: WriteCheck?
                if let revision {
                    // A stale copy is refused as a stale park is: the delete would undo a newer version.
                    let row = try? view.row(key, for: .metadata)
                    let stored = row?.copyRevision
                    if let stored, stored != revision {
                        throw GarageError.staleObject(typeName: key.typeName, identifier: key.identifier,
                                                      parkedRevision: revision, storedRevision: stored)
                    }
                    let committed = view.pending?.touches(key) == true
                        ? try? view.statements.row(key, for: .metadata)?.revision : row?.revision
                    check = WriteCheck(revision: committed, parkedRevision: revision)
                }
                let references = try view.references(toType: key.typeName, identifier: key.identifier)
                var changes = try rule.referrerChanges(for: references, omitting: { $0 == key }, in: view,
                                                       configuration: configuration)
                changes.record(.delete, for: key, check: check)
                changes.recordDeletion(of: key, DeletionCheck { references, view in
                    try rule.referrerChanges(for: references, omitting: { $0 == key }, in: view, configuration: configuration)
                })
                return (changes, 1)
            })
        case let .type(type):
            return ("delete all \(type)", { view in
                let count = try view.count(ofType: type)
                // Referrers of the same type go with the others.
                let references = try view.references(toType: type).filter { $0.from.typeName != type }
                var changes = try rule.referrerChanges(for: references, omitting: { $0.typeName == type }, in: view,
                                                       configuration: configuration)
                changes.record(.deleteAll(type: type))
                changes.recordDeletion(of: ObjectKey(typeName: type, identifier: ""), DeletionCheck { references, view in
                    try rule.referrerChanges(for: references, omitting: { $0.typeName == type }, in: view,
                                             configuration: configuration)
                })
                return (changes, count)
            })
        }
    }

    static var deletingAllObjects: ChangeSet {
        var changes = ChangeSet()
        changes.record(.deleteAll(type: nil))
        return changes
    }

    /// The tombstones of `typeNames` that ``purgeSyncedTombstones()-96a7d`` forgets.
    func purgeSyncedTombstones(ofTypes typeNames: [String]) async throws -> Int {
        try await run(store.purgingSyncedTombstones(ofTypes: typeNames))
    }

    func listingReferrers(_ key: ObjectKey) -> StoreWork<[ObjectKey]> {
        reading("list the referrers of \(key)") { view in try view.referrers(of: key) }
    }

    /// - throws: ``GarageError/ambiguousMigration(oldName:type:otherType:)`` when another type
    ///   of this process is stored under `oldName`: its objects would move too.
    func migrating<T>(from oldName: String, to type: T.Type) throws -> (String, ChangeSet, @Sendable (StoreView) throws -> Int) {
        let typeName = try storedTypeName(T.self, listing: "move objects to")
        if oldName != typeName { try Identity.checkCanMigrate(from: oldName, to: T.self) }
        return migrating(from: oldName, toTypeName: typeName)
    }

    /// The changes that move every object of `oldName` to `typeName`, and their check.
    func migrating(from oldName: String, toTypeName typeName: String) -> (String, ChangeSet, @Sendable (StoreView) throws -> Int) {
        var changes = ChangeSet()
        if oldName != typeName {
            changes.record(.renameType(from: oldName, to: typeName), resealing: resealer())
        }
        let encryption = configuration().encryption
        return ("move \(oldName) to \(typeName)", changes, { view in
            guard oldName != typeName else { return 0 }
            try Self.checkResealable(oldName, to: typeName, in: view, with: encryption)
            return try view.count(ofType: oldName)
        })
    }

    /// Re-encrypts the encrypted rows a rename moves for their new type, with the garage's
    /// delegate when the rename is written (not when it is recorded: the delegate may change
    /// meanwhile).
    func resealer() -> RowResealer {
        // Weakly: the changes that hold it are the garage's own (no cycle through them).
        RowResealer { [weak self] data, old, new in
            guard let self else {
                throw GarageError.missingEncryptionDelegate(typeName: old.typeName, identifier: old.identifier)
            }
            return try configuration().encryption.reseal(data, from: old, to: new)
        }
    }

    /// Throws, naming it, for the first encrypted row of `oldName` that `encryption` can't
    /// re-encrypt for `newName`: the rename is refused when it is recorded, rather than when
    /// it is written (where it would fail every save after it).
    static func checkResealable(_ oldName: String, to newName: String, in view: StoreView,
                                with encryption: EncryptionStage) throws {
        for read in try view.rows(ofType: oldName) {
            guard case .row(let row) = read, row.isEncrypted else { continue }
            _ = try encryption.reseal(row.data, from: row.sealedFor ?? row.key,
                                      to: ObjectKey(typeName: newName, identifier: row.key.identifier))
        }
    }

}
