import Foundation
import GarageLiteCore

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
    /// ``delete(_:identifier:rule:)-14x5x``) without blocking the calling thread.
    @discardableResult
    public nonisolated(nonsending) func delete<T, ID: GarageIdentifier>(
        _ type: T.Type, identifier: ID, rule: DeleteRule? = nil
    ) async throws -> Bool {
        try await delete(try key(T.self, identifier: identifier), rule: rule ?? deleteRule) > 0
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

    /// The objects that reference `object` (see ``referrers(of:)-bseu``), without blocking
    /// the calling thread.
    public nonisolated(nonsending) func referrers<T: Encodable>(of object: T) async throws -> [ObjectKey] {
        try await run(listingReferrers(try key(of: object, for: "list the referrers of")))
    }

    /// The objects that reference the object of type `T` parked under `identifier` (see
    /// ``referrers(of:)-bseu``).
    ///
    /// ```swift
    /// let referrers = try garage.referrers(of: Note.self, identifier: "n1")
    /// ```
    public func referrers<T, ID: GarageIdentifier>(of type: T.Type, identifier: ID) throws -> [ObjectKey] {
        try run(listingReferrers(ObjectKey(typeName: try storedTypeName(T.self), identifier: try Identity.string(fromID: identifier))))
    }

    /// The objects that reference the object of type `T` parked under `identifier` (see
    /// ``referrers(of:identifier:)-1hcxq``), without blocking the calling thread.
    public nonisolated(nonsending) func referrers<T, ID: GarageIdentifier>(of type: T.Type, identifier: ID) async throws -> [ObjectKey] {
        try await run(listingReferrers(ObjectKey(typeName: try storedTypeName(T.self), identifier: try Identity.string(fromID: identifier))))
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
}
