import Foundation

/// What a store holds, per type, and what its sync jobs have left to do: what
/// ``Garage/statistics()-4mask`` returns.
///
/// ```swift
/// let statistics = try garage.statistics()
/// for type in statistics.types where type.countsByStatus[.notSynced, default: 0] > 0 {
///     print(type.typeName, type.countsByStatus[.notSynced]!, "to upload since", type.oldestUnsyncedChange!)
/// }
/// ```
public struct StoreStatistics: Sendable, Hashable {
    /// The store file's path (a PostgreSQL garage's address: `postgres://user@host:port/database?schema=schema`),
    /// or `nil` in memory.
    public var path: String?
    /// The store's format version (a PostgreSQL schema's is its own: `GarageEngine.postgresFormatVersion`
    /// in the `GarageLitePostgres` product).
    public var formatVersion: Int
    /// The size of the store file, and of its write-ahead log (`-wal`), in bytes; 0 when there
    /// is none. On PostgreSQL: the size of the schema's tables and indexes, and 0.
    public var fileSize: Int
    public var logSize: Int
    /// Whether the store is locked with a key (its objects are encrypted).
    public var isEncrypted: Bool
    /// Each type's figures, in type name order.
    public var types: [TypeStatistics]

    /// Makes one of the given values, each stored as given.
    package init(
        path: String? = nil,
        formatVersion: Int,
        fileSize: Int,
        logSize: Int,
        isEncrypted: Bool,
        types: [TypeStatistics]
    ) {
        self.path = path
        self.formatVersion = formatVersion
        self.fileSize = fileSize
        self.logSize = logSize
        self.isEncrypted = isEncrypted
        self.types = types
    }
}

/// The figures of one type of a store (``StoreStatistics``).
public struct TypeStatistics: Sendable, Hashable {
    /// The type name.
    public var typeName: String
    /// The objects (tombstones excepted).
    public var count = 0
    /// The objects per sync status (tombstones excepted); a status without objects is absent.
    public var countsByStatus: [SyncStatus: Int] = [:]
    /// The objects (and tombstones) a sync job's claim holds now.
    public var openClaims = 0
    /// The objects (and tombstones) held back after ``Garage/maximumUploadAttempts`` failed
    /// uploads, and not claimed (as ``Garage/heldObjects(_:)-1a0n`` lists them).
    public var heldObjects = 0
    /// The tombstones: deleted objects whose deletion a sync job has yet to upload.
    public var tombstones = 0
    /// The modification date of the oldest change a sync job has yet to upload (a `.notSynced`
    /// object or tombstone), or `nil`.
    public var oldestUnsyncedChange: Date?
    /// The bytes of the objects' stored data (encrypted, when it is), and of the content the
    /// tombstones keep until their deletion is uploaded.
    public var dataSize = 0
    /// The objects stored encrypted (by the store's key, or by a ``DataEncryptionDelegate``).
    public var encryptedCount = 0

    /// Empty figures for `typeName`.
    public init(typeName: String) {
        self.typeName = typeName
    }
}
