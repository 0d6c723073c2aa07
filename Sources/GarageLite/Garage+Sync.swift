import Foundation
import GRDB

// Sync status: reading and changing it, retrieving and counting objects by status, and
// each row's metadata. Sync jobs' claims are in Garage+Claims.swift.
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

    /// Sets the sync status of the rows of `objects`, all or none.
    ///
    /// A sync job should rather use ``claim(_:limit:status:)-4xq55`` and ``complete(_:)-26tgn``, which
    /// don't mark an edit made during the upload as synced.
    ///
    /// - throws: ``GarageError/failedToRetrieveObject(_:_:)`` when one of them is not parked;
    ///   no status is changed then.
    public func setSyncStatus<T: Syncable>(_ syncStatus: SyncStatus, for objects: [T]) throws {
        let keys = try objects.map { try key(of: $0) }
        var changes = ChangeSet()
        for key in keys {
            changes.record(.setSyncStatus(syncStatus), for: key)
        }
        try write("set the sync status of \(keys.first?.description ?? "nothing")", changes,
                  check: Self.checkExists(keys))
    }

    /// The sync status of `object`'s row.
    ///
    /// - throws: ``GarageError/failedToRetrieveObject(_:_:)`` when it is not parked.
    public func syncStatus<T: Syncable>(for object: T) throws -> SyncStatus {
        try metadata(for: object).syncStatus
    }

    /// Retrieves the objects of type `T` whose status is `syncStatus`, oldest change first.
    ///
    /// ```swift
    /// let pending: [Person] = try garage.retrieveAll(withStatus: .notSynced)
    /// ```
    ///
    /// Only rows of type `T` are read (GarageStorage scans every type, and fails on a
    /// store holding several), through the index on status and type.
    public func retrieveAll<T: Decodable & Syncable>(withStatus syncStatus: SyncStatus) throws -> [T] {
        try retrieveAll(T.self, withStatus: syncStatus)
    }

    /// Retrieves the objects of type `T` whose status is `syncStatus`, oldest change first.
    ///
    /// ```swift
    /// let pending = try garage.retrieveAll(Person.self, withStatus: .notSynced)
    /// ```
    public func retrieveAll<T: Decodable & Syncable>(_ type: T.Type, withStatus syncStatus: SyncStatus) throws -> [T] {
        let typeName = Identity.typeName(T.self)
        let configuration = configuration()
        return try read("retrieve \(typeName) with status \(syncStatus)") { db, pending in
            let decoder = Self.decoder(db, pending, configuration)
            return try Self.visibleRows(ofType: typeName, status: syncStatus, in: db, pending: pending)
                .map { try decoder.decode(T.self, from: $0) }
        }
    }

    // MARK: - Job queries

    /// The number of objects of type `T` with status `syncStatus`, counted in the index: the
    /// cost grows with the number of such objects, not with the size of the store.
    ///
    /// ```swift
    /// let backlog = try garage.count(Note.self, withStatus: .notSynced)
    /// ```
    public func count<T>(_ type: T.Type, withStatus syncStatus: SyncStatus) throws -> Int {
        let typeName = Identity.typeName(T.self)
        return try read("count \(typeName) with status \(syncStatus)") { db, pending in
            if let pending, pending.touches(type: typeName) {
                return try Self.visibleRows(ofType: typeName, status: syncStatus, in: db, pending: pending).count
            }
            return try Store.count(db, type: typeName, status: syncStatus)
        }
    }

    /// The identifiers of the objects of type `T` with status `syncStatus`, oldest change first.
    public func identifiers<T>(of type: T.Type, withStatus syncStatus: SyncStatus) throws -> [String] {
        let typeName = Identity.typeName(T.self)
        return try read("list identifiers of \(typeName) with status \(syncStatus)") { db, pending in
            if let pending, pending.touches(type: typeName) {
                return try Self.visibleRows(ofType: typeName, status: syncStatus, in: db, pending: pending)
                    .map(\.key.identifier)
            }
            return try Store.identifiers(db, type: typeName, status: syncStatus)
        }
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
        try read("count objects per type and status") { db, pending in
            var counts: [String: [SyncStatus: Int]] = [:]
            for status in statuses {
                for (type, count) in try Store.countsPerType(db, status: status) {
                    counts[type, default: [:]][status] = count
                }
            }
            guard let pending else { return counts }
            for type in try pending.types(in: db).union(counts.keys) where pending.touches(type: type) {
                var perStatus: [SyncStatus: Int] = [:]
                for row in try pending.rows(ofType: type, in: db, now: Date()) where statuses.contains(row.syncStatus) {
                    perStatus[row.syncStatus, default: 0] += 1
                }
                counts[type] = perStatus.isEmpty ? nil : perStatus
            }
            return counts
        }
    }

    // MARK: - Metadata

    /// What the garage knows of the object of type `T` parked under `identifier` besides its
    /// content; `nil` when there is none.
    ///
    /// ```swift
    /// let info = try garage.metadata(Note.self, identifier: "n1")
    /// info?.revision          // 1, then one more for every parked change of content
    /// ```
    public func metadata<T, ID>(_ type: T.Type, identifier: ID) throws -> ObjectMetadata? {
        let key = RowKey(type: Identity.typeName(T.self), identifier: try Identity.string(fromID: identifier))
        return try read("read the metadata of \(key)") { db, pending in
            try Self.visibleRow(key, in: db, pending: pending).map(ObjectMetadata.init)
        }
    }

    /// What the garage knows of `object`'s row besides its content.
    ///
    /// - throws: ``GarageError/failedToRetrieveObject(_:_:)`` when it is not parked.
    public func metadata<T>(for object: T) throws -> ObjectMetadata {
        let key = try key(of: object)
        guard let metadata = try metadata(T.self, identifier: key.identifier) else {
            throw GarageError.failedToRetrieveObject(key.type, key.identifier)
        }
        return metadata
    }

    /// The rows of `type` with `status` as this call sees them, oldest modification first.
    static func visibleRows(ofType type: String, status: SyncStatus, in db: Database,
                            pending: ChangeSet?) throws -> [StoredRow] {
        guard let pending, pending.touches(type: type) else {
            return try Store.rows(db, type: type, status: status)
        }
        return try pending.rows(ofType: type, in: db, now: Date())
            .filter { $0.syncStatus == status }
            .sorted { $0.modificationDate < $1.modificationDate }
    }
}

/// What the garage records about a parked object besides its content.
public struct ObjectMetadata: Sendable, Hashable {
    /// The type name of the object, `String(describing: T.self)`.
    public var typeName: String
    public var identifier: String
    /// When the object was first parked.
    public var creationDate: Date
    /// When the object's content last changed.
    public var modificationDate: Date
    /// 1 when first parked, then one more on every park that changed the content.
    public var revision: Int64
    public var syncStatus: SyncStatus
    /// Whether the row is stored encrypted by a ``DataEncryptionDelegate``.
    public var isEncrypted: Bool
    /// Whether the object was ever parked directly, rather than only as a reference.
    public var isRoot: Bool
    /// When a sync job claimed the object, while its claim lasts.
    public var claimDate: Date?

    init(_ row: StoredRow) {
        typeName = row.key.type
        identifier = row.key.identifier
        creationDate = row.creationDate
        modificationDate = row.modificationDate
        revision = row.revision
        syncStatus = row.syncStatus
        isEncrypted = row.isEncrypted
        isRoot = row.isRoot
        claimDate = row.claimedAt
    }
}
