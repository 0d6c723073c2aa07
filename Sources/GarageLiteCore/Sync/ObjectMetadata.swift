import Foundation

/// What the garage records about a parked object besides its content.
public struct ObjectMetadata: Sendable, Hashable {
    /// The type name of the object, as ``ObjectKey/typeName``.
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
    /// How many uploads of the object failed since it last changed or synced (see
    /// ``Garage/release(_:retryAfter:error:)-8n7ea``); at ``Garage/maximumUploadAttempts`` it
    /// is held.
    public var attempts: Int
    /// The error of the last failed upload, while ``attempts`` counts it.
    public var lastError: String?
    /// Until when claims skip the object after a failed upload, or `nil`.
    public var retryDate: Date?
    /// The server's version of the object that this one is based on, as a ``SyncEngine``'s
    /// transport gave it (with a download, or an accepted upload); `nil` when it never reached
    /// the server through one.
    public var serverVersion: String?
}
