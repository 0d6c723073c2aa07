import Foundation

/// What ``Garage/importGarageStorageStore(at:)-1ia5l`` did: the objects it imported, those it
/// left as the garage had them, and the rows it could not take, with the reason.
///
/// ```swift
/// let report = try garage.importGarageStorageStore(at: oldStore)
/// print(report)   // Imported 1,204 objects (Person: 1,200, Address: 4); 2 rows could not be taken: ...
/// ```
public struct ImportReport: Sendable, Equatable, CustomStringConvertible {
    /// The objects imported, per type name.
    public var imported: [String: Int]
    /// The objects the garage had already (parked before the first import of this source),
    /// per type name: left as they are.
    public var alreadyInGarage: [String: Int]
    /// The objects an earlier import of the same source took, per type name (GarageStorage's):
    /// not imported again, whether the garage still has them or not, so that an object deleted,
    /// renamed (``Garage/migrateAll(fromOldClassName:to:)-73yt5``) or changed since stays as the
    /// garage has it. A second import of a source imports only what the first could not take.
    public var alreadyImported: [String: Int]
    /// How many of the imported objects are encrypted: they read with the
    /// ``DataEncryptionDelegate`` that encrypted them in GarageStorage.
    public var encrypted: Int
    /// Whether the encrypted objects were imported without a delegate to check that they
    /// decrypt: set ``Garage/dataEncryptionDelegate`` before importing, so that a row it can't
    /// decrypt (another key) is reported rather than imported.
    public var encryptedUnchecked: Bool
    /// The rows that were not imported, with the reason, in the source's row order.
    public var failures: [ImportFailure]

    /// How many objects were imported.
    public var importedCount: Int { imported.values.reduce(0, +) }

    /// A summary: the counts per type, then every failure.
    public var description: String {
        func counts(_ perType: [String: Int]) -> String {
            perType.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: ", ")
        }
        var text = "Imported \(importedCount) object\(importedCount == 1 ? "" : "s")"
        if !imported.isEmpty { text += " (\(counts(imported)))" }
        if encrypted > 0 {
            text += ", \(encrypted) of them encrypted"
            if encryptedUnchecked { text += " (not checked: no dataEncryptionDelegate was set)" }
        }
        let before = alreadyImported.values.reduce(0, +)
        if before > 0 { text += "; \(before) imported before, skipped (\(counts(alreadyImported)))" }
        let kept = alreadyInGarage.values.reduce(0, +)
        if kept > 0 { text += "; \(kept) already in the garage, left as they are (\(counts(alreadyInGarage)))" }
        if failures.isEmpty { return text + "." }
        return text + "; \(failures.count) row\(failures.count == 1 ? "" : "s") could not be taken:\n"
            + failures.map { "- \($0)" }.joined(separator: "\n")
    }

    /// Makes one of the given values, each stored as given.
    package init(
        imported: [String: Int],
        alreadyInGarage: [String: Int],
        alreadyImported: [String: Int],
        encrypted: Int,
        encryptedUnchecked: Bool,
        failures: [ImportFailure]
    ) {
        self.imported = imported
        self.alreadyInGarage = alreadyInGarage
        self.alreadyImported = alreadyImported
        self.encrypted = encrypted
        self.encryptedUnchecked = encryptedUnchecked
        self.failures = failures
    }
}

/// A row of a GarageStorage store that was not imported.
public struct ImportFailure: Sendable, Hashable, CustomStringConvertible {
    /// The row's Core Data primary key (`Z_PK`), which finds it in the source file.
    public var rowID: Int64
    /// The object's type name and identifier, when the row has them.
    public var key: ObjectKey?
    /// Why it was not imported.
    public var reason: String

    /// `row 12 (Person(Sam)): reason`.
    public var description: String {
        "row \(rowID)\(key.map { " (\($0))" } ?? ""): \(reason)"
    }

    /// Makes one of the given values, each stored as given.
    package init(rowID: Int64, key: ObjectKey? = nil, reason: String) {
        self.rowID = rowID
        self.key = key
        self.reason = reason
    }
}
