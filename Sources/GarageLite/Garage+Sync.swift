import Foundation
import GarageLiteCore

// Sync status: reading and changing it, retrieving and counting objects by status, and each
// row's metadata. Sync jobs' claims are in Garage+Claims.swift.
extension Garage {
    /// Sets the sync status of `object`'s row. The object itself is not changed.
    ///
    /// ```swift
    /// try garage.setSyncStatus(.synced, for: person)
    /// ```
    ///
    /// - throws: ``GarageError/failedToRetrieveObject(_:_:)`` when it is not parked.
    public func setSyncStatus<T: Syncable>(_ syncStatus: SyncStatus, for object: T) throws {
        try setSyncStatus(syncStatus, for: [object])
    }

    /// Sets the sync status of `object`'s row (see ``setSyncStatus(_:for:)-19jfs``) without
    /// blocking the calling thread.
    public nonisolated(nonsending) func setSyncStatus<T: Syncable>(_ syncStatus: SyncStatus, for object: T) async throws {
        try await setSyncStatus(syncStatus, for: [object])
    }

    /// Sets the sync status of the rows of `objects`, all or none.
    ///
    /// A sync job should rather use ``claim(_:limit:status:)-8fs3h`` and ``complete(_:)-26tgn``, which
    /// don't mark an edit made during the upload as synced.
    ///
    /// - throws: ``GarageError/failedToRetrieveObject(_:_:)`` when one of them is not parked;
    ///   no status is changed then.
    public func setSyncStatus<T: Syncable>(_ syncStatus: SyncStatus, for objects: [T]) throws {
        let (operation, changes, check) = try settingStatus(syncStatus, of: objects)
        try record(operation, changes, check: check)
    }

    /// Sets the sync status of the rows of `objects` (see ``setSyncStatus(_:for:)-8k7b7``)
    /// without blocking the calling thread.
    public nonisolated(nonsending) func setSyncStatus<T: Syncable>(_ syncStatus: SyncStatus, for objects: [T]) async throws {
        let (operation, changes, check) = try settingStatus(syncStatus, of: objects)
        try await record(operation, changes, check: check)
    }

    /// The sync status of `object`'s row.
    ///
    /// - throws: ``GarageError/failedToRetrieveObject(_:_:)`` when it is not parked.
    public func syncStatus<T: Syncable>(for object: T) throws -> SyncStatus {
        try metadata(for: object).syncStatus
    }

    /// The sync status of `object`'s row, without blocking the calling thread.
    public nonisolated(nonsending) func syncStatus<T: Syncable>(for object: T) async throws -> SyncStatus {
        try await metadata(for: object).syncStatus
    }

    /// Retrieves the objects of type `T` whose status is `syncStatus`, oldest change first.
    ///
    /// ```swift
    /// let pending = try garage.retrieveAll(Person.self, withStatus: .notSynced)
    /// ```
    public func retrieveAll<T: Decodable & Syncable & SendableMetatype>(_ type: T.Type, withStatus syncStatus: SyncStatus) throws -> [T] {
        try run(retrievingAll(T.self, withStatus: syncStatus))
    }

    /// Retrieves the objects of type `T` whose status is `syncStatus` (see
    /// ``retrieveAll(_:withStatus:)-4p8mc``) without blocking the calling thread.
    public nonisolated(nonsending) func retrieveAll<T: Decodable & Syncable & SendableMetatype>(
        _ type: T.Type, withStatus syncStatus: SyncStatus
    ) async throws -> [T] {
        try await run(retrievingAll(T.self, withStatus: syncStatus))
    }

    // MARK: - Job queries

    /// The identifiers of the objects of type `T` with status `syncStatus`, oldest change first.
    public func identifiers<T>(of type: T.Type, withStatus syncStatus: SyncStatus) throws -> [String] {
        try run(listingIdentifiers(T.self, withStatus: syncStatus))
    }

    /// The identifiers of the objects of type `T` with status `syncStatus`, without blocking
    /// the calling thread.
    public nonisolated(nonsending) func identifiers<T>(of type: T.Type, withStatus syncStatus: SyncStatus) async throws -> [String] {
        try await run(listingIdentifiers(T.self, withStatus: syncStatus))
    }

    /// The number of objects per type name and status, for the given statuses, in one read.
    ///
    /// ```swift
    /// let counts = try garage.syncStatusCounts([.notSynced, .syncing])
    /// counts["Note"]?[.notSynced]      // how many notes wait for upload
    /// ```
    ///
    /// Each status is one range scan of the index on status and type, so the cost grows with
    /// the number of objects with those statuses. Types and statuses with no object are left out.
    public func syncStatusCounts(
        _ statuses: Set<SyncStatus> = Set(SyncStatus.allCases)
    ) throws -> [String: [SyncStatus: Int]] {
        try run(countingPerStatus(statuses))
    }

    /// The number of objects per type name and status (see ``syncStatusCounts(_:)-63ltj``), without
    /// blocking the calling thread.
    public nonisolated(nonsending) func syncStatusCounts(
        _ statuses: Set<SyncStatus> = Set(SyncStatus.allCases)
    ) async throws -> [String: [SyncStatus: Int]] {
        try await run(countingPerStatus(statuses))
    }

    // MARK: - Metadata

    /// What the garage knows of the object of type `T` parked under `identifier` besides its
    /// content; `nil` when there is none.
    ///
    /// ```swift
    /// let info = try garage.metadata(Note.self, identifier: "n1")
    /// info?.revision          // 1, then one more for every parked change of content
    /// ```
    public func metadata<T, ID: GarageIdentifier>(_ type: T.Type, identifier: ID) throws -> ObjectMetadata? {
        try run(readingMetadata(ObjectKey(typeName: storedTypeName(T.self), identifier: Identity.string(fromID: identifier))))
    }

    /// What the garage knows of an object besides its content (see
    /// ``metadata(_:identifier:)-7wod8``), without blocking the calling thread.
    public nonisolated(nonsending) func metadata<T, ID: GarageIdentifier>(_ type: T.Type, identifier: ID) async throws -> ObjectMetadata? {
        try await run(readingMetadata(ObjectKey(typeName: storedTypeName(T.self), identifier: Identity.string(fromID: identifier))))
    }

    /// What the garage knows of `object`'s row besides its content.
    ///
    /// - throws: ``GarageError/failedToRetrieveObject(_:_:)`` when it is not parked.
    public func metadata<T>(for object: T) throws -> ObjectMetadata {
        let key = try key(of: object, for: "read the metadata of")
        return try Self.required(run(readingMetadata(key)), key)
    }

    /// What the garage knows of `object`'s row besides its content (see ``metadata(for:)-3eft1``),
    /// without blocking the calling thread.
    public nonisolated(nonsending) func metadata<T>(for object: T) async throws -> ObjectMetadata {
        let key = try key(of: object, for: "read the metadata of")
        return try Self.required(await run(readingMetadata(key)), key)
    }
}
