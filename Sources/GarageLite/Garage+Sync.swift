import Foundation
import GRDB

// Sync status: reading and changing it, and retrieving objects by status.
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
    /// - throws: ``GarageError/failedToRetrieveObject(_:_:)`` when one of them is not parked;
    ///   no status is changed then.
    public func setSyncStatus<T: Syncable>(_ syncStatus: SyncStatus, for objects: [T]) throws {
        let keys = try objects.map { try key(of: $0) }
        var changes = ChangeSet()
        for key in keys {
            changes.record(.setSyncStatus(syncStatus), for: key)
        }
        try write(changes) { db, pending in
            for key in keys where try Self.visibleRow(key, in: db, pending: pending) == nil {
                throw GarageError.failedToRetrieveObject(key.type, key.identifier)
            }
        }
    }

    /// The sync status of `object`'s row.
    ///
    /// - throws: ``GarageError/failedToRetrieveObject(_:_:)`` when it is not parked.
    public func syncStatus<T: Syncable>(for object: T) throws -> SyncStatus {
        let key = try key(of: object)
        return try read("read the sync status of \(key)") { db, pending in
            guard let row = try Self.visibleRow(key, in: db, pending: pending) else {
                throw GarageError.failedToRetrieveObject(key.type, key.identifier)
            }
            return row.syncStatus
        }
    }

    /// Retrieves the objects of type `T` whose status is `syncStatus`, oldest change first.
    ///
    /// ```swift
    /// let pending: [Person] = try garage.retrieveAll(withStatus: .notSynced)
    /// ```
    ///
    /// Only rows of type `T` are read (GarageStorage scans every type, and fails on a
    /// store holding several), through the index on type and status.
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
        return try retrieving("retrieve \(typeName) with status \(syncStatus)") { db, pending, decoder in
            let rows: [StoredRow]
            if let pending, pending.touches(type: typeName) {
                rows = try pending.rows(ofType: typeName, in: db, now: Date())
                    .filter { $0.syncStatus == syncStatus }
                    .sorted { ($0.modificationDate, $0.key.identifier) < ($1.modificationDate, $1.key.identifier) }
            } else {
                rows = try Store.rows(db, type: typeName, status: syncStatus)
            }
            return try rows.map { try decoder.decode(T.self, from: $0) }
        }
    }
}
