import Foundation

/// One stored object as its row holds it: its JSON and every fact the garage keeps about it.
///
/// Records are what tools see of a store without the app's Swift types: the `garage`
/// command-line tool lists, shows, exports and imports them. Read them with
/// ``Garage/records(ofType:after:limit:)-4cy6i``, write them into another store with
/// ``Garage/importRecords(_:)-233of``:
///
/// ```swift
/// var after: ObjectKey?
/// while case let page = try source.records(after: after), !page.isEmpty {
///     try destination.importRecords(page)
///     after = page.last?.key
/// }
/// ```
///
/// A record read from an encrypted store holds the decrypted JSON; importing it into an
/// encrypted store encrypts it again.
public struct ObjectRecord: Sendable, Hashable {
    /// The object's type name (``ObjectKey/typeName``).
    public var typeName: String
    /// The identifier the object is parked under.
    public var identifier: String
    /// The object's JSON, as the garage wrote it (decrypted); empty for a tombstone. When
    /// ``isEncrypted``, the stored ciphertext instead.
    public var json: String
    /// Whether ``json`` holds the stored ciphertext rather than JSON: the object is encrypted,
    /// and the garage that read it has no key or ``DataEncryptionDelegate`` to decrypt it (a
    /// store GarageStorage's delegate encrypted, read by a tool). Importing such a record writes
    /// the ciphertext as it is, for a garage with that delegate to read.
    public var isEncrypted: Bool
    /// The object's sync status.
    public var syncStatus: SyncStatus
    /// When the object was first parked.
    public var creationDate: Date
    /// When the object's content last changed.
    public var modificationDate: Date
    /// 1 when first parked, then one more on every park that changed the content.
    public var revision: Int64
    /// Whether the object was ever parked directly, rather than only as a reference:
    /// garbage collection never deletes one.
    public var isRoot: Bool
    /// The objects this one references (its JSON holds a stub for each).
    public var references: [ObjectKey]
    /// Whether the record is a tombstone: the object was deleted, and a sync job must still
    /// tell the server.
    public var isDeleted: Bool
    /// Whether a copy of the object may be on the server, so that deleting it leaves a tombstone.
    public var isRemote: Bool
    /// When a sync job claimed the object, while its claim lasts. Records are imported without
    /// their claims.
    public var claimDate: Date?
    /// How many uploads of the object failed since it last changed or synced.
    public var attempts: Int
    /// The error of the last failed upload, while ``attempts`` counts it.
    public var lastError: String?
    /// Until when claims skip the object after a failed upload, or `nil`.
    public var retryDate: Date?

    /// The record's key: its type name and identifier.
    public var key: ObjectKey { ObjectKey(typeName: typeName, identifier: identifier) }

    /// A record of the object `key` with `json`, as a first park writes it: revision 1,
    /// created and modified `date`, a root referencing nothing, `syncStatus`.
    public init(key: ObjectKey, json: String, syncStatus: SyncStatus = .undetermined, date: Date = Date()) {
        self.typeName = key.typeName
        self.identifier = key.identifier
        self.json = json
        self.isEncrypted = false
        self.syncStatus = syncStatus
        self.creationDate = date
        self.modificationDate = date
        self.revision = 1
        self.isRoot = true
        self.references = []
        self.isDeleted = false
        self.isRemote = false
        self.claimDate = nil
        self.attempts = 0
        self.lastError = nil
        self.retryDate = nil
    }
}

/// What ``Garage/importRecords(_:)-233of`` did.
public struct RecordImportReport: Sendable, Hashable, CustomStringConvertible {
    /// The records written, per type name.
    public var imported: [String: Int]
    /// The records left out because the garage had a row with their key already (a tombstone
    /// too), per type name: that row was left as it is.
    public var alreadyInGarage: [String: Int]

    /// "Imported 3 objects (Person: 2, Note: 1); 1 already in the garage, left as it was (Person: 1)."
    public var description: String {
        func list(_ counts: [String: Int]) -> String {
            counts.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: ", ")
        }
        let importedCount = imported.values.reduce(0, +)
        var text = "Imported \(importedCount) object\(importedCount == 1 ? "" : "s")"
        if importedCount > 0 { text += " (\(list(imported)))" }
        let presentCount = alreadyInGarage.values.reduce(0, +)
        if presentCount > 0 {
            text += "; \(presentCount) already in the garage, left as \(presentCount == 1 ? "it was" : "they were")"
                + " (\(list(alreadyInGarage)))"
        }
        return text + "."
    }

    /// Makes one of the given values, each stored as given.
    package init(imported: [String: Int], alreadyInGarage: [String: Int]) {
        self.imported = imported
        self.alreadyInGarage = alreadyInGarage
    }
}
