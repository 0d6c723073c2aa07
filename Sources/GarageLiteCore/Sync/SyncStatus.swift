/// Where an object stands with respect to a remote service.
///
/// Every row of a garage carries a sync status. A ``Syncable`` object gets its
/// ``Syncable/syncStatus`` stored in its row when it is parked, and set from the
/// row when it is retrieved.
///
/// The raw values are part of the file format: they are stored as integers.
public enum SyncStatus: Int, Codable, Sendable, CaseIterable {
    /// The status was never set. Rows of non-``Syncable`` types stay here.
    case undetermined = 0
    /// The object has local changes the remote service has not seen.
    case notSynced = 1
    /// A sync job is uploading the object.
    case syncing = 2
    /// The remote service has the object as stored.
    case synced = 3
}

/// An object whose sync status the garage tracks.
///
/// ```swift
/// struct Note: Mappable, Syncable {
///     var id: String
///     var text: String
///     var syncStatus: SyncStatus = .notSynced
/// }
///
/// try garage.park(note)                                   // the row gets .notSynced
/// let pending: [Note] = try garage.retrieveAll(withStatus: .notSynced)
/// ```
///
/// The garage keeps the status in the row: in the object's JSON, the `syncStatus` property is
/// written as `.undetermined`. Parking an object whose only change is its status does not
/// change its stored content, and a `Hashable` object keeps the same identifier whatever its
/// status.
public protocol Syncable {
    /// The sync status of the object.
    var syncStatus: SyncStatus { get set }
}

extension Syncable {
    /// Returns a copy with the given status. For a class, sets it on the instance.
    package func settingSyncStatus(_ status: SyncStatus) -> Self {
        var copy = self
        copy.syncStatus = status
        return copy
    }
}
