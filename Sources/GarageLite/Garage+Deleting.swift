import Foundation

// Deleting objects under a delete rule, finding the objects that reference an object, and
// renaming a type: thin entry points, each pair running one description of its work
// synchronously or asynchronously.
extension Garage {
    // MARK: - Deleting

    /// Deletes `object`, applying `rule` (by default the garage's ``deleteRule``,
    /// ``DeleteRule/deny`` unless set) to the objects that reference it. Objects it
    /// references stay parked.
    ///
    /// ```swift
    /// try garage.delete(person)
    /// try garage.delete(note, rule: .nullify(in: Notebook.self))
    /// ```
    ///
    /// When a copy of the object may be on the server (its row was claimed, or `.synced`,
    /// once), its row becomes a tombstone: gone from every read, but listed in the next claim's
    /// ``Claim/deletions`` for the sync job to upload. Otherwise the row goes.
    ///
    /// - parameter object: The object to delete, as parked (its type and identifier name its
    ///   row; a ``Revisioned`` copy's revision must be its row's).
    /// - parameter rule: What happens to the objects that reference it (see ``DeleteRule``);
    ///   `nil`: the garage's ``deleteRule``.
    /// - throws: ``GarageError/failedToRetrieveObject(_:_:)`` when it is not parked (as in
    ///   GarageStorage); ``GarageError/deleteDenied(typeName:identifier:referrers:)`` when other
    ///   objects reference it and the rule is ``DeleteRule/deny``; the errors of
    ///   ``DeleteRule/nullify(in:)``. When it throws, nothing was deleted.
    public func delete<T: Encodable>(_ object: T, rule: DeleteRule? = nil) throws {
        _ = try delete(.object(try key(of: object, for: "delete"), mustExist: true,
                               revision: ProvisionalRevisions.resolve((object as? any Revisioned)?.revision)), rule: rule ?? deleteRule)
    }

    /// Deletes `object` (see ``delete(_:rule:)-3d3et``) without blocking the calling thread.
    public nonisolated(nonsending) func delete<T: Encodable>(_ object: T, rule: DeleteRule? = nil) async throws {
        _ = try await delete(.object(try key(of: object, for: "delete"), mustExist: true,
                                     revision: ProvisionalRevisions.resolve((object as? any Revisioned)?.revision)),
                             rule: rule ?? deleteRule)
    }

    /// Deletes the object of type `T` parked under `identifier`, without retrieving it first,
    /// applying `rule` (by default the garage's ``deleteRule``) to the objects that reference
    /// it; returns whether there was one. Objects it references stay parked.
    ///
    /// ```swift
    /// try garage.delete(Note.self, identifier: "n1")
    /// try garage.delete(Note.self, identifier: "n1", rule: .nullify(in: Notebook.self))
    /// ```
    ///
    /// - parameter type: The type of the object, which names its rows.
    /// - parameter identifier: A `String`, `UUID`, `Int` or other `LosslessStringConvertible`.
    /// - parameter rule: What happens to the objects that reference it; `nil`: the garage's
    ///   ``deleteRule``.
    /// - throws: The errors of the rule (see ``delete(_:rule:)-3d3et``).
    @discardableResult
    public func delete<T, ID: GarageIdentifier>(_ type: T.Type, identifier: ID, rule: DeleteRule? = nil) throws -> Bool {
        try delete(try key(T.self, identifier: identifier), rule: rule ?? deleteRule) > 0
    }

    /// Deletes the object of type `T` parked under `identifier` (see
    /// ``delete(_:identifier:rule:)-7rl1b``) without blocking the calling thread.
    @discardableResult
    public nonisolated(nonsending) func delete<T, ID: GarageIdentifier>(
        _ type: T.Type, identifier: ID, rule: DeleteRule? = nil
    ) async throws -> Bool {
        try await delete(try key(T.self, identifier: identifier), rule: rule ?? deleteRule) > 0
    }

    private func key<T, ID: GarageIdentifier>(_ type: T.Type, identifier: ID) throws -> DeletionTarget {
        .object(ObjectKey(typeName: try storedTypeName(T.self), identifier: try Identity.string(fromID: identifier)),
                mustExist: false, revision: nil)
    }

    /// Deletes every object of type `T`, leaving tombstones as ``delete(_:rule:)-3d3et`` does
    /// and applying `rule` (by default the garage's ``deleteRule``) to the objects of other
    /// types that reference them; returns how many there were.
    ///
    /// ```swift
    /// try garage.deleteAll(Person.self)
    /// try garage.deleteAll(Tag.self, rule: .nullify(in: Note.self))
    /// ```
    ///
    /// - parameter type: The type whose objects are deleted.
    /// - parameter rule: What happens to the objects that reference them; `nil`: the
    ///   garage's ``deleteRule``.
    /// - throws: The errors of the rule (see ``delete(_:rule:)-3d3et``), for the first object
    ///   referenced. When it throws, nothing was deleted.
    @discardableResult
    public func deleteAll<T>(_ type: T.Type, rule: DeleteRule? = nil) throws -> Int {
        try delete(.type(try storedTypeName(T.self, listing: "delete all")), rule: rule ?? deleteRule)
    }

    /// Deletes every object of type `T` (see ``deleteAll(_:rule:)-12z6z``) without blocking
    /// the calling thread.
    @discardableResult
    public nonisolated(nonsending) func deleteAll<T>(_ type: T.Type, rule: DeleteRule? = nil) async throws -> Int {
        try await delete(.type(try storedTypeName(T.self, listing: "delete all")), rule: rule ?? deleteRule)
    }

    /// What a delete deletes: one object (which, for GarageStorage's `delete(_:)`, must
    /// exist; a ``Revisioned`` copy's revision, which must be its row's), or every object of a type.
    enum DeletionTarget: Sendable {
        case object(ObjectKey, mustExist: Bool, revision: Int64?)
        case type(String)
    }

    /// Deletes `target` under `rule`; returns how many objects it deleted. Sealed again when
    /// this garage's own rekey changed the key meanwhile (the rule's rewrites are sealed).
    private func delete(_ target: DeletionTarget, rule: DeleteRule) throws -> Int {
        try run(deleting(target, rule: rule))
    }

    /// Deletes `target` under `rule` (see the synchronous variant) without blocking the calling thread.
    private nonisolated(nonsending) func delete(_ target: DeletionTarget, rule: DeleteRule) async throws -> Int {
        try await run(deleting(target, rule: rule))
    }

    func deleting(_ target: DeletionTarget, rule: DeleteRule) -> StoreCall<Int> {
        sealingWithCurrentKey { self.recording(self.deletion(target, rule: rule)) }
    }

    /// Deletes the object of type `T` parked under `identifier` with the garage's
    /// ``deleteRule``; returns whether there was one (see ``delete(_:identifier:rule:)-7rl1b``).
    func deleting<T, ID: GarageIdentifier>(_ type: T.Type, identifier: ID) -> StoreCall<Bool> {
        .starting { deleting(try key(T.self, identifier: identifier), rule: deleteRule).map { $0 > 0 } }
    }

    /// The work of one delete: its name, and what prepares its changes on the store as the
    /// call sees it (inside the write transaction when it writes to the store): the rule's
    /// changes to the referrers, then the deletion. Its result is how many objects it deletes.
    private func deletion(
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

    /// Deletes every object of every type; returns how many there were.
    ///
    /// This is a local reset, as when a user logs out: it leaves no tombstones, so no sync job
    /// will tell the server. To delete objects the server must forget, use ``delete(_:rule:)-3d3et``
    /// or ``deleteAll(_:rule:)-12z6z``.
    @discardableResult
    public func deleteAllObjects() throws -> Int {
        try record("delete all objects", Self.deletingAllObjects, check: { try $0.count() })
    }

    /// Deletes every object of every type (see ``deleteAllObjects()-6s113``) without blocking the
    /// calling thread.
    @discardableResult
    public nonisolated(nonsending) func deleteAllObjects() async throws -> Int {
        try await record("delete all objects", Self.deletingAllObjects, check: { try $0.count() })
    }

    private static var deletingAllObjects: ChangeSet {
        var changes = ChangeSet()
        changes.record(.deleteAll(type: nil))
        return changes
    }

    // MARK: - Tombstones

    /// Forgets the deletions the server has and nothing reads any more; returns how many.
    ///
    /// Deleting an object that may be on the server leaves a tombstone, for a sync job to
    /// upload the deletion. Once the server has it (the claim completed it, or the deletion
    /// was downloaded), the tombstone is `.synced`; it stays only while another object still
    /// references the deleted one, so that the referrer reads as it was (see
    /// <doc:Syncing>). This removes those tombstones once no object references them any more.
    /// A tombstone still to upload, or held by a claim, stays.
    ///
    /// ```swift
    /// let forgotten = try garage.purgeSyncedTombstones()
    /// ```
    ///
    /// ``SyncEngine`` calls it for its types after a sync, at most once per
    /// ``SyncEngine/Configuration/tombstonePurgeInterval``; a sync job of the app's own may call
    /// it after its downloads. No observer is told: the objects were deleted already.
    @discardableResult
    public func purgeSyncedTombstones() throws -> Int {
        try run(store.purgingSyncedTombstones(ofTypes: nil))
    }

    /// Forgets the deletions the server has and nothing reads any more (see
    /// ``purgeSyncedTombstones()-96a7d``), without blocking the calling thread.
    @discardableResult
    public nonisolated(nonsending) func purgeSyncedTombstones() async throws -> Int {
        try await run(store.purgingSyncedTombstones(ofTypes: nil))
    }

    /// The tombstones of `typeNames` that ``purgeSyncedTombstones()-96a7d`` forgets.
    func purgeSyncedTombstones(ofTypes typeNames: [String]) async throws -> Int {
        try await run(store.purgingSyncedTombstones(ofTypes: typeNames))
    }

    // MARK: - Referrers

    /// The objects that reference `object` (not itself), in type and identifier order: those
    /// a delete with ``DeleteRule/deny`` names, and ``DeleteRule/nullify(in:)`` changes.
    ///
    /// ```swift
    /// for key in try garage.referrers(of: note) {
    ///     print(key)            // Notebook(b1)
    /// }
    /// ```
    ///
    /// The store keeps an index of references: this reads the index, not the objects.
    public func referrers<T: Encodable>(of object: T) throws -> [ObjectKey] {
        try run(listingReferrers(try key(of: object, for: "list the referrers of")))
    }

    /// The objects that reference `object` (see ``referrers(of:)-3abtn``), without blocking
    /// the calling thread.
    public nonisolated(nonsending) func referrers<T: Encodable>(of object: T) async throws -> [ObjectKey] {
        try await run(listingReferrers(try key(of: object, for: "list the referrers of")))
    }

    /// The objects that reference the object of type `T` parked under `identifier` (see
    /// ``referrers(of:)-3abtn``).
    ///
    /// ```swift
    /// let referrers = try garage.referrers(of: Note.self, identifier: "n1")
    /// ```
    public func referrers<T, ID: GarageIdentifier>(of type: T.Type, identifier: ID) throws -> [ObjectKey] {
        try run(listingReferrers(ObjectKey(typeName: try storedTypeName(T.self), identifier: try Identity.string(fromID: identifier))))
    }

    /// The objects that reference the object of type `T` parked under `identifier` (see
    /// ``referrers(of:identifier:)-i1l5``), without blocking the calling thread.
    public nonisolated(nonsending) func referrers<T, ID: GarageIdentifier>(of type: T.Type, identifier: ID) async throws -> [ObjectKey] {
        try await run(listingReferrers(ObjectKey(typeName: try storedTypeName(T.self), identifier: try Identity.string(fromID: identifier))))
    }

    private func listingReferrers(_ key: ObjectKey) -> StoreWork<[ObjectKey]> {
        reading("list the referrers of \(key)") { view in try view.referrers(of: key) }
    }

    // MARK: - Renaming

    /// Moves every object parked under the type name `oldClassName` to type `T`, for a type
    /// that was renamed; returns how many moved. An object of type `T` with the same
    /// identifier is replaced. References to the moved objects keep working.
    ///
    /// ```swift
    /// try garage.migrateAll(fromOldClassName: "Employee", to: Person.self)
    /// ```
    @discardableResult
    public func migrateAll<T>(fromOldClassName oldClassName: String, to type: T.Type) throws -> Int {
        let (operation, changes, check) = try migrating(from: oldClassName, to: T.self)
        return try record(operation, changes, check: check)
    }

    /// Moves every object parked under `oldClassName` to type `T` (see
    /// ``migrateAll(fromOldClassName:to:)-73yt5``) without blocking the calling thread.
    @discardableResult
    public nonisolated(nonsending) func migrateAll<T>(fromOldClassName oldClassName: String, to type: T.Type) async throws -> Int {
        let (operation, changes, check) = try migrating(from: oldClassName, to: T.self)
        return try await record(operation, changes, check: check)
    }

    /// - throws: ``GarageError/ambiguousMigration(oldName:type:otherType:)`` when another type
    ///   of this process is stored under `oldName`: its objects would move too.
    private func migrating<T>(from oldName: String, to type: T.Type) throws -> (String, ChangeSet, @Sendable (StoreView) throws -> Int) {
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
